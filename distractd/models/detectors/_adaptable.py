"""Whether a model can adapt to a new driver — asked by the daemon at every model load, so it lives
apart from the adaptation itself (:func:`~distractd.models.detectors.adapt_rows`), which needs
scikit-learn and scipy."""

__all__ = ["adaptation_obstacle"]

_ADAPTABLE_KINDS = ("SSELMClassifier", "LapSVMClassifier")
"""Model kinds :func:`~distractd.models.detectors.adapt_rows` refits: the semi-supervised ones."""


def adaptation_obstacle(detector):
    """Why ``detector`` cannot be adapted to a new driver (one sentence), or None when it can:
    adaptation needs a semi-supervised cohort model with its labelled anchors."""
    if "anchors" not in detector.extras:
        return (f"model {detector.model_id} holds no cohort anchors (train it with distractd "
                f"train --cohort)")
    if detector.kind not in _ADAPTABLE_KINDS:
        return (f"model {detector.model_id} is a {detector.kind}; adaptation needs a "
                f"semi-supervised cohort model (--model sselm or lapsvm)")
    return None
