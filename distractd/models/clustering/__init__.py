"""Clustering for labelling assistance: US-ELM, ELM-JEC, ELM-CLR and k-means preliminary labels."""

from ._elmclr import ELMCLR
from ._elmjec import ELMJEC
from ._labelling import (
    FEATURE_SETS, METHODS, MIN_KAPPA, REPRESENTATIONS, WindowLabels, label_windows, make_clusterer,
    model_prior,
)
from ._recording_labels import label_recording
from ._uselm import USELM

__all__ = [
    "USELM", "ELMJEC", "ELMCLR", "METHODS", "FEATURE_SETS", "WindowLabels", "make_clusterer",
    "label_windows", "label_recording", "model_prior", "REPRESENTATIONS", "MIN_KAPPA",
]
