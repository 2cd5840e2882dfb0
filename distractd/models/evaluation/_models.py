"""Every model of an evaluation on its own representation of the same windows and truth.

The project's models share the evaluation's representation (its normalisation and features); the
naive floor (:mod:`distractd.models.detectors._naive`) brings its own features and standardisation.
:func:`model_drives` builds each representation from at most two feature extractions (per-stream
baseline on and off) — the windows, their truth and their quality are the pipeline's whatever the
features, so every model is judged on the same rows — and :func:`evaluate_models` runs each model
on its own, under one scheme, with one fold plan and seeds that depend only on the model's name.
"""

import numpy as np

from ..detectors import loss_evidence
from ._schemes import (
    Drive, drives_of, evaluate_scheme, featured_drives, normalise_drives, representation_drives,
)

__all__ = ["NAIVE_FLOOR", "model_drives", "evaluate_models", "naive_pairs"]

NAIVE_FLOOR = "naive-offline"
"""The naive variant every model is tested against (the stronger one, which the targets name)."""


def model_drives(recordings, specs, config=None, normalisation="running", features=None,
                 progress=False, runner=None, protocols=None):
    """The drives of the evaluation's representation and of every model that has its own.

    Parameters
    ----------
    recordings, config, normalisation, features, progress, runner, protocols :
        As :func:`~._schemes.scheme_drives`; they make the evaluation's representation.
    specs : sequence of ModelSpec
        The models; those with a ``representation`` (the naive floor) get their own drives.

    Returns
    -------
    drives : list of Drive
        The evaluation's representation (:func:`~._schemes.scheme_drives` output).
    feature_names : list of str
    own : dict
        Per model with its own representation, ``(drives, feature_names)``: the same windows
        as ``drives`` with the model's features, standardised and imputed its way.
    """
    extractions = {}

    def featured(norm):  # one extraction per baseline setting
        key = norm == "running"
        if key not in extractions:
            extractions[key] = featured_drives(recordings, config, norm, progress, runner,
                                               protocols)
        return extractions[key]

    drives, names = representation_drives(featured(normalisation), normalisation, features)
    own = {}
    for spec in specs:
        representation = spec.representation
        if representation is None:
            continue
        items = featured(representation.normalisation)
        spec_names = representation.feature_names([item.windows for item in items])
        spec_drives = normalise_drives(drives_of(items, spec_names),
                                       representation.normalisation)
        own[spec.name] = ([Drive(d.driver_id, d.recording_id, d.protocol, d.t_end, d.label,
                                 d.quality, representation.impute(d.X), d.alerts)
                           for d in spec_drives], spec_names)
    return drives, names, own


def evaluate_models(drives, own, scheme, specs, *, decision=None, **options):
    """Every model under one scheme, each on its representation: one results dict.

    Parameters
    ----------
    drives : list of Drive
        The evaluation's representation (models without their own).
    own : dict
        Per model name, ``(drives, feature_names)`` of its own representation
        (:func:`model_drives`).
    scheme : str
    specs : sequence of ModelSpec
    decision : dict or None, default=None
        The decision rule's keyword arguments for the evaluation's representation; a model with
        its own features gets ``loss_evidence`` from them.
    **options :
        Keyword arguments of :func:`~._schemes.evaluate_scheme`.

    Returns
    -------
    dict
        Per model name (in ``specs`` order), per driver id: the test records
        (:func:`~._schemes.evaluate_scheme`).
    """
    decision = dict(decision or {})
    shared = [spec for spec in specs if spec.name not in own]
    results = evaluate_scheme(drives, scheme, shared, decision=decision, **options) \
        if shared else {}
    for spec in specs:
        if spec.name in own:
            spec_drives, names = own[spec.name]
            _check_same_windows(drives, spec_drives, spec.name)
            results.update(evaluate_scheme(
                spec_drives, scheme, [spec],
                decision={**decision, "loss_evidence": loss_evidence(names)}, **options))
    return {spec.name: results[spec.name] for spec in specs}


def naive_pairs(models, floor=NAIVE_FLOOR):
    """(model, floor) for every model but the floor: the pairs tested against the naive."""
    return [(model, floor) for model in models if model != floor]


def _check_same_windows(drives, other, name):
    """Raise unless ``other`` holds the windows and truth of ``drives``, drive by drive."""
    same = len(drives) == len(other) and all(
        a.recording_id == b.recording_id and np.array_equal(a.t_end, b.t_end)
        and np.array_equal(a.label, b.label) for a, b in zip(drives, other))
    if not same:
        raise RuntimeError(f"evaluate: model {name!r} was given other windows than the rest")
