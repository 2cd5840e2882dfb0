"""The model ids the commands name (``train --model``, ``evaluate --models``): names alone, so
that declaring a command's choices loads no estimator (its ``--help`` answers at once)."""

__all__ = ["MODELS", "NAIVE_MODELS", "MODEL_KINDS"]

MODELS = ("sselm", "lapsvm", "tsvm", "elm", "svm")
"""Model ids: the semi-supervised detectors and their supervised counterparts."""

NAIVE_MODELS = {"naive": "running", "naive-offline": "driver"}
"""The naive variants and the standardisation of each (:mod:`._naive`)."""

MODEL_KINDS = MODELS + tuple(NAIVE_MODELS)
"""Every model id :func:`~distractd.models.detectors.model_specs` knows: :data:`MODELS` and the
naive floor's variants."""
