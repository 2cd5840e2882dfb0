"""Evaluation: metrics, splits and protocol runs over drivers and cohorts, statistics, reports."""

from ..detectors import (
    accuracy, binary_scores, detection_delays, false_alarms_per_hour, g_mean, sensitivity,
    specificity,
)
from ._metrics import clustering_accuracy, clustering_accuracy_many_to_one, clustering_g_mean
from ._halves import driver_halves, half_figures, per_driver_means, versus_floor
from ._models import NAIVE_FLOOR, evaluate_models, model_drives, naive_pairs
from ._protocol import evaluate_cohort, evaluate_driver, sweep
from ._report import (
    SCHEME_NOTES, format_schemes, format_table, format_tests, plot_sweep, results_document,
    run_evaluation, write_results,
)
from ._schemes import (
    NORMALISATIONS, RECIPES, SCHEMES, Drive, drive_record, drives_of, evaluate_scheme,
    featured_drives, normalise_drives, scheme_drives, scheme_folds, supported_schemes,
)
from ._splits import Split, make_splits
from ._stats import (
    DEPLOYMENT_METRICS, PAIRS, TIMINGS, WINDOW_METRICS, paired_tests, summarise, summarise_scheme,
)
from ._timeline import plot_timeline
from ._event_agreement import (
    AgreementPool, cohen_kappa, event_agreement, match_events, spans_from_flags,
)
from ._coded_sets import (
    HFC_CODERS, IRF_SUBJECTS, CodedRecording, flags_from_spans, hfc_names, irf_names, read_hfc,
    read_irf, tracker_resample,
)
from ._naive_events import NAIVE_IVT_DEG_S, naive_ivt
from ._shipped import score_shipped

__all__ = [
    "accuracy", "sensitivity", "specificity", "g_mean", "binary_scores", "clustering_accuracy",
    "clustering_accuracy_many_to_one", "clustering_g_mean", "detection_delays",
    "false_alarms_per_hour",
    "Split", "make_splits", "evaluate_driver", "evaluate_cohort", "sweep",
    "summarise", "summarise_scheme", "paired_tests", "PAIRS", "WINDOW_METRICS", "TIMINGS",
    "DEPLOYMENT_METRICS", "SCHEMES", "RECIPES", "NORMALISATIONS", "Drive", "scheme_drives",
    "scheme_folds", "normalise_drives", "supported_schemes", "evaluate_scheme", "drive_record",
    "run_evaluation",
    "featured_drives", "drives_of", "model_drives", "evaluate_models", "naive_pairs",
    "NAIVE_FLOOR", "driver_halves", "half_figures", "per_driver_means", "versus_floor",
    "format_schemes", "format_table", "format_tests", "results_document", "write_results", "plot_sweep",
    "plot_timeline", "SCHEME_NOTES",
    "AgreementPool", "cohen_kappa", "event_agreement", "match_events", "spans_from_flags",
    "HFC_CODERS", "IRF_SUBJECTS", "CodedRecording", "flags_from_spans", "hfc_names", "irf_names",
    "read_hfc", "read_irf", "tracker_resample", "NAIVE_IVT_DEG_S", "naive_ivt", "score_shipped",
]
