"""Detectors: ELM family, SS-ELM, LapSVM, SVM, TSVM, graphs, selection, training, artifacts."""

from ._artifact import (
    DEFAULT_MODEL_PATH, SUBMODELS, Choice, Detector, fallback_extra, load_model, save_model,
)
from ._cohort import (
    CohortFit, adapt_detector, adapt_rows, adaptation_obstacle, fit_cohort, stratified_subset,
    thin_windows, train_cohort,
)
from ._decision import (
    LOSS_FEATURE, UNDECIDED_REASONS, UNKNOWN, DecisionRule, decide, loss_evidence,
    undecided_reasons, undecided_summary,
)
from ._elm import ELMClassifier, hidden_output, hidden_weights
from ._graph import knn_graph, laplacian
from ._kernel_expansion import rbf_kernel
from ._lapsvm import LapSVMClassifier
from ._scores import (
    accuracy, binary_scores, check_binary_labels, g_mean, g_mean_rows, paired_labels, sensitivity,
    specificity,
)
from ._selection import (
    UNLABELLED, grid_search, lapsvm_grid_search, select_params, sselm_grid_search, svm_grid_search,
)
from ._smoothing import DecisionSmoother, smooth_decisions
from ._naive import NaiveRepresentation, naive_feature_names
from ._prediction import Prediction, predict_recording
from ._specs import MODEL_KINDS, MODELS, NAIVE_MODELS, ModelSpec, model_specs
from ._sselm import SSELMClassifier
from ._svm import SVMClassifier
from ._training import (
    chosen_features, predict_windows, read_labels, train_detector, train_model, training_windows,
    usable_features,
)
from ._tsvm import TSVMClassifier

__all__ = [
    "ELMClassifier", "SSELMClassifier", "LapSVMClassifier", "SVMClassifier", "TSVMClassifier",
    "hidden_weights", "hidden_output", "rbf_kernel", "knn_graph", "laplacian",
    "accuracy", "sensitivity", "specificity", "g_mean", "binary_scores", "g_mean_rows",
    "paired_labels", "check_binary_labels",
    "UNLABELLED", "MODELS", "MODEL_KINDS", "NAIVE_MODELS", "NaiveRepresentation",
    "naive_feature_names", "ModelSpec", "model_specs", "select_params", "grid_search",
    "svm_grid_search", "sselm_grid_search", "lapsvm_grid_search",
    "training_windows", "train_detector", "train_model", "predict_windows", "read_labels",
    "usable_features", "chosen_features",
    "Detector", "save_model", "load_model", "fallback_extra", "DecisionSmoother", "smooth_decisions",
    "DecisionRule", "decide", "UNKNOWN", "LOSS_FEATURE", "loss_evidence", "CohortFit",
    "fit_cohort", "thin_windows", "stratified_subset", "train_cohort", "adapt_detector",
    "adapt_rows", "adaptation_obstacle", "SUBMODELS", "Choice", "DEFAULT_MODEL_PATH",
    "UNDECIDED_REASONS",
    "undecided_reasons", "undecided_summary", "Prediction", "predict_recording",
]
