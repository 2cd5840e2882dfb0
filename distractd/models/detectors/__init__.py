"""Detectors: ELM family, SS-ELM, LapSVM, SVM, TSVM, graphs, selection, training, artifacts, the
decision rule and the deployment metrics judging its states.

Names are imported from their module when first used (:mod:`distractd._lazy`), so that a light
name does not load the heavy modules beside it."""

from ..._lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "._adaptable": ("adaptation_obstacle",),
    "._artifact": (
        "DEFAULT_MODEL_PATH", "SUBMODELS", "Choice", "Detector", "fallback_extra", "load_model",
        "save_model",
    ),
    "._cohort": (
        "CohortFit", "adapt_checked", "adapt_detector", "adapt_rows", "fit_cohort",
        "stratified_subset", "thin_windows", "train_cohort",
    ),
    "._decision": (
        "LOSS_FEATURE", "UNDECIDED_REASONS", "UNKNOWN", "DecisionRule", "decide", "loss_evidence",
        "undecided_reasons", "undecided_summary", "decision_options", "ESCALATION_LEVELS",
        "ESCALATION_STEPS_S", "ESCALATION_ALERT_LEVELS",
    ),
    "._deployment": ("agreement_summary", "detection_delays", "false_alarms_per_hour"),
    "._elm": ("ELMClassifier", "hidden_output", "hidden_weights"),
    "._graph": ("knn_graph", "laplacian"),
    "._scorers": ("rbf_kernel",),
    "._kinds": ("MODEL_KINDS", "MODELS", "NAIVE_MODELS"),
    "._lapsvm": ("LapSVMClassifier",),
    "._scores": (
        "accuracy", "binary_scores", "check_binary_labels", "g_mean", "g_mean_rows",
        "paired_labels", "sensitivity", "specificity",
    ),
    "._selection": (
        "UNLABELLED", "grid_search", "lapsvm_grid_search", "select_params", "sselm_grid_search",
        "svm_grid_search",
    ),
    "._smoothing": ("DecisionSmoother", "smooth_decisions"),
    "._naive": ("NaiveRepresentation", "naive_feature_names"),
    "._prediction": ("Prediction", "predict_recording"),
    "._specs": ("ModelSpec", "model_specs"),
    "._sselm": ("SSELMClassifier",),
    "._svm": ("SVMClassifier",),
    "._training": (
        "chosen_features", "predict_windows", "read_labels", "train_detector", "train_model",
        "training_windows", "usable_features",
    ),
    "._tsvm": ("TSVMClassifier",),
})
