"""Learning, in four wings: detectors, segmentation, clustering (labelling assistance), evaluation.

This package re-exports the estimators and the artifact functions; everything else is reached
through its wing (``distractd.models.segmentation.dtak``, ``distractd.models.evaluation.g_mean``).
"""

from .clustering import ELMCLR, ELMJEC, USELM
from .detectors import (
    Detector, DecisionSmoother, ELMClassifier, LapSVMClassifier, SSELMClassifier, SVMClassifier,
    TSVMClassifier, load_model, save_model,
)
from .segmentation import ACA, HACA, OnlineSegmenter

__all__ = [
    "ELMClassifier", "SSELMClassifier", "LapSVMClassifier", "SVMClassifier", "TSVMClassifier",
    "USELM", "ELMJEC", "ELMCLR", "ACA", "HACA", "OnlineSegmenter", "Detector", "load_model",
    "save_model", "DecisionSmoother",
]
