"""The shared train/test splits of one driver's windows (ALGORITHMS §1.11; S0 §5.4.1).

``n_folds`` × ``n_repeats`` outer folds — stratified random (the source protocol) or blocked
(consecutive windows, block edges shifted per repeat) — optionally purged of training windows that
end near a test window, and per split a stratified labelled draw and an ordered unlabelled rest.
The splits and draws are made once per driver and shared by every model.
"""

from dataclasses import dataclass, field

import numpy as np
from sklearn.model_selection import RepeatedStratifiedKFold, train_test_split

from ..._errors import ConfigError, SchemaError
from ..._validation import Interval, Options, check_params
from ..detectors import UNLABELLED

__all__ = ["Split", "make_splits"]

_constraints = {
    "n_labelled": Interval(2, None, integer=True),
    "n_unlabelled": [None, Interval(0, None, integer=True)],
    "n_folds": Interval(2, None, integer=True),
    "n_repeats": Interval(1, None, integer=True),
    "folds": Options(("random", "blocked")),
    "purge_s": Interval(0, None),
}


@dataclass(frozen=True)
class Split:
    """One train/test split of one driver's windows (indices into the driver's windows).

    Attributes
    ----------
    repeat, fold : int
        Which repetition and which fold is held out.
    train : ndarray
        All windows of the training fold (the z-score is fitted on them).
    test : ndarray
        Windows of the test fold with known truth (scored).
    held_out : ndarray
        All windows of the test fold, unknown truth included (predicted out of fold).
    labelled : ndarray
        Labelled training windows, stratified draw.
    unlabelled : ndarray
        Unlabelled training windows, in random order (smaller sizes are prefixes).
    """

    repeat: int
    fold: int
    train: np.ndarray
    test: np.ndarray
    held_out: np.ndarray
    labelled: np.ndarray
    unlabelled: np.ndarray = field(repr=False)


def make_splits(y, n_labelled=60, n_unlabelled=None, n_folds=4, n_repeats=3, seed=0,
                folds="random", t=None, purge_s=0.0):
    """The shared splits of one driver: ``n_folds`` × ``n_repeats`` folds and labelled draws.

    Parameters
    ----------
    y : array-like of shape (n_windows,)
        Window truth: 1 distracted, 0 attentive, -1 unknown.
    n_labelled : int, default=60
        Labelled windows drawn (stratified, without replacement) from each training fold.
    n_unlabelled : int or None, default=None
        Unlabelled windows kept from the rest of the training fold; None keeps all of them.
    n_folds, n_repeats : int, default=4, 3
        The outer cross-validation.
    seed : int, default=0
        Seed of the folds and draws; the same seed gives the same splits, and the labelled draw
        and unlabelled order of a split do not depend on ``n_unlabelled``.
    folds : {"random", "blocked"}, default="random"
        ``"random"``: stratified random folds, the source protocol. ``"blocked"``: each fold is a
        stretch of consecutive windows; repeat r shifts the block edges by r/(n_folds·n_repeats)
        of the drive (the last block wraps round to the start).
    t : array-like of shape (n_windows,) or None, default=None
        Window end times in seconds, increasing; needed when ``purge_s > 0``.
    purge_s : float, default=0.0
        Training windows that end within ``purge_s`` of a test window's end are left out of the
        split. With the window length, no training window shares a sample with a test window;
        with random folds over overlapping windows it would leave almost nothing to train on.

    Returns
    -------
    list of Split
    """
    check_params(locals(), _constraints, owner="protocol")
    y = np.asarray(y)
    known = np.flatnonzero(y != UNLABELLED)
    counts = np.bincount(y[known], minlength=2)
    if counts.min() < n_folds:
        raise SchemaError(f"y must hold at least n_folds={n_folds} windows of each class, "
                          f"got {counts[1]} distracted and {counts[0]} attentive")
    if folds == "random":
        outer = RepeatedStratifiedKFold(n_splits=n_folds, n_repeats=n_repeats,
                                        random_state=seed).split(y, y == 1)
    else:
        outer = _blocked_folds(len(y), n_folds, n_repeats)
    if purge_s > 0:
        if t is None:
            raise ConfigError("protocol.t is needed to purge training windows, got None")
        t = np.asarray(t, dtype=np.float64)
        outer = ((_purge(train, held_out, t, purge_s), held_out) for train, held_out in outer)
    draw_seeds = np.random.SeedSequence(seed).generate_state(n_folds * n_repeats)
    splits = []
    for k, (train, held_out) in enumerate(outer):
        candidates = train[y[train] != UNLABELLED]
        if n_labelled >= len(candidates):
            raise ConfigError(f"protocol.n_labelled must be below the {len(candidates)} labelled "
                              f"windows of a training fold, got {n_labelled}")
        rng = np.random.default_rng(draw_seeds[k])
        labelled, _ = train_test_split(candidates, train_size=n_labelled, stratify=y[candidates],
                                       random_state=int(rng.integers(2**31)))
        drawn = np.bincount(y[labelled], minlength=2)
        if drawn.min() < 2:  # every inner training fold then holds both classes
            raise SchemaError(f"y must give the labelled draw at least 2 windows of each class, "
                              f"got {drawn[1]} distracted and {drawn[0]} attentive "
                              f"in repeat {k // n_folds} fold {k % n_folds} ({folds} folds; use "
                              f"longer drives or more labelled windows)")
        rest = rng.permutation(np.setdiff1d(train, labelled))
        if n_unlabelled is not None:
            if n_unlabelled > len(rest):
                raise ConfigError(f"protocol.n_unlabelled must be at most the {len(rest)} "
                                  f"windows left in a training fold, got {n_unlabelled}")
            rest = rest[:n_unlabelled]
        splits.append(Split(repeat=k // n_folds, fold=k % n_folds, train=train,
                            test=held_out[y[held_out] != UNLABELLED], held_out=held_out,
                            labelled=np.sort(labelled), unlabelled=rest))
    return splits


def _blocked_folds(n, n_folds, n_repeats):
    """(train, held_out) index pairs of consecutive-window folds, block edges shifted per repeat."""
    everything = np.arange(n)
    for repeat in range(n_repeats):
        shifted = np.roll(everything, -round(repeat * n / (n_folds * n_repeats)))
        for block in np.array_split(shifted, n_folds):
            held_out = np.sort(block)
            yield np.setdiff1d(everything, held_out), held_out


def _purge(train, held_out, t, purge_s):
    """``train`` without the windows ending within ``purge_s`` of a held-out window's end."""
    held_t = t[held_out]
    after = np.minimum(np.searchsorted(held_t, t[train]), len(held_t) - 1)
    before = np.maximum(after - 1, 0)
    nearest = np.minimum(np.abs(t[train] - held_t[after]), np.abs(t[train] - held_t[before]))
    return train[nearest >= purge_s]
