"""The decision rule's escalation levels (issue 27): openpilot's 3 / 5 / 11 s steps over one
episode of inattention, the floors set by the window state, drowsiness and alerts, and the one
``unresponsive`` climb; and the rule's states unchanged by the single-window fast path (issue 26)."""

import math

import numpy as np
import pytest

from distractd.models.detectors import DecisionRule, decide

NAN = math.nan
HOP_S = 0.5


def _run(rule, t, on_road, off_road_s, eyes_closed_s, states=None, drowsy=None, alerts=(),
         split=1, input_age_s=None):
    """Levels and unresponsive climbs of windows fed ``split`` at a time."""
    n = len(t)
    input_age_s = np.full(n, NAN) if input_age_s is None else np.asarray(input_age_s)
    states = np.zeros(n, dtype=np.int8) if states is None else np.asarray(states)
    drowsy = np.zeros(n, dtype=bool) if drowsy is None else np.asarray(drowsy)
    carried = [[] for _ in range(n)]   # each alert rides with the first window ending after it
    for a_t, kind in alerts:
        carried[min(int(np.searchsorted(t, a_t)), n - 1)].append((a_t, kind))
    levels, climbs = [], []
    for lo in range(0, n, split):
        part = slice(lo, lo + split)
        got, up = rule.escalate(t[part], states[part], on_road[part], off_road_s[part],
                                eyes_closed_s[part], drowsy[part], carried[part],
                                input_age_s[part])
        levels += got
        climbs += up
    return levels, climbs


def _away(t, start_s, end_s):
    """Glance channel columns of one glance away over [start_s, end_s), eyes open."""
    away = (t >= start_s) & (t < end_s)
    on_road = np.where(away, 0.0, 1.0)
    off_road_s = np.where(away, t - start_s, 0.0)
    return on_road, off_road_s, np.zeros(len(t))


def test_one_glance_away_climbs_at_3_5_and_11_s_then_drops_when_back_on_the_road():
    t = np.arange(1, 61) * HOP_S
    on_road, off_road_s, closed = _away(t, 5.2, 18.2)
    levels, climbs = _run(DecisionRule(), t, on_road, off_road_s, closed)
    level = np.array([row[0] for row in levels])
    inattentive = np.where(on_road == 0.0, off_road_s, 0.0)
    expected = np.searchsorted([3.0, 5.0, 11.0], inattentive, side="right")
    assert level.tolist() == expected.tolist()
    assert [row[1] for row in levels][np.flatnonzero(level == 3)[0]] == "unresponsive"
    assert climbs == [(pytest.approx(16.2), pytest.approx(5.2), "away")]
    since = {row[0]: row[2] for row in levels}
    assert since[1] == pytest.approx(8.2) and since[2] == pytest.approx(10.2)
    assert level[-1] == 0 and levels[-1][2] is None


def test_glances_under_3_s_never_escalate_and_longer_ones_stop_below_the_top():
    t = np.arange(1, 121) * HOP_S
    on_road, off_road_s, closed = np.ones(len(t)), np.zeros(len(t)), np.zeros(len(t))
    for start, length in ((3.0, 2.5), (8.0, 2.9), (14.0, 4.0), (22.0, 6.0), (31.0, 2.0)):
        part_on, part_off, _ = _away(t, start, start + length)
        on_road, off_road_s = np.minimum(on_road, part_on), np.maximum(off_road_s, part_off)
    levels, climbs = _run(DecisionRule(), t, on_road, off_road_s, closed)
    level = np.array([row[0] for row in levels])
    assert level[t < 14.0].max() == 0
    assert level[(t >= 14.0) & (t < 20.0)].max() == 1
    assert level.max() == 2 and climbs == []


def test_an_eye_closure_escalates_through_gaze_loss_and_ends_when_the_eyes_open():
    t = np.arange(1, 61) * HOP_S
    shut = (t >= 4.0) & (t < 20.0)
    on_road = np.where(shut, NAN, 1.0)        # the tracker loses the gaze under closed lids
    off_road_s = np.where(shut, NAN, 0.0)
    closed = np.where(shut, t - 4.0, 0.0)
    levels, climbs = _run(DecisionRule(), t, on_road, off_road_s, closed)
    assert climbs == [(pytest.approx(15.0), pytest.approx(4.0), "eyes_closed")]
    assert levels[int(np.flatnonzero(t == 20.0)[0])][0] == 0


def test_track_loss_alone_never_reaches_the_top_level():
    """A glance away, then the tracker loses everything for 20 s: the episode runs on (the
    driver was not seen back) but stops below ``unresponsive``."""
    t = np.arange(1, 81) * HOP_S
    on_road, off_road_s, closed = _away(t, 2.0, 4.0)
    lost = t >= 4.0
    on_road[lost], off_road_s[lost], closed[lost] = NAN, NAN, NAN
    levels, climbs = _run(DecisionRule(), t, on_road, off_road_s, closed)
    assert climbs == [] and max(row[0] for row in levels) == 2


def test_floors_from_the_window_state_drowsiness_and_alerts():
    t = np.arange(1, 41) * HOP_S
    n = len(t)
    states = (t >= 2.0) & (t < 4.0)
    drowsy = (t >= 6.0) & (t < 7.0)
    alerts = [(10.2, "microsleep"), (15.0, "time_sharing")]
    levels, climbs = _run(DecisionRule(alert_hold_s=2.0), t, np.ones(n), np.zeros(n),
                          np.zeros(n), states.astype(np.int8), drowsy, alerts)
    level = np.array([row[0] for row in levels])
    assert (level[states] == 1).all() and (level[drowsy] == 1).all()
    assert level[(t >= 10.5) & (t <= 12.0)].tolist() == [2] * 4
    assert level[(t >= 15.0) & (t <= 17.0)].tolist() == [1] * 5
    assert level[(t > 12.0) & (t < 15.0)].max() == 0 and level[t > 17.0].max() == 0
    assert climbs == []


def test_steering_proves_engagement_to_the_window_state_never_to_a_long_glance():
    # the window state says distracted over 2-12 s while the driver steers (input 0.4 s before
    # each window's end) and, from 8 s, looks away for 4 s; drowsy at 14-15 s
    t = np.arange(1, 41) * HOP_S
    n = len(t)
    states = ((t >= 2.0) & (t < 12.0)).astype(np.int8)
    drowsy = (t >= 14.0) & (t < 15.0)
    on_road, off_road_s, closed = _away(t, 8.0, 12.0)
    steering = np.full(n, 0.4)
    plain, _ = _run(DecisionRule(), t, on_road, off_road_s, closed, states, drowsy,
                    input_age_s=steering)
    engaged, _ = _run(DecisionRule(engagement_s=1.0), t, on_road, off_road_s, closed, states,
                      drowsy, input_age_s=steering)
    plain = np.array([row[0] for row in plain])
    engaged = np.array([row[0] for row in engaged])
    assert (plain[states == 1] >= 1).all()
    glance = off_road_s >= 3.0
    assert glance.sum() == 2 and (engaged[glance] == 1).all()     # 3 s away: never hidden
    assert engaged[(states == 1) & ~glance].max() == 0           # the state's pre-alert spared
    assert (engaged[drowsy] == 1).all()                           # drowsiness is not engagement
    # input longer ago than engagement_s, or no car: the state escalates as before
    stale, _ = _run(DecisionRule(engagement_s=1.0), t, on_road, off_road_s, closed, states,
                    drowsy, input_age_s=np.full(n, 1.5))
    no_car, _ = _run(DecisionRule(engagement_s=1.0), t, on_road, off_road_s, closed, states,
                     drowsy)
    assert [row[0] for row in stale] == [row[0] for row in no_car] == plain.tolist()


@pytest.mark.parametrize("split", [1, 2, 7])
def test_window_by_window_equals_the_whole_drive(split):
    rng = np.random.default_rng(5)
    t = np.arange(1, 401) * HOP_S
    on_road = rng.choice([0.0, 1.0, NAN], size=len(t), p=[0.3, 0.6, 0.1])
    off_road_s = np.where(on_road == 0.0, rng.uniform(0.1, 14.0, len(t)), 0.0)
    closed = np.where(rng.random(len(t)) < 0.1, rng.uniform(0.1, 14.0, len(t)), 0.0)
    states = rng.integers(-1, 2, len(t)).astype(np.int8)
    drowsy = rng.random(len(t)) < 0.05
    alerts = [(float(a), kind) for a, kind in zip(np.sort(rng.uniform(0, 200, 30)),
                                                  rng.choice(["microsleep", "sleep", "drowsiness",
                                                              "long_distraction"], 30))]
    whole = _run(DecisionRule(), t, on_road, off_road_s, closed, states, drowsy, alerts,
                 split=len(t))
    parts = _run(DecisionRule(), t, on_road, off_road_s, closed, states, drowsy, alerts,
                 split=split)
    assert parts == whole
    assert {row[0] for row in whole[0]} == {0, 1, 2, 3}


@pytest.mark.parametrize("split", [1, 3])
def test_states_of_single_windows_equal_the_batch_rule(split):
    """The fast path for a call without alerts near gives the same states as the whole drive."""
    rng = np.random.default_rng(9)
    t = np.arange(1, 601) * HOP_S
    scores = rng.normal(0.8, 1.0, len(t))
    scores[rng.random(len(t)) < 0.1] = NAN
    quality = rng.uniform(0.3, 1.0, len(t))
    alerts = [(float(a), "long_distraction") for a in np.sort(rng.uniform(0, 300, 12))]
    whole = decide(t, scores, quality, alerts)
    rule = DecisionRule()
    parts = []
    for lo in range(0, len(t), split):
        due = [(a, kind) for a, kind in alerts
               if (lo == 0 or a > t[lo - 1]) and a <= t[min(lo + split, len(t)) - 1]]
        parts += rule.update(t[lo:lo + split], scores[lo:lo + split], quality[lo:lo + split],
                             due).tolist()
    assert parts == whole.tolist()
    assert {-1, 0, 1} <= set(parts)


def _read_at_window_ends(t_samples, starts, lengths, hop_s=HOP_S):
    """The glance channel's state at each window end of glances away over the sample clock: a
    glance's duration grows from its start; between glances the gaze is on the road."""
    on_road = np.ones(len(t_samples))
    off_road_s = np.zeros(len(t_samples))
    for start, length in zip(starts, lengths):
        away = (t_samples >= start) & (t_samples < start + length)
        on_road[away] = 0.0
        off_road_s[away] = t_samples[away] - start
    ends = np.flatnonzero(np.isclose(t_samples / hop_s, np.round(t_samples / hop_s)))
    return t_samples[ends], on_road[ends], off_road_s[ends], np.zeros(len(ends))


def test_road_checks_between_window_ends_end_the_episode():
    """VATS: 1.6 s glances with 0.4 s road checks for 40 s (no window end falls on a road
    check): every glance is a new one (its duration starts again), so no episode lasts 3 s;
    the same driver in one 14 s glance climbs once."""
    t = np.round(np.arange(1, 60 * 60) / 60.0, 6)
    starts = 5.45 + 2.0 * np.arange(20)
    t_end, on_road, off_road_s, closed = _read_at_window_ends(t, starts, np.full(20, 1.6))
    assert (on_road[(t_end > 5.5) & (t_end < 45.0)] == 0.0).all()   # never seen on the road
    levels, climbs = _run(DecisionRule(), t_end, on_road, off_road_s, closed)
    assert climbs == [] and max(row[0] for row in levels) == 0
    t_end, on_road, off_road_s, closed = _read_at_window_ends(t, [5.45], [14.0])
    levels, climbs = _run(DecisionRule(), t_end, on_road, off_road_s, closed)
    assert climbs == [(pytest.approx(16.45), pytest.approx(5.45), "away")]


@pytest.mark.parametrize("split", [1, 3, 200])
def test_one_unresponsive_climb_per_episode_through_track_loss(split):
    """A 25 s glance away whose readings are lost (NaN) now and then after the top level: the
    level holds and the episode raises one ``unresponsive`` alert, in any batching; a new
    episode after the driver is back on the road raises its own."""
    t = np.arange(1, 121) * HOP_S
    on_road, off_road_s, closed = _away(t, 2.0, 27.0)
    part_on, part_off, _ = _away(t, 35.0, 48.0)
    on_road, off_road_s = np.minimum(on_road, part_on), np.maximum(off_road_s, part_off)
    lost = np.isin(np.round(t, 1), [14.5, 16.0, 16.5, 20.0, 24.0])
    on_road[lost], off_road_s[lost], closed[lost] = NAN, NAN, NAN
    levels, climbs = _run(DecisionRule(), t, on_road, off_road_s, closed, split=split)
    level = np.array([row[0] for row in levels])
    assert climbs == [(pytest.approx(13.0), pytest.approx(2.0), "away"),
                      (pytest.approx(46.0), pytest.approx(35.0), "away")]
    assert (level[(t >= 13.0) & (t < 27.0)] == 3).all()
    assert level[(t >= 27.0) & (t < 35.0)].max() == 0


def test_an_episode_does_not_run_across_a_forward_clock_jump():
    """Issue 37, item 7: after a 10^6 s forward clock jump an ``unresponsive`` stamped t = 81
    arrived after an alert stamped t = 1,000,093: a glance away seen before the jump and one seen
    after it (no shorter, so "the same glance") made one episode, whose clock then passed the top
    step on the jump alone. Window ends further apart than the top step end the episode."""
    before = np.arange(141, 151) * HOP_S               # 70.5 .. 75 s: a glance away since 70 s
    after = 1e6 + np.arange(180, 200) * HOP_S          # 1,000,090 .. 1,000,099.5 s
    t = np.concatenate([before, after])
    on_road = np.zeros(len(t))
    off_road_s = np.concatenate([before - 70.0, after - (1e6 + 84.0)])   # 0.5..5, 6..15.5 s
    closed = np.zeros(len(t))
    for split in (1, len(t)):                          # window by window, or in one batch
        levels, climbs = _run(DecisionRule(), t, on_road, off_road_s, closed, split=split,
                              alerts=[(1e6 + 87.0, "long_distraction")])
        assert climbs == [(pytest.approx(1e6 + 95.0), pytest.approx(1e6 + 84.0), "away")]
        assert max(row[0] for row in levels[:len(before)]) == 2     # 5 s away, not 11
        assert all(row[2] >= 1e6 for row in levels[len(before):] if row[2] is not None)
