"""The one decision rule: window score, window quality and glance alerts -> published state.

Every place that turns scores into states uses :class:`DecisionRule` — the daemon, ``distractd
predict``, the evaluation's detection delays and false alarms, the demo — so they cannot disagree.
Per window, in time order:

1. a window whose score is missing (a feature the model needs had no data, or the stream's
   baseline is still warming up) gets no decision: state -1, published as ``unknown``; the
   smoother holds. So does a window whose quality (valid-sample fraction) is below
   ``min_quality`` — unless ``loss_evidence``: a model that scores track loss itself (its
   features include :data:`LOSS_FEATURE`, defined once the stream has delivered gaze) judges
   such a window, because a gaze-only tracker losing the eyes is evidence (a driver looking
   down at a phone), not a reason for silence (docs/evaluation.md, "Real drives");
2. otherwise the score goes through the :class:`DecisionSmoother` (hysteresis or minimum dwell);
3. a glance alert of the kinds in ``alert_kinds`` (by default the Euro NCAP long distraction, a
   single glance away of 3 s or more) raised within ``alert_hold_s`` before the window's end makes
   the state distracted whatever the score: the window detector judges the driver's state over
   10 s, the glance channel judges single glances with its own, shorter latency, and the
   published state is distracted when either says so. Time-sharing alerts are published as events
   but do not set the state by default: in normal driving with frequent mirror checks they fire
   several times an hour (docs/evaluation.md), beyond the false-alarm budget of a state.

:meth:`DecisionRule.escalate` then combines that state with the glance channel, the eyelid channel
and the glance and fatigue alerts into an escalation level, openpilot's driver-monitoring steps
(``selfdrive/monitoring/helpers.py``: pre-alert, prompt, terminal; docs/daemon.md, "Escalation").

Cost: the daemon calls the rule with one or two windows at a time; a single window is checked in
scalar Python, and a call with no alert near takes the smoother's kernel and no other array work.
"""

import inspect
import math

import numpy as np

from ..._validation import Interval, check_params
from ._smoothing import DecisionSmoother

__all__ = ["DecisionRule", "decide", "UNKNOWN", "LOSS_FEATURE", "loss_evidence",
           "ESCALATION_LEVELS", "ESCALATION_STEPS_S", "ESCALATION_ALERT_LEVELS",
           "decision_options", "UNDECIDED_REASONS", "undecided_reasons", "undecided_summary"]

UNKNOWN = -1
"""The state of a window without a decision."""

LOSS_FEATURE = "glance_track_loss_fraction"
"""The window feature that makes track loss evidence to a model (lost samples / samples)."""

ESCALATION_LEVELS = ("none", "pre_alert", "prompt", "unresponsive")
"""The escalation levels of the published state, by index (openpilot's pre-alert, prompt and
terminal steps; its terminal alert for a driver it cannot see is ``driverUnresponsive``)."""

ESCALATION_STEPS_S = (3.0, 5.0, 11.0)
"""Seconds of one episode of inattention (a glance away or an eye closure) at which each level
above 0 is reached: openpilot's active driver monitoring (``_DISTRACTED_TIME`` 11 s, pre-alert
8 s and prompt 6 s before it), which counts closed eyes as it counts a head or gaze away."""

ESCALATION_ALERT_LEVELS = {"long_distraction": 1, "time_sharing": 1, "drowsiness": 1,
                           "microsleep": 2, "sleep": 2}
"""The level an alert of each kind raises the escalation to, for ``alert_hold_s`` after it: a
distraction or drowsiness warning is a pre-alert; an eye closure while driving (Euro NCAP
microsleep, sleep) is prompted at once."""

_UNKNOWN_ONE = np.full(1, UNKNOWN, dtype=np.int8)

_CONSTRAINTS = {"min_quality": Interval(0, 1), "alert_hold_s": Interval(0, None),
                "engagement_s": Interval(0, 60)}

UNDECIDED_REASONS = {
    "no_gaze": "no gaze delivered",
    "fields": "the stream lacks fields every sub-model needs",
    "rate": "the stream's rate is too low for every sub-model",
    "warming": "baseline warming up (the driver's own running baseline is learned first, over "
               "the pipeline's baseline_warmup_s)",
    "features": "a feature had no data in the window (no valid gaze in it)",
    "quality": "window quality below min_quality",
}
"""Why a window gets no decision, by bounded code (the label values of
``distractd_undecided_windows_total``): the first three are the stream's (no sub-model of the
model can score it, :meth:`~distractd.models.detectors.Detector.choose`), the others the
window's."""


def undecided_reasons(states, scores, baseline_ready, stream_code=None):
    """The :data:`UNDECIDED_REASONS` code of each window without a decision.

    Parameters
    ----------
    states : ndarray of shape (n_windows,)
        Published states (:data:`UNKNOWN` for no decision).
    scores : ndarray of shape (n_windows,)
        The detector's scores, NaN where it had none.
    baseline_ready : ndarray of bool, shape (n_windows,)
        Whether the stream's baseline standardised the window (a warming baseline leaves every
        feature NaN; all True without a baseline).
    stream_code : str or None, default=None
        The stream's code when no sub-model can score it.

    Returns
    -------
    ndarray of object, shape (n_windows,)
        The code of each undecided window; None for the decided ones.
    """
    codes = np.full(len(states), None, dtype=object)
    undecided = np.asarray(states) == UNKNOWN
    if stream_code is not None:
        codes[undecided] = stream_code
        return codes
    missing = ~np.isfinite(scores)
    codes[undecided & missing & ~np.asarray(baseline_ready, dtype=bool)] = "warming"
    codes[undecided & missing & np.asarray(baseline_ready, dtype=bool)] = "features"
    codes[undecided & ~missing] = "quality"
    return codes


def undecided_summary(codes, stream_reason=None):
    """One line saying why windows got no decision: ``"12 of 40 windows undecided: 10 baseline
    warming, 2 ..."`` (the stream's own ``stream_reason`` in place of its code's phrase); None
    when every window was decided."""
    known = [code for code in codes if code is not None]
    if not known:
        return None
    phrases = []
    for code, phrase in UNDECIDED_REASONS.items():
        if code in known:
            stream_own = stream_reason is not None and code in ("no_gaze", "fields", "rate")
            phrases.append(f"{known.count(code)} {stream_reason if stream_own else phrase}")
    return f"{len(known)} of {len(codes)} windows undecided: {'; '.join(phrases)}"


def decision_options(config=None, feature_names=()):
    """Keyword arguments of :class:`DecisionRule` — the one place the daemon, ``predict``, the
    benchmarks and the tests take the rule from: ``min_quality``, ``engagement_s`` and the
    smoothing (``mode``, ``on``, ``off``, ``min_dwell_s``) of the daemon's ``config``
    (``sessions.min_quality``, ``sessions.engagement_s`` and the ``smoothing`` section), or without one the rule's own defaults (from which the
    daemon's defaults are taken), and ``loss_evidence`` for a model with ``feature_names``."""
    if config is None:
        defaults = inspect.signature(DecisionRule).parameters
        options = {key: defaults[key].default for key in _CONFIGURED}
    else:
        options = {"min_quality": config["sessions"]["min_quality"],
                   "engagement_s": config["sessions"]["engagement_s"], **config["smoothing"]}
    return {**options, "loss_evidence": loss_evidence(feature_names)}


_CONFIGURED = ("min_quality", "engagement_s", "mode", "on", "off", "min_dwell_s")
"""The rule's options the daemon's configuration sets."""


def loss_evidence(feature_names):
    """Whether a model with these features judges low-quality windows itself (``loss_evidence``
    of :class:`DecisionRule`): it scores the track-loss fraction."""
    return LOSS_FEATURE in feature_names


class DecisionRule:
    """Causal states from window scores, qualities and glance alerts.

    Parameters
    ----------
    min_quality : float, default=0.5
        Windows with a smaller valid-sample fraction get no decision (unless ``loss_evidence``).
    loss_evidence : bool, default=False
        The model scores track loss itself (:func:`loss_evidence` of its feature names): a window
        below ``min_quality`` that has a score is decided too.
    alert_hold_s : float, default=2.0
        How long, in seconds, a glance alert keeps the state distracted.
    alert_kinds : tuple of str, default=("long_distraction",)
        The glance alert kinds that set the state.
    engagement_s : float, default=0.0
        Steering or pedal input (``Windows.input_age_s``) at most this long before a window's end
        proves the driver engaged, as openpilot takes it: the window state then raises no
        pre-alert in :meth:`escalate`. The glance and closure clock and every alert escalate as
        before, so a glance long enough to alert (3 s) is never hidden. 0 turns it off: on the
        real drives a texting driver steers as much as an attentive one (docs/daemon.md,
        "Escalation").
    mode, on, off, min_dwell_s : default="dwell", 1.0, 1.0, 3.0
        The :class:`DecisionSmoother`: by default the score must stay above 1.0 (one training
        spread of the model's scores) for 3 s of window ends before the state turns distracted
        (and below it for 3 s before it turns back): chosen on simulated new drivers so that
        the window detector raises at most about one false alarm per hour of attentive driving
        (docs/evaluation.md, "The decision rule").

    Examples
    --------
    >>> rule = DecisionRule(min_quality=0.5, mode="hysteresis", on=0.5, off=-0.5)
    >>> rule.update([0.5, 1.0, 1.5, 2.0], [0.7, 0.9, 0.0, -0.6], [1.0, 0.2, 1.0, 1.0]).tolist()
    [1, -1, 1, 0]
    """

    def __init__(self, min_quality=0.5, alert_hold_s=2.0, alert_kinds=("long_distraction",),
                 mode="dwell", on=1.0, off=1.0, min_dwell_s=3.0, loss_evidence=False,
                 engagement_s=0.0):
        check_params({"min_quality": min_quality, "alert_hold_s": alert_hold_s,
                      "engagement_s": engagement_s}, _CONSTRAINTS, owner="decision")
        self.engagement_s = float(engagement_s)
        self.min_quality = float(min_quality)
        self.loss_evidence = bool(loss_evidence)
        self.alert_hold_s = float(alert_hold_s)
        self.alert_kinds = tuple(alert_kinds)
        self.smoother = DecisionSmoother(mode, on, off, min_dwell_s)
        self.last_alert_s = -np.inf
        self.level = 0
        self.level_since_s = None
        self.episode_start_s = math.nan
        self.episode_cause = None
        self.episode_top = False   # the episode has reached the top level (its one alert)
        self.glance_s = 0.0    # the glance channel's last known glance away, s (0: none)
        self.closure_s = 0.0   # the eyelid channel's last known eye closure, s (0: none)
        self.escalated_s = math.nan   # the last window end escalate read, s
        self.alert_floor_until_s = [-math.inf] * len(ESCALATION_LEVELS)

    def usable(self, scores, quality):
        """Which windows the detector decides: a finite score and enough quality (or any
        quality, with ``loss_evidence``)."""
        finite = np.isfinite(scores)
        if self.loss_evidence:
            return finite
        return finite & (np.asarray(quality, dtype=np.float64) >= self.min_quality)

    def update(self, t_end, scores, quality, alerts=()):
        """Consume a block of windows; return their states.

        Parameters
        ----------
        t_end : array-like of shape (n_windows,)
            Window end times in seconds, increasing across calls.
        scores : array-like of shape (n_windows,)
            Detector scores (positive = distracted), NaN where there is none.
        quality : array-like of shape (n_windows,)
            Valid-sample fraction of each window.
        alerts : sequence of (float, str), default=()
            ``(time_s, kind)`` of the glance alerts raised up to the last window's end, in time
            order (:meth:`~distractd.pipeline.Windows.alert_list`).

        Returns
        -------
        states : ndarray of shape (n_windows,), int8
            1 distracted, 0 attentive, -1 no decision.
        """
        t_end = np.asarray(t_end, dtype=np.float64)
        scores = np.asarray(scores, dtype=np.float64)
        if len(t_end) == 1:   # the daemon's usual call: :meth:`usable` in scalar Python
            score = float(scores[0])
            usable = math.isfinite(score) and (self.loss_evidence
                                               or float(quality[0]) >= self.min_quality)
            states = self.smoother.update(t_end, scores) if usable else _UNKNOWN_ONE.copy()
        elif (usable := self.usable(scores, quality)).all():
            states = self.smoother.update(t_end, scores)
        else:
            states = np.full(len(t_end), UNKNOWN, dtype=np.int8)
            if usable.any():
                states[usable] = self.smoother.update(t_end[usable], scores[usable])
        kinds = self.alert_kinds
        raised = [t for t, kind in alerts if kind in kinds]
        if not len(t_end) or (not raised and t_end[0] - self.last_alert_s > self.alert_hold_s):
            return states   # no alert holds any of the windows
        alerts_s = np.array(raised, dtype=np.float64)
        at = np.searchsorted(alerts_s, t_end, side="right") - 1  # latest alert by each window end
        latest = np.full(len(t_end), self.last_alert_s)
        latest[at >= 0] = alerts_s[at[at >= 0]]
        states[t_end - latest <= self.alert_hold_s] = 1
        if raised:
            self.last_alert_s = max(self.last_alert_s, raised[-1])
        return states


    def escalate(self, t_end, states, on_road, off_road_s, eyes_closed_s, drowsy, alerts,
                 input_age_s=None):
        """Escalation level of each window (docs/daemon.md, "Escalation"); Python scalar work, as
        the daemon calls it with one or two windows.

        The clock is the current episode of inattention: the time since the start of the glance
        away (``off_road_s``) or the eye closure (``eyes_closed_s``) in progress, whichever began
        first, read at each window's end (never from the window's 10 s aggregates); it runs on
        through windows where neither channel can tell (track loss, eyes not visible) and ends at
        the first window with the gaze on the road (or, for a closure, the eyes seen open), or
        when the glance or closure of the episode has ended and a new one is in progress (a road
        check between window ends). The top level is reached only in a window where a channel
        sees the driver away or the eyes shut, never across track loss alone; it then holds to
        the episode's end and is one ``unresponsive`` climb per episode. Window ends further
        apart than the top step, or going back, end the episode (no data to run on).
        The clock's level (:data:`ESCALATION_STEPS_S`) is raised to at least 1 while the window
        state is distracted (unless the driver steered or pressed a pedal within
        ``engagement_s``) or the driver is drowsy, and to :data:`ESCALATION_ALERT_LEVELS` for
        ``alert_hold_s`` after an alert of those kinds. Only the clock reaches the top level.

        Parameters
        ----------
        t_end : sequence of float
            Window end times, seconds.
        states : sequence of int
            The windows' states from :meth:`update` (1 distracted).
        on_road : sequence of float
            1.0 on the road, 0.0 away, NaN unknown, at each window's end.
        off_road_s, eyes_closed_s : sequence of float
            The current glance away and the current eye closure at each window's end, seconds
            (0 when on the road / eyes open; NaN when the channel cannot tell or is absent).
        drowsy : sequence of bool
            The eyelid channel's drowsiness state at each window's end (False when absent).
        alerts : sequence of sequence of (float, str)
            Per window, ``(time_s, kind)`` of the glance and fatigue alerts it carries (they
            count from that window on, so a stream gets the levels of its whole drive).
        input_age_s : sequence of float or None, default=None
            Seconds from the driver's last steering or pedal input to each window's end (NaN:
            no car); None: no car.

        Returns
        -------
        levels : list of (int, str, float or None)
            Per window, the level (index into :data:`ESCALATION_LEVELS`), its name and the stream
            time it was entered (None at level 0).
        unresponsive : list of (float, float, str)
            For each climb to the top level: when it was reached, when the episode began (s), and
            its cause, ``"eyes_closed"`` or ``"away"``.
        """
        floors = self.alert_floor_until_s
        steps = ESCALATION_STEPS_S
        top = len(steps)
        levels, unresponsive = [], []
        for i in range(len(t_end)):
            for alert_t, kind in alerts[i]:
                level = ESCALATION_ALERT_LEVELS.get(kind)
                if level is not None:
                    floors[level] = max(floors[level], alert_t + self.alert_hold_s)
            t = float(t_end[i])
            if not 0.0 <= t - self.escalated_s <= steps[-1]:
                self._forget_episode()   # a stretch without windows the clock would cross
            self.escalated_s = t
            away, closed = self._episode(t, float(on_road[i]), float(off_road_s[i]),
                                         float(eyes_closed_s[i]))
            inattentive_s = t - self.episode_start_s if self.episode_start_s == \
                self.episode_start_s else 0.0
            clock = sum(inattentive_s >= step for step in steps)
            if clock == top and not (away or closed or self.episode_top):
                clock -= 1   # the top level wants a channel to see the driver away or eyes shut
            level = clock
            engaged = (self.engagement_s > 0.0 and input_age_s is not None
                       and float(input_age_s[i]) <= self.engagement_s)
            if level < 1 and ((states[i] == 1 and not engaged) or drowsy[i]):
                level = 1
            for floor in range(len(floors) - 1, level, -1):
                if floors[floor] >= t:
                    level = floor
                    break
            if level != self.level:
                if level == 0:
                    self.level_since_s = None
                elif level == clock and level > self.level:
                    self.level_since_s = self.episode_start_s + steps[level - 1]
                else:
                    self.level_since_s = t
                if level == top and not self.episode_top:
                    self.episode_top = True
                    unresponsive.append((self.level_since_s, self.episode_start_s,
                                         self.episode_cause))
                self.level = level
            levels.append((level, ESCALATION_LEVELS[level], self.level_since_s))
        return levels, unresponsive

    def _forget_episode(self):
        """No episode runs on, and no glance or closure reading is the same one: after window
        ends further apart than the top step (a forward clock jump, or a tracker silent that
        long) or going back (a clock reset), the clock would otherwise reach the top level on
        the stretch without data alone (issue 37, item 7)."""
        self.episode_start_s = math.nan
        self.episode_top = False
        self.glance_s = self.closure_s = 0.0
        self.level, self.level_since_s = 0, None   # a level reached again is entered anew

    def _episode(self, t, on_road, off_road_s, eyes_closed_s):
        """Advance the episode of inattention by one window's end state; return the glance away
        and the eye closure in progress (s, 0 when none is known).

        A glance or closure belongs to the running episode only while it is the same one: the
        channels' durations only grow within one glance or closure, so a shorter one than the
        last known (or one after a reading of none) is a new one, and the channel saw the
        previous one end (a road check between two glances of a time-sharing sequence, however
        short, as the glance channel's ISO 15007 glance end): the episode starts again with it.
        """
        away = off_road_s if off_road_s > 0.0 else 0.0   # NaN and 0 alike: no glance known
        closed = eyes_closed_s if eyes_closed_s > 0.0 else 0.0
        same_glance = away > 0.0 and 0.0 < self.glance_s <= away
        same_closure = closed > 0.0 and 0.0 < self.closure_s <= closed
        if off_road_s == off_road_s:   # a reading (NaN: the channel cannot tell, keep the last)
            self.glance_s = away
        if eyes_closed_s == eyes_closed_s:
            self.closure_s = closed
        if away or closed:
            began = t - max(away, closed)
            running = self.episode_start_s == self.episode_start_s
            if running and (same_glance or same_closure):
                self.episode_start_s = min(self.episode_start_s, began)
            else:   # a new episode: none ran, or the glance or closure of the last one ended
                self.episode_start_s = began
                self.episode_top = False
            self.episode_cause = "eyes_closed" if closed >= away else "away"
        elif on_road == 1.0 or (self.episode_cause == "eyes_closed" and eyes_closed_s == 0.0):
            self.episode_start_s = math.nan   # seen back: the episode is over
            self.episode_top = False
        return away, closed


def decide(t_end, scores, quality, alerts=(), **rule):
    """Batch states of a whole drive: a fresh :class:`DecisionRule` fed once."""
    return DecisionRule(**rule).update(t_end, scores, quality, alerts)
