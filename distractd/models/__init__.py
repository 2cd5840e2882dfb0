"""Learning, in four wings: detectors, segmentation, clustering (labelling assistance), evaluation.

This package re-exports the estimators and the artifact functions; everything else is reached
through its wing (``distractd.models.segmentation.dtak``, ``distractd.models.evaluation.g_mean``).

Names are imported from their module when first used (:mod:`distractd._lazy`), so that a light
name does not load the heavy modules beside it."""

from .._lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    ".clustering": ("ELMCLR", "ELMJEC", "USELM"),
    ".detectors": (
        "Detector", "DecisionSmoother", "ELMClassifier", "LapSVMClassifier", "SSELMClassifier",
        "SVMClassifier", "TSVMClassifier", "load_model", "save_model",
    ),
    ".segmentation": ("ACA", "HACA", "OnlineSegmenter"),
})
