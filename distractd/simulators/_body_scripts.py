"""Scripted changes to a simulated drive's delivered samples, for the conformance scenarios: eye
closures, a drowsiness build-up (longer blinks, slow lid closures, head nods), a slumped driver,
sunglasses and face occlusion, the eyelid aperture and the seat position.

Each function takes the tracker's samples and returns a new array. Lid changes are rendered with
the simulator's own four-phase lid profile (:func:`~._oculomotor.render_eyelid`) and pass through
the tracker's blink rule: where the lid covers the pupil, gaze and pupil are lost
(:data:`~._tracker.PUPIL_COVERED_CLOSURE`). Values and sources: docs/simulator.md, "Scripted
fatigue", and docs/conformance.md.
"""

from dataclasses import dataclass

import numpy as np

from ..pipeline import FIELD_INDEX
from ._behaviour import BlinkPlan
from ._oculomotor import render_eyelid
from ._tracker import PUPIL_COVERED_CLOSURE

__all__ = ["ScriptedClosure", "DrowsyBuildUp", "REFERENCE_APERTURE_MM", "closure_plan",
           "drowsy_plan", "script_eyelids", "nod_heads", "slump", "lose_eyes", "occlude_face",
           "scale_aperture", "shift_head"]

CLOSE_S, OPEN_S = 0.12, 0.25
"""Lid closing and reopening times of a scripted closure (s): slower than a blink's ~0.1 / 0.2 s,
as drowsy closures are (Caffier et al. 2003, SIMULATOR_EVIDENCE §3)."""
REFERENCE_APERTURE_MM = 10.0
"""The simulator's eyelid field is the opening in units of this aperture: a driver whose open eye
measures ``a`` mm reads ``a / 10`` when open (6 mm: 0.6, 14 mm: 1.4; Euro NCAP's 6-14 mm range,
SIMULATOR_EVIDENCE §5c). Drives without an aperture scenario read 1 (a 10 mm eye)."""

_GAZE = [FIELD_INDEX[f] for f in ("gaze_r_yaw", "gaze_r_pitch", "gaze_l_yaw", "gaze_l_pitch")]
_PITCHES = [FIELD_INDEX["gaze_r_pitch"], FIELD_INDEX["gaze_l_pitch"]]
_EYELID = [FIELD_INDEX["eyelid_r"], FIELD_INDEX["eyelid_l"]]
_PUPIL = [FIELD_INDEX["pupil_r"], FIELD_INDEX["pupil_l"]]
_HEAD = [FIELD_INDEX[f] for f in ("head_x", "head_y", "head_z", "head_yaw", "head_pitch",
                                  "head_roll")]
_CONF, _BLINK, _SACCADE = FIELD_INDEX["confidence"], FIELD_INDEX["blink"], FIELD_INDEX["saccade"]
_HEAD_PITCH = FIELD_INDEX["head_pitch"]


@dataclass(frozen=True)
class ScriptedClosure:
    """One eye closure (s): the lid starts closing at ``start_s`` and is fully closed from
    ``start_s + CLOSE_S`` to ``start_s + duration_s``, then reopens over ``OPEN_S``; the eye is
    more than half closed for about ``duration_s``."""

    start_s: float
    duration_s: float


@dataclass(frozen=True)
class DrowsyBuildUp:
    """How a drowsiness build-up changes the lids and head, at progress ``p`` (0 alert .. 1 at
    the first microsleep). Blinks lengthen (Caffier et al. 2003) and slow lid closures are added
    at a rate rising with ``p``, set per driver so that true-lid PERCLOS (P80) over the last
    3 min reaches ``perclos_end`` (10.5 % at the first 1-s microsleep, SIMULATOR_EVIDENCE §3)
    whatever the driver's own blinks give; head nods in the second half. Values (A) checked by
    tests/simulators/test_physiology.py."""

    close_gain: float = 0.5      # each blink's closing time x (1 + close_gain p)
    closed_add_s: float = 0.05   # its closed plateau + closed_add_s p
    open_gain: float = 0.8       # its reopening time x (1 + open_gain p)
    perclos_end: float = 0.11    # P80 over the build-up's last 3 min
    min_droops_per_min: float = 0.5
    nods_per_min: float = 1.5    # head nods per minute, x max(p - 0.5, 0) / 0.5
    nod_deg: tuple = (10.0, 20.0)
    nod_down_s: float = 0.8
    nod_up_s: float = 0.4


_DROOP_P80_S = 0.4
"""Mean time a slow lid closure (below) spends at >= 80 % closure (s)."""
_P80_SPAN_S = 180.0


def closure_plan(closures):
    """A :class:`BlinkPlan` of scripted closures (full depth)."""
    start = np.array([c.start_s for c in closures], dtype=np.float64)
    closed = np.array([max(c.duration_s - CLOSE_S, 0.0) for c in closures])
    return BlinkPlan(start=start, close_s=np.full(len(start), CLOSE_S), closed_s=closed,
                     open_s=np.full(len(start), OPEN_S), depth=np.ones(len(start)))


def drowsy_plan(rng, natural, start_s, length_s, build_up=DrowsyBuildUp()):
    """The lids and nods of a drowsiness build-up from ``start_s`` over ``length_s``.

    Returns ``(plan, nods)``: the drive's own blinks (``natural``) in the build-up, lengthened
    and made full with the progress (a blink less than 1 s after the previous one is dropped, so
    lengthened blinks do not merge), plus slow lid closures (0.6-1.3 s, never a microsleep); and
    the nods, an array of (start s, depth deg), each with the eyes closing through it.
    """
    inside = np.flatnonzero((natural.start >= start_s) & (natural.start < start_s + length_s))
    inside = inside[np.diff(natural.start[inside], prepend=-np.inf) >= 1.0]
    p = (natural.start[inside] - start_s) / length_s
    full = rng.random(len(p)) < p
    blinks = [natural.start[inside], natural.close_s[inside] * (1 + build_up.close_gain * p),
              natural.closed_s[inside] + build_up.closed_add_s * p,
              natural.open_s[inside] * (1 + build_up.open_gain * p),
              np.where(full, 1.0, natural.depth[inside])]
    end = start_s + length_s
    grid = np.arange(end - _P80_SPAN_S, end, 0.01)
    reached = (render_eyelid(grid, BlinkPlan(*blinks)) >= 0.8).mean()
    rate = max((build_up.perclos_end - reached) * 60.0 / _DROOP_P80_S,
               build_up.min_droops_per_min)   # at p = 1; the last 3 min average p ~ 0.95
    droops = _apart(_events(rng, start_s, length_s, rate / 0.95, 0.0), blinks[0])
    n = len(droops)
    blinks = [np.r_[a, b] for a, b in zip(blinks, (
        droops, rng.uniform(0.25, 0.4, n), rng.uniform(0.1, 0.4, n), rng.uniform(0.3, 0.5, n),
        rng.uniform(0.85, 1.0, n)))]
    nods = _apart(_events(rng, start_s, length_s, build_up.nods_per_min, 0.5), blinks[0])
    m = len(nods)
    blinks = [np.r_[a, b] for a, b in zip(blinks, (
        nods, np.full(m, 0.3), np.full(m, build_up.nod_down_s - 0.3), np.full(m, 0.35),
        np.ones(m)))]
    plan = BlinkPlan(*_top_up(rng, blinks, grid, build_up.perclos_end))
    return plan, np.column_stack([nods, rng.uniform(*build_up.nod_deg, m)])


def _top_up(rng, blinks, grid, perclos, tolerance=0.005, max_added=400):
    """Add slow lid closures at random times over ``grid`` (the build-up's last minutes) until
    P80 there reaches ``perclos - tolerance``: the drawn closures are random, and the build-up is
    defined by the PERCLOS it ends at (a drawn build-up ended anywhere from 8.9 to 12 %)."""
    for _ in range(max_added):
        order = np.argsort(blinks[0], kind="stable")
        blinks = [column[order] for column in blinks]   # the lid renders onsets in order
        if (render_eyelid(grid, BlinkPlan(*blinks)) >= 0.8).mean() >= perclos - tolerance:
            break
        at = _apart(rng.uniform(grid[0], grid[-1], 1), blinks[0])
        if len(at):
            blinks = [np.r_[a, b] for a, b in zip(blinks, (
                at, rng.uniform(0.25, 0.4, 1), rng.uniform(0.1, 0.4, 1),
                rng.uniform(0.3, 0.5, 1), rng.uniform(0.85, 1.0, 1)))]
    order = np.argsort(blinks[0], kind="stable")
    return [column[order] for column in blinks]


def _events(rng, start_s, length_s, per_min_at_end, from_p):
    """Poisson event times whose rate rises linearly from 0 at progress ``from_p`` to
    ``per_min_at_end`` at progress 1 (thinning of a homogeneous process)."""
    peak = per_min_at_end / 60.0
    count = rng.poisson(peak * length_s)
    t = np.sort(rng.uniform(0.0, length_s, count))
    keep = rng.random(count) < np.clip((t / length_s - from_p) / (1 - from_p), 0.0, 1.0)
    return start_s + t[keep]


def _apart(times, others, gap_s=1.0):
    """The ``times`` at least ``gap_s`` from every one of ``others`` (sorted or not), so that a
    slow closure never merges with a blink into one long closure."""
    others = np.sort(others)
    i = np.searchsorted(others, times)
    before = np.abs(times - others[np.maximum(i - 1, 0)]) if len(others) else np.inf
    after = np.abs(others[np.minimum(i, len(others) - 1)] - times) if len(others) else np.inf
    return times[(before >= gap_s) & (after >= gap_s)]


def script_eyelids(samples, closure, plan):
    """Close the lids as ``plan`` says on top of the drive's own ``closure`` (per sample, 0..1).

    The lids fall by the extra closure; where the eye is now covered beyond the tracker's
    threshold, gaze and pupil are lost and confidence drops to 0.3 at most (as for a blink);
    the ``blink`` flag is closure >= 0.5.
    """
    out = samples.copy()
    scripted = render_eyelid(out[:, 0], plan)
    extra = np.maximum(scripted - closure, 0.0)
    out[:, _EYELID] = np.clip(out[:, _EYELID] - extra[:, None], 0.0, None)
    total = np.maximum(closure, scripted)
    covered = total > PUPIL_COVERED_CLOSURE
    out[np.ix_(covered, _GAZE + _PUPIL)] = np.nan
    out[covered, _CONF] = np.minimum(out[covered, _CONF], 0.3)
    out[:, _BLINK] = total >= 0.5
    return out


def nod_heads(samples, nods, down_s=DrowsyBuildUp.nod_down_s, up_s=DrowsyBuildUp.nod_up_s):
    """Head nods (rows of start s, depth deg): the head pitches down over ``down_s`` (sin²),
    then jerks back up over ``up_s``."""
    out = samples.copy()
    t = out[:, 0]
    for start, depth in nods:
        down = (t >= start) & (t < start + down_s)
        up = (t >= start + down_s) & (t < start + down_s + up_s)
        shape = np.zeros(len(t))
        shape[down] = np.sin(0.5 * np.pi * (t[down] - start) / down_s) ** 2
        shape[up] = np.cos(0.5 * np.pi * (t[up] - start - down_s) / up_s) ** 2
        out[:, _HEAD_PITCH] -= np.radians(depth) * shape
    return out


def slump(samples, rng, start_s, hold_s, pitch_deg=-40.0, fall_s=1.5):
    """An unresponsive driver slumped forward: the head pitches down by ``pitch_deg`` over
    ``fall_s`` and stays there for ``hold_s``; gaze stops moving (held where the head carried it,
    with 0.2 deg of tracker noise), lids half down, no saccades."""
    out = samples.copy()
    t = out[:, 0]
    held = (t >= start_s) & (t < start_s + fall_s + hold_s)
    shape = np.clip((t[held] - start_s) / fall_s, 0.0, 1.0)
    drop = np.radians(pitch_deg) * np.sin(0.5 * np.pi * shape) ** 2
    out[held, _HEAD_PITCH] += drop
    before = np.flatnonzero((t < start_s) & np.isfinite(samples[:, _GAZE[0]]))
    still = samples[before[-1], _GAZE] if len(before) else np.zeros(4)
    noise = rng.standard_normal((int(held.sum()), 4)) * np.radians(0.2)
    out[np.ix_(held, _GAZE)] = still + noise
    out[np.ix_(held, _PITCHES)] += drop[:, None]
    out[np.ix_(held, _EYELID)] = 0.5 * out[np.ix_(held, _EYELID)]
    out[held, _SACCADE] = 0.0
    return out


def _burst_mask(t, rng, lost_fraction, mean_burst_s):
    """Alternating visible and lost bursts (exponential lengths, mean ``mean_burst_s``,
    ``lost_fraction`` of the time lost): True where lost."""
    lengths = rng.exponential(mean_burst_s, int((t[-1] - t[0]) / mean_burst_s * 2) + 8)
    lengths[::2] *= (1 - lost_fraction) / 0.5
    lengths[1::2] *= lost_fraction / 0.5
    edges = t[0] + np.cumsum(lengths)
    return np.searchsorted(edges, t) % 2 == 1


def lose_eyes(samples, rng, lost_fraction=0.5, mean_burst_s=0.5):
    """Sunglasses: the eyes lost in bursts (:func:`_burst_mask`), head pose still tracked; gaze,
    eyelids and pupils NaN and confidence 0 while lost."""
    lost = _burst_mask(samples[:, 0], rng, lost_fraction, mean_burst_s)
    out = samples.copy()
    out[np.ix_(lost, _GAZE + _EYELID + _PUPIL)] = np.nan
    out[lost, _CONF] = 0.0
    return out


def occlude_face(samples, rng, lost_fraction=0.3, mean_burst_s=0.4):
    """A partly occluded face (a hand, a scarf, the steering wheel's rim): the whole face lost in
    bursts, head pose too; confidence 0 while lost."""
    lost = _burst_mask(samples[:, 0], rng, lost_fraction, mean_burst_s)
    out = samples.copy()
    out[np.ix_(lost, _GAZE + _EYELID + _PUPIL + _HEAD)] = np.nan
    out[lost, _CONF] = 0.0
    return out


def scale_aperture(samples, aperture_mm):
    """The eyelid field of a driver whose open eye measures ``aperture_mm``
    (:data:`REFERENCE_APERTURE_MM`), kept in the field's 0-1.5 range."""
    out = samples.copy()
    out[:, _EYELID] = np.clip(out[:, _EYELID] * aperture_mm / REFERENCE_APERTURE_MM, 0.0, 1.5)
    return out


def shift_head(samples, offset_m):
    """The head position of a smaller or taller driver: ``offset_m`` (x, y, z; m) added to
    ``head_x``, ``head_y``, ``head_z``."""
    out = samples.copy()
    out[:, _HEAD[:3]] += np.asarray(offset_m, dtype=np.float64)
    return out
