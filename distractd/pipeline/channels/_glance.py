"""The glance channel (DESIGN §4.5): road centre learned online, per-sample glance classes,
ISO 15007 glances, the AttenD attention buffer and the Euro NCAP distraction alerts; gaze only.

Everything runs per accepted sample inside the processor's compiled pass (:func:`_glance_step`, the
channel protocol's step), on arrays owned by a :class:`GlanceChannel`; batch is the same step fed
a whole recording (:func:`~distractd.pipeline.detect_glances`). docs/pipeline.md ("Glances") gives the rules and
their sources; in short:

- **Road centre**: the mode of the cyclopean gaze (mean of the eyes' ``gaze_*_yaw/pitch`` valid in
  the sample; no head pose needed), from an exponentially forgetting 2-D histogram (2° bins over
  ±60° yaw, ±40° pitch, box-smoothed 3×3 as samples are added, so the mode is tracked in O(1):
  all bins decay alike, only the bins a sample raises can overtake it), refined by the centroid of
  the 3×3 bins around it. Forgetting: time constant ``glance_road_forget_s``. Ready once
  ``glance_road_warmup_s`` of tracked gaze was seen; until then the public class is ``unknown``,
  the buffer and glance duration are NaN and no alert is raised (the classes run internally from
  the first sample on, so the window features are defined during the warm-up).
- **Classes**: ``on_road`` inside the forward roadway ellipse around the road centre
  (``glance_road_yaw_deg`` × ``glance_road_pitch_deg``), ``mirror`` / ``instrument`` inside their
  circles placed relative to the road centre, ``off_road`` elsewhere, ``lost`` when the eyes are
  not tracked (NaN gaze or low confidence) — unless the head is turned away: a lost sample whose
  head pose lies outside the ``glance_head_*`` ellipse around the head's recent on-road pose
  (over the last ``glance_head_memory_s`` of on-road samples) is ``off_road``, the eyes having
  gone with the head — but not once the head is on its way back (:data:`HEAD_RETURN_SHARE`), in
  a loss that began in the gaze's transition back, or in the first ``glance_lost_carry_s`` of a
  loss after eyes seen dwelling away (the head lags the gaze on the way back).
- **Eyes closed**: a sample whose eyelids are closed with the head facing forward, as the
  fatigue channel reads a closure (``_face.closed_forward``: its open level, closed fraction, open
  fraction while the eyes are untracked, and forward head ellipse), is ``lost``, never away by
  head pose, and starts
  no loss out of the tracker's range: an eye closure is fatigue (microsleep, sleep), not a glance
  away. A closure inside a glance away is bridged for ``glance_lost_carry_s`` like any blink
  (while the eyes are out of range, often a blink on the way back, it goes on with that carry);
  a longer one ends the glance at its last away sample. With the head outside the fatigue channel's
  forward ellipse, or the fatigue channel off (no closures known), the rules above apply.
- **Transitions**: a tracked sample moving toward the road centre faster than
  :data:`TRANSITION_DEG_S` (or :data:`TRANSITION_NOISE` × the tracker's dwelling speed) is in the
  transition back, away from it in the transition away.
- **Glances (ISO 15007-1)**: a glance away lasts from the start of the transition away (the last
  road sample before the gaze left fast, or the last road sample) to the start of the transition
  back (the last away sample not moving back). A run of samples back on the road (or lost beyond
  the carry) ends it once it lasts ``glance_min_dip_s``; shorter runs are bridged; an away run
  shorter than that followed by the road is a flicker, not a glance. Glances shorter than
  ``glance_min_dip_s`` are not counted. Track loss: a loss after eyes seen away is bridged for
  ``glance_lost_carry_s`` without lengthening the glance (a blink); eyes lost out of the
  tracker's range — right after a transition away downward (a lap, a phone; this starts a glance
  too), or seen away last and lost longer than the carry with the head not come back — carry the
  glance until they are back, known to last until :data:`EXIT_HIDDEN_S` before the current
  sample, and end it at the last lost sample. A road-lost-away sequence with a short loss starts
  the glance at the last road sample.
- **AttenD buffer** (Kircher & Ahlström 2009), on the raw classes, time-weighted (the interval
  before each sample takes the sample's class): drains 1 s/s off road; for mirror and instrument
  glances only after their first ``glance_free_s``; refills 1 s/s from ``glance_buffer_delay_s``
  after the last sample away; holds during track loss and gaps.
- **Alerts (Euro NCAP 2023)**: ``long_distraction`` when one glance away (mirrors and instrument
  included) reaches ``glance_long_s``, once per glance; ``time_sharing`` when the glance-away time
  within the last ``glance_sharing_window_s`` (glances since the last reset) reaches
  ``glance_sharing_s``, once until the driver has looked at the road for
  ``glance_sharing_reset_s`` with no sample away (a blink does not break it). Both are checked on
  the samples that lengthen a glance, so a blink or the transition back never raises one.

The module is over 450 lines because the compiled per-sample step, its helpers (road-centre
mode, classification, glance closing, time-sharing) and their state record must live together:
numba kernels inline each other and share the state's fields.
"""

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from .._config import _HEAD_PITCH, _HEAD_YAW, _record
from ._alerts import ChannelAlert, keep_episode, write_alert, write_episodes
from ._face import closed_forward, cyclopean
from ._protocol import Channel, ChannelTrace, implement, one_record

__all__ = ["GLANCE_CLASSES", "ALERT_KINDS", "Alert", "GlanceChannel", "GlanceTrace"]

GLANCE_CLASSES = ("unknown", "on_road", "off_road", "mirror", "instrument", "lost")
"""Per-sample glance classes, indexed by code; ``unknown`` while the road centre warms up."""
UNKNOWN, ON_ROAD, OFF_ROAD, MIRROR, INSTRUMENT, LOST = range(6)

ALERT_KINDS = ("long_distraction", "time_sharing")
"""Alert kinds, indexed by the ``kind`` column of an alert row."""

# Histogram of the road-centre estimate: 2 degree bins over +-60 deg yaw, +-40 deg pitch.
_BIN = math.radians(2.0)
_N_YAW = 60
_N_PITCH = 40
_YAW0 = -math.radians(60.0)
_PITCH0 = -math.radians(40.0)
_RESCALE = 1e100

# Recent glances kept for the time-sharing rule.
TS_GLANCES = 64

# Glance state.
STATE = _record(
    "has_gaze",     # the stream has had a gaze value
    "seen_s",       # tracked gaze time seen, s (warm-up)
    "w",            # weight of the next histogram sample (grows by exp(dt / tau))
    "mode",         # flat index of the histogram mode (-1 none)
    "yaw",          # road centre, rad
    "pitch",
    "ready",
    "prev_cls",     # internal class of the previous sample (-1: none on this clock or after a gap)
    "last_road_t",  # time of the last on-road sample (NaN: none)
    "lost_t",       # first sample of the current lost run
    "pre_lost",     # internal class before the current lost run
    "in_glance",    # 1 inside a glance away
    "start",        # start of the current glance, s
    "last_away",    # last away sample of the current glance, s
    "dip_t",        # first sample of a pending dip (NaN: none)
    "counted",      # the current glance reached glance_min_dip_s
    "long_done",    # the current glance raised its long-distraction alert
    "buffer",       # AttenD buffer, s
    "target",       # class of the current away target for the buffer (-1: none)
    "target_t",     # start of the transition to that target, s
    "return_t",     # last away sample (refill delay counts from it), s
    "road_from",    # last sample that was not on road (time-sharing reset), s
    "ts_done",      # a time-sharing alert was raised since the last reset
    "ts_head",      # next ring row
    "ts_n",         # glances in the ring
    "centre_t",     # time the centre was last refined (from the histogram), s
    "cos",          # cosine of the centre's pitch
    "gaze_yaw",     # previous sample's tracked gaze (NaN: lost, none or before a gap), rad
    "gaze_pitch",
    "motion",       # that sample's motion (see _motion)
    "onset_t",      # last tracked sample not leaving the road centre fast (NaN: none), s
    "run",          # motion before the current eye-loss run (same codes; 0 when tracked)
    "run_away",     # 1 when the eyes were last seen dwelling away (off road, mirror, instrument)
    "run_from_away",    # 1 when they were last seen away and not on their way back
    "glance_head",  # largest head offset (in head ellipses) in the current glance
    "noise",        # mean speed of tracked gaze to or from the road centre while dwelling, rad/s
    "noise_s",      # tracked time that mean has seen, s
    "head_peak",    # largest head offset (in head ellipses) since the head last was inside it
    "lost_end",     # last sample of the current glance lost out of the tracker's range (NaN: none)
    "closed_t",     # first sample of the current run of eyes closed facing forward (NaN: none)
    "exiting",      # 1 when the previous sample was lost out of the tracker's range in a glance
    "road2",        # 1 when a second road region is in use (SECOND_ROAD_SHARE)
    "yaw2",         # its centre, rad
    "pitch2",
)
_ZEROS = np.zeros(1, STATE)   # copied to clear a state (a global array, so numba never frees it)

SECOND_ROAD_SHARE = 0.2
"""A second peak of the gaze histogram at the road's level holding at least this share of the
mode's count is road too: drivers whose gaze alternates between two regions of the road scene
(two screens of a simulator, a long bend), whose second region would otherwise be a glance away
every time they look there (Taamneh et al.'s normal drives: development half)."""
SECOND_ROAD_MASS = 0.35
"""... and holding, in a road ellipse around it, at least this share of the gaze in the road
ellipse around the centre (a mirror's tight fixations can make a high peak with little gaze)."""
SECOND_ROAD_LEVEL = 1.5
"""How far (in ``glance_road_pitch``) the second road region's pitch may lie from the centre's:
the road scene's level, well above a lap or a centre stack (20-40 deg below)."""
CENTRE_EVERY_S = 0.25
"""The centre is re-read from the histogram when its mode moves, and at least this often, s."""

TRANSITION_DEG_S = 150.0
"""Gaze speed toward or away from the road centre, deg/s, above which a sample is in a transition
between the road and a zone (a saccade), not dwelling there. Between fixation and saccade
speeds of the simulated drivers' tracked gaze: per-glance maximum fixation speed 99th percentile
109 deg/s at 60 Hz (42 at 30 Hz); the fastest sample of the return saccade 5th percentile 265
deg/s at 60 Hz (173 at 30 Hz); docs/results/glance-channel.md."""
TRANSITION_NOISE = 5.0
"""A noisy tracker raises the transition speed to this many times the mean dwelling speed (about
4 standard deviations of Gaussian noise), learned over :data:`NOISE_MEMORY_S`."""
NOISE_MEMORY_S = 5.0
EXIT_HIDDEN_S = 0.15
"""Eyes lost out of the tracker's range may have started back this long before they are seen
again (a 40 degree saccade takes about 0.11 s on the main sequence, plus a sample): while they
stay lost, the glance is known to last until this long before the current sample."""
HEAD_RETURN_SHARE = 0.25
"""A head that has come back this share of its largest offset since it left the head ellipse (and
at least one ellipse) is on its way back to the road (its turn lags the gaze's): a lost sample
then is not away by head pose."""

# Per-sample outputs of _glance_step.
OUTPUT = _record(
    "cls",        # public class code
    "internal",   # internal class code (from the provisional centre during the warm-up)
    "has_gaze",
    "dt",         # observed time step (0 after a gap), s
    "count",      # 1 when a glance reached glance_min_dip_s at this sample
    "duration",   # current glance duration at a sample away, else 0, s
    "on_road",    # 1 on road, 0 away, NaN lost or warming up
    "off_s",      # current glance away so far (0 on the road; NaN warming up), s
    "buffer",     # AttenD buffer (NaN warming up), s
    "ready",
    "road_yaw",   # road centre after the sample (NaN before any gaze), rad
    "road_pitch",
)


@dataclass(frozen=True)
class Alert(ChannelAlert):
    """A glance alert (Euro NCAP 2023 driver state monitoring): ``kind`` one of
    :data:`ALERT_KINDS`, ``t`` the time it was raised, and

    Attributes
    ----------
    glances : tuple of (float, float)
        Start and end (so far), seconds, of the glances away the alert is based on.
    away_s : float
        Glance-away time that crossed the threshold, seconds (the glance's duration, or the
        time-sharing total within the rule's span).
    """

    glances: tuple
    away_s: float


@dataclass
class GlanceTrace(ChannelTrace):
    """Per-sample glance channel of a recording (see :func:`~distractd.pipeline.detect_glances`):
    ``t``, and

    Attributes
    ----------
    glance : ndarray of shape (n_samples,), dtype int8
        Class code (index into :data:`GLANCE_CLASSES`); -1 for a rejected sample.
    off_road_s : ndarray of shape (n_samples,)
        Current glance away so far, seconds (0 on road; NaN warming up or rejected).
    buffer_s : ndarray of shape (n_samples,)
        AttenD buffer, seconds (NaN warming up or rejected).
    road_yaw_deg, road_pitch_deg : ndarray of shape (n_samples,)
        Road-centre estimate after the sample, degrees (NaN before any gaze).
    alerts : list of Alert
    """

    glance: np.ndarray
    off_road_s: np.ndarray
    buffer_s: np.ndarray
    road_yaw_deg: np.ndarray
    road_pitch_deg: np.ndarray
    alerts: list


class GlanceChannel(Channel, name="glances", output=OUTPUT, alert=Alert, kinds=ALERT_KINDS,
                    max_alert_rows=TS_GLANCES + 2):   # a row per glance: the ring and the current
    """State of one stream's glance channel; the processor feeds it (see the module docstring and
    :mod:`~distractd.pipeline.channels`).

    Per-stream memory: about 21 KB (the road-centre histogram of 40 x 60 bins and the last
    :data:`TS_GLANCES` glances).

    Parameters
    ----------
    config : PipelineConfig

    Attributes
    ----------
    road_ready : bool
        The road centre is learned (the warm-up is over).
    road_progress : float
        How far the road-centre warm-up is, 0..1: tracked gaze time seen over
        ``glance_road_warmup_s`` (1 once ready; for the state message's calibration status).
    road_centre_deg : tuple of float
        Road-centre yaw and pitch in degrees (+ right, + up), NaN before any gaze.
    """

    def __init__(self, config):
        super().__init__(config)
        self._state = one_record(STATE, _reset)
        self.kernel = (self._state, np.zeros(1, OUTPUT), np.zeros(_N_PITCH * _N_YAW),
                       np.zeros((TS_GLANCES, 2)))
        """The compiled pass's arrays: the state, the latest sample's outputs, the road-centre
        histogram and the recent glances (start, end)."""

    @staticmethod
    def trace(t, rejected, outputs, alerts):
        """The :class:`GlanceTrace` of a recording's per-sample outputs (``rejected``: samples
        validation dropped; their outputs are NaN)."""
        glance = np.where(np.isnan(outputs["cls"]), -1, outputs["cls"]).astype(np.int8)
        return GlanceTrace(t, glance, outputs["off_s"].copy(), outputs["buffer"].copy(),
                           np.degrees(outputs["road_yaw"]), np.degrees(outputs["road_pitch"]),
                           alerts)

    @property
    def road_ready(self):
        return bool(self._state["ready"][0] == 1.0)

    @property
    def road_progress(self):
        if self.road_ready:
            return 1.0
        warmup = self.config.glance_road_warmup_s
        if warmup <= 0.0:
            return 1.0
        return min(float(self._state["seen_s"][0]) / warmup, 1.0)

    @property
    def road_centre_deg(self):
        state = self._state[0]
        return (math.degrees(state["yaw"]), math.degrees(state["pitch"]))


@njit(cache=True)
def _reset(states):
    """The initial state in the one-record array ``states``: no road centre, no glance."""
    states[0] = _ZEROS[0]
    state = states[0]
    state.mode = -1.0
    state.yaw = state.pitch = np.nan
    state.w = 1.0
    _clear_machine(state)


@njit(cache=True)
def _restart(kernel, face):
    """A new clock: the glance channel starts afresh, road-centre warm-up and on-road head pose
    included, like the windows and derived measures (a restarted tracker may have a new frame)."""
    states, _, hist, ring = kernel
    _reset(states)
    hist[:] = 0.0
    ring[:, :] = 0.0
    face.head_yaw = face.head_pitch = face.head_seen_s = 0.0


@njit(cache=True)
def _clear_machine(state):
    """Forget the glance machine, buffer and time-sharing history (a new clock or a gap); the
    road centre and its histogram are kept."""
    state.prev_cls = -1.0
    state.last_road_t = np.nan
    state.lost_t = np.nan
    state.pre_lost = -1.0
    state.in_glance = 0.0
    state.dip_t = np.nan
    state.counted = 0.0
    state.long_done = 0.0
    state.buffer = np.nan
    state.target = -1.0
    state.return_t = -np.inf
    state.road_from = np.nan
    state.ts_done = 0.0
    state.ts_head = 0.0
    state.ts_n = 0.0
    state.gaze_yaw = state.gaze_pitch = np.nan
    state.motion = 0.0
    state.onset_t = np.nan
    state.run = 0.0
    state.run_away = 0.0
    state.run_from_away = 0.0
    state.glance_head = 0.0
    state.head_peak = 0.0
    state.lost_end = np.nan
    state.closed_t = np.nan
    state.exiting = 0.0


@njit(cache=True, inline="always")
def _learn(t, yaw, pitch, state, hist, params):
    """Add a tracked gaze sample (rad) to the forgetting histogram with the current weight;
    update mode and centre. False when the gaze lies outside the histogram."""
    w = state.w
    i = int(np.floor((pitch - _PITCH0) / _BIN))
    j = int(np.floor((yaw - _YAW0) / _BIN))
    if i < 0 or i >= _N_PITCH or j < 0 or j >= _N_YAW:
        return False
    old = int(state.mode)
    mode = old
    for ii in range(max(i - 1, 0), min(i + 2, _N_PITCH)):
        for jj in range(max(j - 1, 0), min(j + 2, _N_YAW)):
            k = ii * _N_YAW + jj
            hist[k] += w
            if mode < 0 or hist[k] > hist[mode]:
                mode = k
    state.mode = mode
    if mode == old and 0.0 <= t - state.centre_t < CENTRE_EVERY_S:
        return True
    state.centre_t = t
    state.yaw, state.pitch = _centroid(hist, mode)
    state.cos = np.cos(state.pitch)
    _second_road(state, hist, params)
    return True


@njit(cache=True, inline="always")
def _centroid(hist, k):
    """The centroid (yaw, pitch, rad) of the 3 x 3 bins around flat bin ``k``."""
    mi = k // _N_YAW
    mj = k % _N_YAW
    total = 0.0
    sy = 0.0
    sp = 0.0
    for ii in range(max(mi - 1, 0), min(mi + 2, _N_PITCH)):
        for jj in range(max(mj - 1, 0), min(mj + 2, _N_YAW)):
            h = hist[ii * _N_YAW + jj]
            total += h
            sy += h * (_YAW0 + (jj + 0.5) * _BIN)
            sp += h * (_PITCH0 + (ii + 0.5) * _BIN)
    return sy / total, sp / total


@njit(cache=True, inline="always")
def _ellipse_mass(hist, yaw, pitch, cos_pitch, params):
    """The histogram's count in the forward roadway ellipse's shape around (``yaw``, ``pitch``)."""
    total = 0.0
    for ii in range(_N_PITCH):
        dp = (_PITCH0 + (ii + 0.5) * _BIN - pitch) / params.glance_road_pitch
        if dp * dp > 1.0:
            continue
        for jj in range(_N_YAW):
            dy = (_YAW0 + (jj + 0.5) * _BIN - yaw) * cos_pitch / params.glance_road_yaw
            if dy * dy + dp * dp <= 1.0:
                total += hist[ii * _N_YAW + jj]
    return total


@njit(cache=True, inline="always")
def _second_road(state, hist, params):
    """Look for a second road region: the histogram's largest local peak outside the forward
    roadway ellipse around the centre, at the road's level (within ``glance_road_pitch`` of the
    centre's pitch), holding at least :data:`SECOND_ROAD_SHARE` of the mode's count and
    :data:`SECOND_ROAD_MASS` of the road's gaze; its centre is the centroid of its 3 x 3 bins."""
    best = -1
    best_h = SECOND_ROAD_SHARE * hist[int(state.mode)]
    for ii in range(1, _N_PITCH - 1):
        dp = (_PITCH0 + (ii + 0.5) * _BIN - state.pitch) / params.glance_road_pitch
        if abs(dp) > SECOND_ROAD_LEVEL:
            continue
        for jj in range(1, _N_YAW - 1):
            h = hist[ii * _N_YAW + jj]
            if h <= best_h:
                continue
            dy = (_YAW0 + (jj + 0.5) * _BIN - state.yaw) * state.cos / params.glance_road_yaw
            if dy * dy + dp * dp <= 1.0:
                continue
            peak = True
            for di in range(-1, 2):
                for dj in range(-1, 2):
                    if hist[(ii + di) * _N_YAW + jj + dj] > h:
                        peak = False
            if peak:
                best = ii * _N_YAW + jj
                best_h = h
    if best < 0:
        state.road2 = 0.0
        return
    mi = best // _N_YAW
    mj = best % _N_YAW
    second = _ellipse_mass(hist, _YAW0 + (mj + 0.5) * _BIN, _PITCH0 + (mi + 0.5) * _BIN,
                           state.cos, params)
    if second < SECOND_ROAD_MASS * _ellipse_mass(hist, state.yaw, state.pitch, state.cos, params):
        state.road2 = 0.0   # a peak, but little gaze around it (a mirror checked often)
        return
    state.road2 = 1.0
    state.yaw2, state.pitch2 = _centroid(hist, best)


@njit(cache=True, inline="always")
def _learn_head(x, step, params, face):
    """Follow the head pose of on-road samples (into the shared ``face`` record): the running
    mean over the first ``glance_head_memory_s``, then an exponential one with that time constant."""
    yaw = x[_HEAD_YAW]
    pitch = x[_HEAD_PITCH]
    if yaw != yaw or pitch != pitch:
        return
    seen = face.head_seen_s + step
    face.head_seen_s = seen
    alpha = min(step / min(seen, params.glance_head_memory_s), 1.0)
    face.head_yaw += alpha * (yaw - face.head_yaw)
    face.head_pitch += alpha * (pitch - face.head_pitch)


@njit(cache=True, inline="always")
def _head_offset(x, params, face):
    """How far the head of a sample is turned from its recent on-road pose, in ``glance_head_*``
    ellipses (> 1 outside); 0 without a head pose, an on-road pose or the fallback."""
    if params.glance_head_yaw <= 0.0 or params.glance_head_pitch <= 0.0:
        return 0.0
    if face.head_seen_s <= 0.0:
        return 0.0
    yaw = x[_HEAD_YAW]
    pitch = x[_HEAD_PITCH]
    if yaw != yaw or pitch != pitch:
        return 0.0
    dyaw = (yaw - face.head_yaw) / params.glance_head_yaw
    dpitch = (pitch - face.head_pitch) / params.glance_head_pitch
    return np.sqrt(dyaw * dyaw + dpitch * dpitch)


@njit(cache=True, inline="always")
def _road_distance(yaw, pitch, state):
    """Angle of a gaze direction from the road centre, rad (small-angle form)."""
    dyaw = (yaw - state.yaw) * state.cos
    dpitch = pitch - state.pitch
    return np.sqrt(dyaw * dyaw + dpitch * dpitch)


@njit(cache=True, inline="always")
def _motion(yaw, pitch, step, state):
    """How a tracked gaze sample moved from the previous one, relative to the road centre:
    -1 returning toward it, 1 leaving it, 2 leaving it downward, faster than
    :data:`TRANSITION_DEG_S`; 0 otherwise or unknown (no previous tracked sample, no centre)."""
    if step <= 0.0 or state.gaze_yaw != state.gaze_yaw or state.mode < 0.0:
        return 0.0
    radial = (_road_distance(yaw, pitch, state)
              - _road_distance(state.gaze_yaw, state.gaze_pitch, state)) / step
    limit = max(math.radians(TRANSITION_DEG_S), TRANSITION_NOISE * state.noise)
    if radial < -limit:
        return -1.0
    if radial > limit:
        return 2.0 if pitch < state.gaze_pitch else 1.0
    seen = state.noise_s + step
    state.noise_s = seen
    state.noise += min(step / min(seen, NOISE_MEMORY_S), 1.0) * (abs(radial) - state.noise)
    return 0.0


@njit(cache=True, inline="always")
def _inside(yaw, pitch, yaw0, pitch0, radius, cos_pitch):
    dyaw = (yaw - yaw0) * cos_pitch
    dpitch = pitch - pitch0
    return dyaw * dyaw + dpitch * dpitch <= radius * radius


@njit(cache=True, inline="always")
def _classify(yaw, pitch, params, state):
    yc = state.yaw
    pc = state.pitch
    cos_pitch = state.cos   # of the centre: distances on the sphere, small-angle form
    dyaw = (yaw - yc) * cos_pitch / params.glance_road_yaw
    dpitch = (pitch - pc) / params.glance_road_pitch
    if dyaw * dyaw + dpitch * dpitch <= 1.0:
        return ON_ROAD
    if state.road2 == 1.0:
        dyaw = (yaw - state.yaw2) * cos_pitch / params.glance_road_yaw
        dpitch = (pitch - state.pitch2) / params.glance_road_pitch
        if dyaw * dyaw + dpitch * dpitch <= 1.0:
            return ON_ROAD
    for r in range(4):
        region = params.glance_regions[r]
        if _inside(yaw, pitch, yc + region[0], pc + region[1], region[2], cos_pitch):
            return INSTRUMENT if r == 3 else MIRROR
    return OFF_ROAD


@njit(cache=True, inline="always")
def _close_glance(state, ring, min_dip):
    """End the current glance at its last away sample; keep it for time-sharing if it counts."""
    start = state.start
    end = state.last_away
    if state.lost_end > end:   # it ended out of the tracker's range: as far as the eyes were seen
        end = state.lost_end
    if end - start >= min_dip:
        state.ts_head, state.ts_n = keep_episode(ring, state.ts_head, state.ts_n, start, end)
    state.in_glance = 0.0
    state.dip_t = np.nan


@njit(cache=True, inline="always")
def _glance_step(x, has_gaze, t, dt, gap, lost, closed, params, state, face, hist, ring, out,
                 alerts, n_a):
    """Advance the glance channel by one accepted sample; write its outputs to ``out`` (an
    :data:`OUTPUT` record) and any alert rows to ``alerts`` from row ``n_a``. Returns the new
    alert row count.

    ``has_gaze``: the sample had a gaze value before validation (a tracker with a gaze field);
    ``dt`` is the step from the previous accepted sample (0 for the first), ``gap`` whether the
    step is a gap, ``lost`` whether the eyes are untracked (validation's track loss), ``closed``
    whether the eyelids are closed with the head facing forward (the fatigue channel's closure):
    track loss that is neither away by head pose nor out of the tracker's range. ``face`` holds
    the on-road head pose this step learns.
    """
    if has_gaze:
        state.has_gaze = 1.0
    grow = dt / params.glance_forget_s
    if grow < 1e-3:   # exp to within 1e-13 (a sample step); exp itself across gaps
        w = state.w * (1.0 + grow * (1.0 + 0.5 * grow * (1.0 + grow / 3.0)))
    else:
        w = state.w * np.exp(grow)
    if w > _RESCALE:
        hist /= w
        w = 1.0
    state.w = w
    out.has_gaze = state.has_gaze
    step = 0.0 if gap else dt
    out.dt = step
    out.count = 0.0
    out.duration = 0.0
    min_dip = params.glance_min_dip_s
    if gap:
        if state.in_glance == 1.0:
            _close_glance(state, ring, min_dip)
        buffer = state.buffer
        _clear_machine(state)
        state.buffer = buffer
    yaw, pitch = cyclopean(x)  # validation has blanked the gaze when lost
    cls = LOST
    if not lost and not closed and yaw == yaw:
        cls = UNKNOWN
        if _learn(t, yaw, pitch, state, hist, params):
            state.seen_s += step
            if state.seen_s >= params.glance_warmup_s and state.ready == 0.0:
                state.ready = 1.0
                state.buffer = params.glance_buffer_s
        if state.mode >= 0.0:
            cls = _classify(yaw, pitch, params, state)
    motion = 0.0
    if cls != LOST:
        motion = _motion(yaw, pitch, step, state)
        state.run = 0.0
        state.run_away = 0.0
        state.run_from_away = 0.0
    elif state.gaze_yaw == state.gaze_yaw:   # the eyes were lost at this sample
        state.run = state.motion
        state.run_away = 1.0 if state.prev_cls > ON_ROAD and state.motion == 0.0 else 0.0
        state.run_from_away = 1.0 if state.prev_cls > ON_ROAD and state.motion >= 0.0 else 0.0
        state.lost_t = t
    ready = state.ready == 1.0
    if cls == ON_ROAD and step > 0.0:
        _learn_head(x, step, params, face)
    head = _head_offset(x, params, face) if ready else 0.0
    if (cls == LOST and not closed and head > 1.0 and state.run != -1.0
            and head > state.head_peak - max(1.0, HEAD_RETURN_SHARE * state.head_peak)
            and not (state.run_away == 1.0 and t - state.lost_t <= params.glance_lost_carry_s)):
        # the eyes went with the head, which is not on its way back; a loss from eyes seen away
        # is theirs to bridge first (a blink, often with the saccade back: the head lags); eyes
        # closed facing forward went nowhere
        cls = OFF_ROAD
    state.head_peak = max(state.head_peak, head) if head > 1.0 else 0.0
    away = cls == OFF_ROAD or cls == MIRROR or cls == INSTRUMENT
    # eyes lost out of the tracker's range: after leaving the road downward (toward a lap or
    # phone), or seen away last and lost longer than a blink (glance_lost_carry_s) with the head
    # not come back: the glance goes on until they are back. Eyes seen closed are not out of
    # range, but a blink (glance_lost_carry_s) while they are, often on the way back, goes on
    # with it. Other losses inside a glance (a blink) are bridged for glance_lost_carry_s
    # without growing it
    carry_s = params.glance_lost_carry_s
    state.glance_head = max(state.glance_head, head)
    head_back = (state.glance_head > 1.0 and head < state.glance_head
                 - max(1.0, HEAD_RETURN_SHARE * state.glance_head))
    if not closed:
        state.closed_t = np.nan
    elif state.closed_t != state.closed_t:
        state.closed_t = t
    exit_lost = cls == LOST and (not closed and (state.run == 2.0 or (
        state.in_glance == 1.0 and state.run_from_away == 1.0 and t - state.lost_t >= carry_s
        and not head_back)) or (closed and state.exiting == 1.0 and t - state.closed_t <= carry_s))
    state.exiting = 1.0 if exit_lost else 0.0
    carry = exit_lost or (cls == LOST and state.in_glance == 1.0
                          and t - state.last_away <= carry_s)
    prev = state.prev_cls
    t_prev = t - dt

    # ISO 15007 glances away
    if state.in_glance == 1.0 and not carry:
        if away:
            if state.dip_t == state.dip_t:
                if t - state.dip_t >= min_dip:   # the dip was long enough: a new glance
                    _close_glance(state, ring, min_dip)
                else:
                    state.dip_t = np.nan       # bridged
        else:
            if state.dip_t != state.dip_t:
                state.dip_t = t
            if t - state.dip_t >= min_dip or (state.counted == 0.0 and cls == ON_ROAD):
                # (a flicker out of the road ellipse and back is no glance)
                _close_glance(state, ring, min_dip)
    if (away or exit_lost) and state.in_glance == 0.0:
        start = t
        if prev == ON_ROAD and not gap:
            start = t_prev   # ISO 15007: from where the transition away began
            if t_prev - min_dip <= state.onset_t < t_prev:
                start = state.onset_t
        elif (prev == LOST and state.pre_lost == ON_ROAD
              and t - state.lost_t < max(min_dip, carry_s)):
            start = state.last_road_t
        state.in_glance = 1.0
        state.start = start
        state.last_away = t
        state.lost_end = np.nan
        state.glance_head = head
        state.dip_t = np.nan
        state.counted = 0.0
        state.long_done = 0.0
    if away or carry:
        # the glance's end so far: an away sample not in the transition back (ISO 15007: the
        # glance ends where the transition back starts); in a loss out of range, up to the time
        # the eyes could have started back unseen
        end = np.nan
        if away and motion != -1.0:
            end = t
        elif exit_lost:
            end = t - EXIT_HIDDEN_S
            state.lost_end = t
            state.dip_t = np.nan   # the loss so far was no dip
        if end > state.last_away:
            state.last_away = end
        duration = state.last_away - state.start
        out.duration = duration
        if state.counted == 0.0 and duration >= min_dip:
            state.counted = 1.0
            out.count = 1.0
        if end == end and ready:
            if state.long_done == 0.0 and duration >= params.glance_long_s:
                state.long_done = 1.0
                n_a = write_alert(alerts, n_a, 0.0, t, duration, np.nan, state.start, end, True)
            if state.ts_done == 0.0:
                n_a = _time_sharing(t, state.last_away, params, state, ring, alerts, n_a)
    # lost runs and road times
    if cls == LOST and prev != LOST:
        state.pre_lost = prev
    if cls == ON_ROAD:
        state.last_road_t = t
        if state.road_from != state.road_from or gap:
            state.road_from = t_prev if not gap and prev >= 0 else t
        if t - state.road_from >= params.glance_sharing_reset_s:
            state.ts_n = 0.0
            state.ts_done = 0.0
    elif away or exit_lost:   # track loss (a blink) does not break a road check
        state.road_from = t

    # AttenD buffer on the raw classes, the interval (t - dt, t] taking this sample's class
    if ready and step > 0.0:
        buffer = state.buffer
        if away:
            if cls != state.target:
                state.target = cls
                state.target_t = t_prev
            drain = step
            if cls != OFF_ROAD:
                free_end = state.target_t + params.glance_free_s
                drain = max(0.0, t - max(t_prev, free_end))
            buffer = max(0.0, buffer - drain)
            state.return_t = t
        elif cls == ON_ROAD:
            state.target = -1.0
            refill = max(0.0, t - max(t_prev, state.return_t + params.glance_buffer_delay_s))
            buffer = min(params.glance_buffer_s, buffer + refill)
        state.buffer = buffer
    elif away:
        state.return_t = t

    state.prev_cls = cls
    state.motion = motion
    if cls != LOST and motion <= 0.0:
        state.onset_t = t
    state.gaze_yaw = yaw if cls != LOST else np.nan
    state.gaze_pitch = pitch if cls != LOST else np.nan
    out.internal = cls
    out.ready = state.ready
    out.road_yaw = state.yaw
    out.road_pitch = state.pitch
    if ready:
        out.cls = cls
        out.on_road = 1.0 if cls == ON_ROAD else (0.0 if away else np.nan)
        if state.in_glance == 1.0:
            out.off_s = state.last_away - state.start
        else:
            out.off_s = 0.0
        out.buffer = state.buffer
    else:
        out.cls = UNKNOWN
        out.on_road = np.nan
        out.off_s = np.nan
        out.buffer = np.nan
    return n_a


@njit(cache=True, inline="always")
def _time_sharing(t, end, params, state, ring, alerts, n_a):
    """Check the time-sharing rule at sample ``t`` of a glance away that lasts until ``end`` so
    far; write an alert when it fires."""
    since = t - params.glance_sharing_window_s
    total = end - max(state.start, since)
    n = int(state.ts_n)
    size = ring.shape[0]
    head = int(state.ts_head)
    used = 0
    for i in range(n):
        row = (head - 1 - i) % size
        if ring[row, 1] <= since:
            break
        total += ring[row, 1] - max(ring[row, 0], since)
        used += 1
    if total < params.glance_sharing_s:
        return n_a
    state.ts_done = 1.0
    n_a = write_episodes(alerts, n_a, 1.0, t, total, np.nan, ring, head, used)
    return write_alert(alerts, n_a, 1.0, t, total, np.nan, state.start, end, used == 0)


@njit(cache=True, inline="always")
def _step(kernel, x, sample, params, face, alerts, n_a):
    """The protocol's step: :func:`_glance_step`, eyes closed facing forward read from ``face``."""
    states, outs, hist, ring = kernel
    lost = sample.lost == 1.0
    return _glance_step(x, sample.has_gaze == 1.0, sample.t, sample.dt, sample.gap == 1.0, lost,
                        closed_forward(x, lost, params, face), params, states[0], face, hist,
                        ring, outs[0], alerts, n_a)


@njit(cache=True, inline="always")
def _to_hop(kernel, slot):
    """Add the latest sample's outputs to its hop: the glance sums, the glance state."""
    g = kernel[1][0]
    if g.has_gaze == 1.0:
        cls = g.internal
        slot.g_n += 1.0
        slot.g_time_s += g.dt
        if cls == LOST:
            slot.g_lost += 1.0
        elif cls == ON_ROAD:
            slot.g_tracked += 1.0
            slot.g_road += 1.0
        elif cls == OFF_ROAD or cls == MIRROR or cls == INSTRUMENT:
            slot.g_tracked += 1.0
            slot.g_away_s += g.dt
        slot.g_count += g.count
        slot.g_longest = max(slot.g_longest, g.duration)
    slot.g_set = 1.0
    slot.g_on_road = g.on_road
    slot.g_off_s = g.off_s
    slot.g_buffer = g.buffer
    slot.g_ready = g.ready


implement(STATE, "glances", _step, _to_hop, _restart)
