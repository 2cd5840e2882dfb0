"""Learning: ELM family, SS-ELM, LapSVM, graphs, ACA/HACA, clustering, artifacts, evaluation."""

from ._artifact import Detector, load_model, save_model
from ._elm import ELMClassifier, hidden_output, hidden_weights
from ._elmclr import ELMCLR
from ._elmjec import ELMJEC
from ._graph import knn_graph, laplacian
from ._labelling import (
    FEATURE_SETS, WindowLabels, label_windows, make_clusterer,
)
from ._lapsvm import LapSVMClassifier, rbf_kernel
from ._selection import lapsvm_grid_search, sselm_grid_search
from ._smoothing import DecisionSmoother, smooth_decisions
from ._sselm import SSELMClassifier
from ._svm import SVMClassifier
from ._tsvm import TSVMClassifier
from ._uselm import USELM
from ._aca import ACA, Segmentation
from ._dtak import dtak, gdtak, segment_kernel_matrix
from ._haca import HACA, driving_segmenter, segment_drive, standardize_windows
from ._kernels import frame_kernel, gaussian_bandwidth
from ._online_segmenter import (
    SEGMENT_DTYPE, OnlineSegmenter, SegmentPrototypes, fit_segment_prototypes,
)
from ._metrics import (
    accuracy, binary_scores, clustering_accuracy, clustering_accuracy_many_to_one,
    clustering_g_mean, detection_delays, false_alarms_per_hour, g_mean, sensitivity, specificity,
)
from ._protocol import (
    MODELS, ModelSpec, evaluate_cohort, evaluate_driver, make_splits, model_specs, paired_tests,
    summarise, sweep,
)
from ._report import run_evaluation
from ._training import predict_windows, read_labels, train_detector, train_model, training_windows

__all__ = [
    "knn_graph", "laplacian", "hidden_weights", "hidden_output", "ELMClassifier", "SSELMClassifier",
    "LapSVMClassifier", "rbf_kernel", "TSVMClassifier", "SVMClassifier", "Detector", "save_model",
    "load_model",
    "DecisionSmoother", "smooth_decisions", "sselm_grid_search", "lapsvm_grid_search",
    "accuracy", "sensitivity", "specificity", "g_mean", "binary_scores", "clustering_accuracy",
    "clustering_accuracy_many_to_one", "clustering_g_mean", "detection_delays",
    "false_alarms_per_hour",
    "MODELS", "ModelSpec", "make_splits", "model_specs", "evaluate_driver", "evaluate_cohort",
    "summarise", "paired_tests", "sweep", "run_evaluation", "training_windows", "train_detector",
    "train_model", "predict_windows", "read_labels",
    "ACA", "HACA", "Segmentation", "dtak", "gdtak", "segment_kernel_matrix", "frame_kernel",
    "gaussian_bandwidth", "SEGMENT_DTYPE", "OnlineSegmenter", "SegmentPrototypes", "segment_drive",
    "driving_segmenter", "standardize_windows", "fit_segment_prototypes",
    "USELM", "ELMJEC", "ELMCLR", "label_windows", "make_clusterer", "WindowLabels",
    "FEATURE_SETS",
]
