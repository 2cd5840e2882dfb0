"""Preliminary labels of one recording, from reading its windows to the labels (``distractd
label``)."""

from ...pipeline import FEATURE_NAMES, PipelineConfig, extract_features, require_windows
from ._labelling import label_windows, model_prior

__all__ = ["label_recording"]


def label_recording(recording, method="elm-jec", *, prior_model=None, config=None,
                    representation="baseline", mapping=None, min_quality=0.5, features="auto",
                    params=None, random_state=None, name="recording"):
    """Cluster a recording's raw windows into preliminary labels, beside a model's view if given.

    The windows are made without the per-stream baseline (:func:`label_windows` builds its own
    drift-free representation), with ``config``, else the prior model's pipeline settings, else
    the defaults.

    Parameters
    ----------
    recording : Recording
    method : {"kmeans", "uselm", "elm-jec", "elm-clr"}, default="elm-jec"
    prior_model : Detector or None, default=None
        Model whose scores become the prior (:func:`model_prior`); None: no prior.
    config : PipelineConfig or None, default=None
        Pipeline settings; ``baseline`` is switched off whatever it says.
    representation, mapping, min_quality, features, params, random_state
        As :func:`label_windows`.
    name : str, default="recording"
        The recording's file, named by the error of a recording with no complete window.

    Returns
    -------
    WindowLabels

    Raises
    ------
    RecordingError
        The recording is shorter than one window.
    """
    if config is None:
        config = (PipelineConfig() if prior_model is None
                  else PipelineConfig.from_dict(prior_model.pipeline_config))
    config = PipelineConfig.from_dict({**config.to_dict(), "baseline": False})   # raw windows
    windows = extract_features(recording, config)
    require_windows(name, recording, windows, config.window_s)
    prior = None if prior_model is None else model_prior(prior_model, windows, FEATURE_NAMES)
    return label_windows(windows, FEATURE_NAMES, method, representation=representation,
                         prior=prior, mapping=mapping, min_quality=min_quality,
                         features=features, params=params,
                         baseline={"memory_s": config.baseline_memory_s,
                                   "spacing_s": config.baseline_spacing_s,
                                   "warmup_s": config.baseline_warmup_s},
                         random_state=random_state)
