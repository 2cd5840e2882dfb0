"""Human-coded eye-movement sets as a vehicle tracker would deliver them: IRF, HFC and Lund2013.

Each reader returns a :class:`CodedRecording`: the canonical :class:`~distractd.pipeline.Recording`
at a chosen rate and every coder's events as time spans on its clock. The resampling emulates a
camera tracker: each output sample integrates its exposure (the mean of the tracked raw samples of
its period), is stamped at the period's centre, and is track loss when at least half of its
period was lost. Gaze in degrees becomes the yaw/pitch of both eyes.

- IRF ``lookAtPoint_EL`` (Zemblys et al. 2018; MIT): 1000 Hz EyeLink, one expert. Saccades are
  evt 2 with the following post-saccadic oscillation (evt 3) merged in, fixations evt 1, blinks
  evt 5. S3 was only approximately coded: it is left out of every score, as its authors left it
  out of their evaluation (it holds a 12.3 s closure coded as one blink).
- HFC (Hooge et al. 2018, doi:10.3758/s13428-017-0955-x; CC BY-NC-SA 4.0, read in place, never
  copied): 300 Hz Tobii TX300, the fixations of 12 coders. Pixels become degrees with the screen
  geometry of its README; a coder's saccades are the gaps between its consecutive fixations that
  hold no track loss (a gap with loss is a blink or a lost eye, not a scorable saccade).
- Lund2013 (Andersson, Larsson, Holmqvist, Stridh & Nystrom 2017, "One algorithm to rule them
  all?", Behavior Research Methods 49(2), 616-637, doi:10.3758/s13428-016-0738-9; GPL-3.0, read
  from a copy of its repository, never copied here): 500 Hz SMI Hi-Speed 1250 (a few trials at
  200 Hz), two coders (RA, MN) per recording, three stimulus types: ``dots`` (moving targets: smooth
  pursuit), ``img`` (static pictures) and ``video`` (natural video). Saccades are label 2 with the
  post-saccadic oscillation (3) merged in, fixations 1, smooth pursuit 4, blinks 5. The
  ``fix_by_Zemblys2018`` file replaces the one it corrects.
"""

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.io

from ...pipeline import FIELD_INDEX, Recording, empty_block

__all__ = [
    "CodedRecording", "tracker_resample", "flags_from_spans", "read_irf", "read_hfc",
    "irf_names", "hfc_names", "IRF_SUBJECTS", "HFC_CODERS", "lund2013_names", "read_lund2013",
    "LUND2013_STIMULI",
]

IRF_SUBJECTS = (1, 2, 3, 4, 5, 6)
"""IRF ``lookAtPoint_EL`` subjects."""

_IRF_APPROXIMATE = (3,)   # only approximately coded: not scored

HFC_CODERS = ("DN", "IH", "JB", "JF", "JV", "KH", "MN", "MS", "PZ", "RA", "RH", "TC")
"""The 12 HFC coders (file names under ``coderSettings/``)."""

# HFC screen geometry (hfc/README.md): 1920 x 1080 px on 50.9 x 28.6 cm, viewed from 65 cm.
_HFC_PX = (1920.0, 1080.0)
_HFC_CM = (50.9, 28.6)
_HFC_DISTANCE_CM = 65.0


LUND2013_STIMULI = ("dots", "img", "video")
"""Lund2013 stimulus types (the folders of ``annotated_data/data used in the article``)."""

_LUND_ARTICLE = Path("annotated_data") / "data used in the article"
_LUND_FIXED = Path("annotated_data") / "fix_by_Zemblys2018"
_LUND_CODERS = ("RA", "MN")
_LUND_KINDS = (("saccade", (2, 3)), ("fixation", (1,)), ("pursuit", (4,)), ("blink", (5,)))


@dataclass
class CodedRecording:
    """One human-coded recording at a tracker rate.

    Attributes
    ----------
    name : str
        ``irf/S<k>`` or ``hfc/<trial>``.
    rate_hz : float
        Output rate of :attr:`recording`.
    recording : Recording
        Canonical samples at ``rate_hz`` (time from 0 at the raw recording's first sample).
    coders : dict
        Coder name -> {event kind -> ndarray of shape (n, 2) of ``(start_s, end_s)`` spans}.
    kinds : tuple of str
        The kinds scored on this recording.
    """

    name: str
    rate_hz: float
    recording: Recording
    coders: dict
    kinds: tuple


def tracker_resample(t_s, x_deg, y_deg, tracked, rate_hz, source):
    """Integrate raw gaze over each output period, as a camera tracker's exposure does.

    Parameters
    ----------
    t_s : ndarray of shape (n,)
        Raw sample times, seconds (increasing).
    x_deg, y_deg : ndarray of shape (n,)
        Raw gaze, degrees (horizontal right, vertical up).
    tracked : ndarray of shape (n,), dtype bool
        False where the raw sample is lost.
    rate_hz : float
        Output rate, Hz.
    source : str
        Recorded in the recording's ``meta``.

    Returns
    -------
    Recording
        One sample per whole output period (the last, partial period is dropped), stamped at the
        period's centre on a clock starting at ``t_s[0]`` = 0; track loss (confidence 0, NaN gaze)
        when at least half of the period's raw samples are lost.
    """
    if not rate_hz > 0:
        raise ValueError(f"rate_hz must be > 0, got {rate_hz}")
    t = np.asarray(t_s, dtype=float) - t_s[0]
    period = 1.0 / rate_hz
    bins = np.floor(t / period).astype(np.int64)
    n = int(bins[-1])
    keep = bins < n
    bins = bins[keep]
    tracked = np.asarray(tracked, dtype=bool)[keep]
    x = np.asarray(x_deg, dtype=float)[keep]
    y = np.asarray(y_deg, dtype=float)[keep]
    tracked &= np.isfinite(x) & np.isfinite(y)
    count = np.bincount(bins, minlength=n).astype(float)
    n_tracked = np.bincount(bins, weights=tracked, minlength=n)
    lost = n_tracked <= 0.5 * count
    with np.errstate(invalid="ignore", divide="ignore"):
        yaw = np.radians(np.bincount(bins, np.where(tracked, x, 0.0), minlength=n) / n_tracked)
        pitch = np.radians(np.bincount(bins, np.where(tracked, y, 0.0), minlength=n) / n_tracked)
    yaw[lost] = pitch[lost] = np.nan
    block = empty_block(n)
    block[:, FIELD_INDEX["t"]] = (np.arange(n) + 0.5) * period
    for eye in ("r", "l"):
        block[:, FIELD_INDEX[f"gaze_{eye}_yaw"]] = yaw
        block[:, FIELD_INDEX[f"gaze_{eye}_pitch"]] = pitch
    block[:, FIELD_INDEX["confidence"]] = np.where(lost, 0.0, 1.0)
    return Recording(block, meta={"source": source, "rate_hz": rate_hz})


def flags_from_spans(spans, n_samples, rate_hz):
    """Per-sample labels on a tracker grid: True where most of the sample's period is in a span.

    Parameters
    ----------
    spans : ndarray of shape (n, 2)
        Disjoint ``(start_s, end_s)`` spans.
    n_samples : int
        Samples of the grid; sample ``i`` covers ``[i, i + 1)`` periods.
    rate_hz : float

    Returns
    -------
    ndarray of shape (n_samples,), dtype bool
    """
    spans = np.asarray(spans, dtype=float).reshape(-1, 2)
    spans = spans[np.argsort(spans[:, 0], kind="stable")]
    edges = np.arange(n_samples + 1) / rate_hz
    if not len(spans):
        return np.zeros(n_samples, dtype=bool)
    length = spans[:, 1] - spans[:, 0]
    before = np.r_[0.0, np.cumsum(length)[:-1]]
    knots = spans.ravel()
    covered = np.column_stack([before, before + length]).ravel()
    inside = np.interp(edges, knots, covered, left=0.0, right=covered[-1])
    return np.diff(inside) > 0.5 / rate_hz


def irf_names(irf):
    """Names of the IRF recordings present under ``irf`` (a folder)."""
    return [f"S{k}" for k in IRF_SUBJECTS if (Path(irf) / f"lookAtPoint_EL_S{k}.npy").is_file()]


def read_irf(irf, name, rate_hz):
    """One IRF recording (``name`` ``S1`` ... ``S6``) at ``rate_hz`` with the expert's events.

    Returns
    -------
    CodedRecording
        One coder, ``expert``, with ``saccade``, ``fixation`` and ``blink`` spans.
    """
    path = Path(irf) / f"lookAtPoint_EL_{name}.npy"
    if not path.is_file():
        raise FileNotFoundError(f"IRF recording {name!r} not found: {path}")
    raw = np.load(path, allow_pickle=False)
    t = raw["t"] - raw["t"][0]
    recording = tracker_resample(t, raw["x"], raw["y"], raw["status"], rate_hz, "irf")
    raw_period = float(np.median(np.diff(t)))
    coder = {kind: _runs(t, np.isin(raw["evt"], codes), raw_period)
             for kind, codes in (("saccade", (2, 3)), ("fixation", (1,)), ("blink", (5,)))}
    kinds = () if int(name[1:]) in _IRF_APPROXIMATE else ("saccade", "fixation", "blink")
    return CodedRecording(f"irf/{name}", rate_hz, recording, {"expert": coder}, kinds)


def hfc_names(hfc, group="adult"):
    """Trial names (``<group>_<id>``) present under ``hfc/ETdata``, sorted."""
    return sorted(p.stem for p in (Path(hfc) / "ETdata").glob(f"{group}_*.txt"))


def read_hfc(hfc, trial, rate_hz):
    """One HFC trial at ``rate_hz`` with every coder's fixations and saccades.

    Returns
    -------
    CodedRecording
        The 12 coders, each with ``fixation`` and ``saccade`` spans.
    """
    path = Path(hfc) / "ETdata" / f"{trial}.txt"
    if not path.is_file():
        raise FileNotFoundError(f"HFC trial {trial!r} not found: {path}")
    data = np.genfromtxt(path, delimiter="\t", names=True)
    t = (data["time"] - data["time"][0]) / 1000.0
    x_px, y_px = data["x"], data["y"]
    tracked = (np.isfinite(x_px) & np.isfinite(y_px) & (x_px >= 0) & (x_px <= _HFC_PX[0])
               & (y_px >= 0) & (y_px <= _HFC_PX[1]))
    x_deg = _px_to_deg(x_px - 0.5 * _HFC_PX[0], _HFC_CM[0] / _HFC_PX[0])
    y_deg = -_px_to_deg(y_px - 0.5 * _HFC_PX[1], _HFC_CM[1] / _HFC_PX[1])
    recording = tracker_resample(t, x_deg, y_deg, tracked, rate_hz, "hfc")
    t0 = data["time"][0] / 1000.0
    coders = {}
    for coder, fixations in _hfc_fixations(hfc, trial).items():
        fixations = fixations - t0
        coders[coder] = {"fixation": fixations, "saccade": _clean_gaps(fixations, t, tracked)}
    return CodedRecording(f"hfc/{trial}", rate_hz, recording, coders, ("saccade", "fixation"))


def _px_to_deg(offset_px, cm_per_px):
    return np.degrees(np.arctan(offset_px * cm_per_px / _HFC_DISTANCE_CM))


def _hfc_fixations(hfc, trial):
    found = {}
    for coder in HFC_CODERS:
        path = Path(hfc) / "coderSettings" / f"{coder}.txt"
        if not path.is_file():
            raise FileNotFoundError(f"HFC coder file not found: {path}")
        with open(path, newline="") as file:
            rows = [(float(r["FixStart"]), float(r["FixEnd"]))
                    for r in csv.DictReader(file, delimiter="\t") if r["Trial"] == trial]
        if not rows:
            raise ValueError(f"HFC coder {coder} has no fixations for trial {trial!r} in {path}")
        spans = np.array(rows) / 1000.0
        found[coder] = spans[np.argsort(spans[:, 0], kind="stable")]
    return found


def _clean_gaps(fixations, t, tracked):
    """Gaps between consecutive fixations that hold no lost raw sample."""
    gaps = np.column_stack([fixations[:-1, 1], fixations[1:, 0]])
    gaps = gaps[gaps[:, 1] > gaps[:, 0]]
    lost_before = np.r_[0, np.cumsum(~tracked)]
    n_lost = (lost_before[np.searchsorted(t, gaps[:, 1], side="right")]
              - lost_before[np.searchsorted(t, gaps[:, 0], side="left")])
    return gaps[n_lost == 0]


def _runs(t, inside, period):
    """Spans of the runs of ``inside``, each raw sample covering one ``period``."""
    edges = np.diff(np.r_[0, inside.astype(np.int8), 0])
    first, last = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1) - 1
    return np.column_stack([t[first], t[last] + period])


def lund2013_names(root, stimulus):
    """Recordings (``<stimulus>/<subject>_<trial>``) of one Lund2013 stimulus type coded by both
    coders, sorted; ``root`` is a copy of the EyeMovementDetectorEvaluation repository."""
    if stimulus not in LUND2013_STIMULI:
        raise ValueError(f"Lund2013 stimulus must be one of {LUND2013_STIMULI}, got {stimulus!r}")
    folder = Path(root) / _LUND_ARTICLE / stimulus
    if not folder.is_dir():
        raise FileNotFoundError(f"Lund2013 folder not found: {folder}")
    stems = {p.name[:-len("_labelled_RA.mat")] for p in folder.glob("*_labelled_RA.mat")}
    return [f"{stimulus}/{stem}" for stem in sorted(stems)
            if (folder / f"{stem}_labelled_MN.mat").is_file()]


def read_lund2013(root, name, rate_hz):
    """One Lund2013 recording (a name of :func:`lund2013_names`) at ``rate_hz`` with both coders'
    saccades, fixations, smooth pursuits and blinks.

    The coders labelled the same samples: the gaze is read from RA's file. Track loss is a sample at
    (0, 0) px, not finite or off the screen.
    """
    stimulus, stem = name.split("/")
    coders, gaze = {}, None
    for coder in _LUND_CODERS:
        path = Path(root) / _LUND_FIXED / f"{stem}_labelled_FIX_{coder}.mat"
        if not path.is_file():
            path = Path(root) / _LUND_ARTICLE / stimulus / f"{stem}_labelled_{coder}.mat"
        if not path.is_file():
            raise FileNotFoundError(f"Lund2013 recording {name!r} of coder {coder} not found: {path}")
        data = scipy.io.loadmat(path, squeeze_me=True, struct_as_record=False)["ETdata"]
        pos = np.asarray(data.pos, dtype=float)
        if pos.ndim != 2 or pos.shape[1] != 6:
            raise ValueError(f"Lund2013 {path}: ETdata.pos must have 6 columns, got {pos.shape}")
        rate = float(data.sampFreq)
        t = (pos[:, 0] - pos[0, 0]) / 1e6
        if not np.all(np.diff(t) > 0):   # some files hold no time stamps: the nominal rate
            t = np.arange(len(pos)) / rate
        if gaze is None:
            gaze = t, pos, data
        coders[coder] = {kind: _runs(t, np.isin(pos[:, 5], codes), float(np.median(np.diff(t))))
                         for kind, codes in _LUND_KINDS}
    t, pos, data = gaze
    res = np.asarray(data.screenRes, dtype=float)
    size_m = np.asarray(data.screenDim, dtype=float)
    x_px, y_px = pos[:, 3], pos[:, 4]
    tracked = (np.isfinite(x_px) & np.isfinite(y_px) & ~((x_px == 0) & (y_px == 0))
               & (x_px >= 0) & (x_px <= res[0]) & (y_px >= 0) & (y_px <= res[1]))
    distance = float(data.viewDist)
    x_deg = np.degrees(np.arctan((x_px - 0.5 * res[0]) * size_m[0] / res[0] / distance))
    y_deg = -np.degrees(np.arctan((y_px - 0.5 * res[1]) * size_m[1] / res[1] / distance))
    recording = tracker_resample(t, x_deg, y_deg, tracked, rate_hz, "lund2013")
    return CodedRecording(f"lund2013/{name}", rate_hz, recording, coders,
                          tuple(kind for kind, _ in _LUND_KINDS))
