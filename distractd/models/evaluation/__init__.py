"""Evaluation: metrics, splits and protocol runs over drivers and cohorts, statistics, reports.

Names are imported from their module when first used (:mod:`distractd._lazy`), so that a light
name does not load the heavy modules beside it."""

from ..._lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "..detectors": (
        "accuracy", "binary_scores", "detection_delays", "false_alarms_per_hour", "g_mean",
        "sensitivity", "specificity",
    ),
    "._figures": ("check_figure_path", "require_plots"),
    "._metrics": ("clustering_accuracy", "clustering_accuracy_many_to_one", "clustering_g_mean"),
    "._halves": ("driver_halves", "half_figures", "per_driver_means", "versus_floor"),
    "._models": ("NAIVE_FLOOR", "evaluate_models", "model_drives", "naive_pairs"),
    "._options": ("EvaluationOptions",),
    "._protocol": ("evaluate_cohort", "evaluate_driver", "sweep"),
    "._report": (
        "SCHEME_NOTES", "format_schemes", "format_table", "format_tests", "plot_sweep",
        "results_document", "run_evaluation", "write_results",
    ),
    "._scheme_names": ("NORMALISATIONS", "RECIPES", "SCHEMES"),
    "._schemes": (
        "Drive", "drive_record", "drives_of", "evaluate_scheme", "featured_drives",
        "normalise_drives", "scheme_drives", "scheme_folds", "supported_schemes",
    ),
    "._splits": ("Split", "make_splits"),
    "._stats": (
        "DEPLOYMENT_METRICS", "PAIRS", "TIMINGS", "WINDOW_METRICS", "paired_tests", "summarise",
        "summarise_scheme",
    ),
    "._timeline": ("plot_timeline",),
    "._event_agreement": (
        "AgreementPool", "cohen_kappa", "event_agreement", "match_events", "spans_from_flags",
    ),
    "._coded_sets": (
        "HFC_CODERS", "IRF_SUBJECTS", "LUND2013_STIMULI", "CodedRecording", "flags_from_spans",
        "hfc_names", "irf_names", "lund2013_names", "read_hfc", "read_irf", "read_lund2013",
        "tracker_resample",
    ),
    "._naive_events": ("NAIVE_IVT_DEG_S", "OLSEN_IVT", "naive_ivt", "olsen_ivt"),
    "._shipped": ("score_shipped",),
})
