import numpy as np
import pytest

from distractd.pipeline import (
    FEATURE_NAMES, FIELD_INDEX, GLANCE_CLASSES, GLANCE_FEATURES, PipelineConfig, Recording,
    StreamProcessor, Windows, alert_event, detect_fatigue, detect_glances, empty_block,
    extract_features, glance_state, state_message,
)

ROAD = (5.0, -3.0)             # the driver's road centre in the tracker frame, degrees
DISPLAY = (-25.0, -20.0)       # a centre-stack display, relative to the road centre: off road
MIRROR = (20.0, 8.0)           # the rear-view mirror of a left-hand-drive car
CODE = {name: i for i, name in enumerate(GLANCE_CLASSES)}
PRC, OFF, LONGEST, RATE, LOSS = (FEATURE_NAMES.index(name) for name in GLANCE_FEATURES)


def trace(segments, rate_hz=60.0, warmup_s=70.0, noise_deg=1.0, seed=0, head=False):
    """Gaze-only samples: ``warmup_s`` on the road, then ``segments`` of (seconds, target) with
    target a (yaw, pitch) offset from the road centre in degrees, or None for track loss.
    Returns the block and the time of each segment's first sample."""
    rng = np.random.default_rng(seed)
    segments = [(warmup_s, (0.0, 0.0))] + list(segments)
    counts = [int(round(s * rate_hz)) for s, _ in segments]
    n = sum(counts)
    block = empty_block(n)
    block[:, 0] = np.arange(n) / rate_hz
    yaw = np.full(n, np.nan)
    pitch = np.full(n, np.nan)
    starts = []
    i = 0
    for count, (_, target) in zip(counts, segments):
        starts.append(block[i, 0])
        if target is not None:
            yaw[i:i + count] = ROAD[0] + target[0]
            pitch[i:i + count] = ROAD[1] + target[1]
        i += count
    yaw += rng.normal(0, noise_deg, n)
    pitch += rng.normal(0, noise_deg, n)
    for eye in "rl":
        block[:, FIELD_INDEX[f"gaze_{eye}_yaw"]] = np.radians(yaw)
        block[:, FIELD_INDEX[f"gaze_{eye}_pitch"]] = np.radians(pitch)
    block[:, FIELD_INDEX["confidence"]] = np.where(np.isnan(yaw), 0.0, 0.9)
    if head:
        block[:, FIELD_INDEX["head_yaw"]] = 0.0
    return block, starts[1:]


@pytest.mark.parametrize("rate_hz", [60.0, 1.0])
def test_road_centre_is_learned_within_the_warm_up(rate_hz):
    # an offset driver who also checks the mirror and the display now and then
    glances = [(4.0, (0.0, 0.0)), (1.0, MIRROR), (4.0, (0.0, 0.0)), (2.0, DISPLAY)] * 20
    block, _ = trace(glances, rate_hz=rate_hz, warmup_s=8.0, noise_deg=2.0)
    result = detect_glances(Recording(block))
    t = result.t
    assert (result.glance[t < 59.0] == CODE["unknown"]).all()    # warming: < 60 s of gaze
    assert np.isnan(result.buffer_s[t < 59.0]).all()
    ready = t >= 61.0
    assert (result.glance[ready] != CODE["unknown"]).all()
    assert abs(result.road_yaw_deg[t >= 60.0] - ROAD[0]).max() < 1.0
    assert abs(result.road_pitch_deg[t >= 60.0] - ROAD[1]).max() < 1.0
    # at rest on the road the classes say so
    late = ready & (result.off_road_s == 0.0)
    assert (result.glance[late] == CODE["on_road"]).mean() > 0.95


@pytest.mark.parametrize("rate_hz", [60.0, 1.0])
def test_long_glance_alerts_three_seconds_after_its_start(rate_hz):
    block, starts = trace([(3.2, DISPLAY), (5.0, (0.0, 0.0))], rate_hz=rate_hz)
    result = detect_glances(Recording(block))
    assert [a.kind for a in result.alerts] == ["long_distraction"]
    alert = result.alerts[0]
    glance_start = starts[0] - 1.0 / rate_hz   # the last road sample: the transition counts
    assert alert.glances[0][0] == pytest.approx(glance_start)
    assert alert.t - starts[0] == pytest.approx(3.0, abs=1.0 / rate_hz + 1e-9)
    assert alert.t - alert.glances[0][0] == pytest.approx(3.0, abs=1.0 / rate_hz + 1e-9)
    assert alert.away_s >= 3.0


@pytest.mark.parametrize("rate_hz", [60.0, 1.0])
def test_glances_under_two_seconds_never_alert(rate_hz):
    block, _ = trace([(1.9, DISPLAY), (2.5, (0.0, 0.0))] * 8, rate_hz=rate_hz)
    result = detect_glances(Recording(block))
    assert result.alerts == []
    assert np.nanmax(result.off_road_s) == pytest.approx(1.9, abs=1.0 / rate_hz + 1e-9)


def test_mirror_glance_of_one_second_is_free_and_off_road_drains():
    block, starts = trace([(1.0, MIRROR), (3.0, (0.0, 0.0)), (1.5, DISPLAY), (3.0, (0.0, 0.0))])
    result = detect_glances(Recording(block))
    t = result.t
    mirror = (t >= starts[0]) & (t < starts[1])
    assert (result.glance[mirror] == CODE["mirror"]).all()
    np.testing.assert_allclose(result.buffer_s[t >= 61.0][t[t >= 61.0] < starts[2]], 2.0,
                               atol=1e-9)
    display = (t >= starts[2]) & (t < starts[3])
    assert (result.glance[display] == CODE["off_road"]).all()
    last_away = t[display][-1]
    assert result.buffer_s[display][-1] == pytest.approx(0.5, abs=1e-9)   # 1.5 s drained
    assert result.off_road_s[display][-1] == pytest.approx(1.5, abs=1e-9)
    after = t > last_away
    refill = result.buffer_s[after]
    dt = t[after] - last_away
    assert refill[dt <= 0.1 + 1e-9] == pytest.approx(0.5, abs=1e-9)    # the 0.1 s delay
    np.testing.assert_allclose(refill[(dt > 0.2) & (dt < 1.5)],
                               0.5 + dt[(dt > 0.2) & (dt < 1.5)] - 0.1, atol=1e-9)
    assert refill[-1] == 2.0
    assert result.alerts == []


def test_mirror_glance_drains_after_its_free_second():
    block, starts = trace([(1.8, MIRROR), (3.0, (0.0, 0.0))])
    result = detect_glances(Recording(block))
    mirror = (result.t >= starts[0]) & (result.t < starts[1])
    assert result.buffer_s[mirror][-1] == pytest.approx(2.0 - 0.8, abs=1e-9)


def test_time_sharing_after_six_short_glances():
    block, starts = trace([(1.8, DISPLAY), (1.0, (0.0, 0.0))] * 6 + [(5.0, (0.0, 0.0))])
    result = detect_glances(Recording(block))
    assert [a.kind for a in result.alerts] == ["time_sharing"]
    alert = result.alerts[0]
    assert len(alert.glances) == 6
    first = [starts[2 * k] - 1 / 60 for k in range(6)]
    np.testing.assert_allclose([g[0] for g in alert.glances], first, atol=1e-9)
    # 5 x 1.8 s before the sixth glance, so 10 s are reached 1.0 s into it
    assert alert.t == pytest.approx(first[5] + 1.0, abs=1 / 60 + 1e-9)
    assert alert.away_s == pytest.approx(10.0, abs=1 / 60 + 1e-9)


def test_no_time_sharing_when_road_glances_of_two_seconds_separate_them():
    block, _ = trace([(1.8, DISPLAY), (2.1, (0.0, 0.0))] * 8)
    assert detect_glances(Recording(block)).alerts == []
    shorter, _ = trace([(1.8, DISPLAY), (1.8, (0.0, 0.0))] * 8)
    assert [a.kind for a in detect_glances(Recording(shorter)).alerts] == ["time_sharing"]


def test_track_loss_is_not_off_road():
    block, starts = trace([(6.0, None), (10.0, (0.0, 0.0))])
    result = detect_glances(Recording(block))
    lost = (result.t >= starts[0]) & (result.t < starts[1])
    assert (result.glance[lost] == CODE["lost"]).all()
    assert result.alerts == []
    np.testing.assert_allclose(result.buffer_s[result.t >= 61.0], 2.0)   # held, not drained
    assert (result.off_road_s[lost] == 0.0).all()
    windows = extract_features(Recording(block))
    i = np.flatnonzero(windows.t_end == 76.0)[0]    # [66, 76): the whole 6 s loss
    assert windows.X[i, LOSS] == pytest.approx(6.0 / 10.0, abs=0.01)
    assert windows.X[i, OFF] == 0.0
    assert windows.X[i, PRC] == 1.0
    assert np.isnan(windows.on_road[np.flatnonzero(windows.t_end == 74.0)[0]])


def test_blink_inside_a_glance_does_not_split_it():
    block, starts = trace([(1.2, DISPLAY), (0.1, None), (1.3, DISPLAY), (5.0, (0.0, 0.0))])
    result = detect_glances(Recording(block))
    glance = (result.t >= starts[0]) & (result.t < starts[3])
    assert result.off_road_s[glance][-1] == pytest.approx(2.6, abs=1e-9)
    windows = extract_features(Recording(block))
    i = np.flatnonzero(windows.t_end == 77.5)[0]
    assert windows.X[i, LONGEST] == pytest.approx(2.6, abs=1e-9)
    assert windows.X[i, RATE] == pytest.approx(6.0)       # one glance in 10 s
    # a loss longer than glance_lost_carry_s after eyes seen away, the head not come back, is
    # the eyes out of the tracker's range: the glance goes on through it
    block, starts = trace([(1.2, DISPLAY), (0.5, None), (1.3, DISPLAY), (5.0, (0.0, 0.0))])
    windows = extract_features(Recording(block), PipelineConfig(glance_lost_carry_s=0.2))
    i = np.flatnonzero(windows.t_end == 77.5)[0]
    assert windows.X[i, LONGEST] == pytest.approx(3.0, abs=1e-9)
    assert windows.X[i, RATE] == pytest.approx(6.0)


def test_lost_eyes_can_carry_a_glance_away_to_its_long_distraction_alert():
    # 1.2 s at a display, 1.0 s of lost eyes, 1.3 s at the display again: the loss is bridged
    # (glance_lost_carry_s), or beyond that taken as the eyes out of the tracker's range: the
    # driver is away 3.5 s and the long-distraction alert fires 3 s after the glance began
    block, starts = trace([(1.2, DISPLAY), (1.0, None), (1.3, DISPLAY), (5.0, (0.0, 0.0))],
                          head=True)
    for carry_s in (0.5, 1.5):
        carried = detect_glances(Recording(block), PipelineConfig(glance_lost_carry_s=carry_s))
        (alert,) = [a for a in carried.alerts if a.kind == "long_distraction"]
        assert alert.t - alert.glances[0][0] == pytest.approx(3.0, abs=1.5 / 60)
    # a head that had turned with the glance and is back on the road during the loss: the
    # glance ended before it (1.2 s), and the second look (1.3 s) is a glance of its own
    block = head_turn(block, starts, 0, pitch_deg=-15.0)
    assert detect_glances(Recording(block)).alerts == []
    # mirror glances are glances away too (Euro NCAP): a loss there is carried the same way
    block, starts = trace([(1.2, MIRROR), (1.0, None), (1.3, MIRROR), (5.0, (0.0, 0.0))])
    carried = detect_glances(Recording(block), PipelineConfig(glance_lost_carry_s=1.5))
    (alert,) = [a for a in carried.alerts if a.kind == "long_distraction"]
    assert alert.glances[0][0] == pytest.approx(starts[0] - 1 / 60)


def test_a_short_loss_between_road_and_display_is_the_glance_s_transition():
    # the eyes leave the tracker on their way down (0.4 s lost), then 2.7 s at the display:
    # the glance starts at the last road sample, so the alert fires 3 s after it
    segments = [(0.4, None), (2.7, DISPLAY), (5.0, (0.0, 0.0))]
    block, starts = trace(segments)
    (alert,) = [a for a in detect_glances(Recording(block)).alerts
                if a.kind == "long_distraction"]
    assert alert.glances[0][0] == pytest.approx(starts[0] - 1 / 60)
    assert alert.t - alert.glances[0][0] == pytest.approx(3.0, abs=1.5 / 60)
    # a loss longer than glance_lost_carry_s is not a transition: the glance starts at the
    # display and is too short to alert
    short_carry = PipelineConfig(glance_lost_carry_s=0.3)
    assert not detect_glances(Recording(block), short_carry).alerts


def head_turn(block, starts, segment, pitch_deg, yaw_deg=0.0, sway_deg=0.3, seed=1):
    """Give ``block`` a head pose: still (with a little sway) at 0, and turned by
    (``yaw_deg``, ``pitch_deg``) during segment ``segment`` of :func:`trace`."""
    rng = np.random.default_rng(seed)
    t = block[:, 0]
    turned = (t >= starts[segment]) & (t < starts[segment + 1])
    for field, turn in (("head_yaw", yaw_deg), ("head_pitch", pitch_deg)):
        block[:, FIELD_INDEX[field]] = np.radians(rng.normal(0.0, sway_deg, len(t))
                                                  + np.where(turned, turn, 0.0))
    return block


def test_lost_eyes_with_the_head_turned_away_are_off_road():
    # a phone in the lap: 0.5 s at the display, then the eyes are lost for 3 s while the head
    # is pitched 15 degrees down; the glance goes on and the long-distraction alert fires
    segments = [(0.5, DISPLAY), (3.0, None), (5.0, (0.0, 0.0))]
    block, starts = trace(segments)
    block = head_turn(block, starts, 1, pitch_deg=-15.0)
    result = detect_glances(Recording(block))
    lost = (result.t >= starts[1]) & (result.t < starts[2])
    # the eyes were seen dwelling away: theirs to bridge for glance_lost_carry_s, then the head's
    since = result.t - starts[1]
    assert (result.glance[lost & (since < 0.49)] == CODE["lost"]).all()
    assert (result.glance[lost & (since > 0.51)] == CODE["off_road"]).all()
    (alert,) = [a for a in result.alerts if a.kind == "long_distraction"]
    assert alert.t - alert.glances[0][0] == pytest.approx(3.0, abs=1.5 / 60)
    # the same loss with the head still where it is when the eyes are on the road: lost, but
    # longer than a blink after eyes seen away, so the eyes out of the tracker's range (a lizard
    # glance): the glance goes on, known to last until EXIT_HIDDEN_S before each lost sample
    block, starts = trace(segments)
    block = head_turn(block, starts, 1, pitch_deg=0.0)
    result = detect_glances(Recording(block))
    lost = (result.t >= starts[1]) & (result.t < starts[2])
    assert (result.glance[lost] == CODE["lost"]).all()
    (alert,) = result.alerts
    assert alert.t - alert.glances[0][0] == pytest.approx(3.15, abs=1.5 / 60)
    # a head that turned away and came back during the loss ends that: no alert
    block, starts = trace(segments)
    block = head_turn(block, starts, 1, pitch_deg=-15.0)
    back = block[:, 0] >= starts[1] + 1.0
    block[back, FIELD_INDEX["head_pitch"]] = 0.0
    assert detect_glances(Recording(block)).alerts == []
    # the fallback switched off, or a tracker without head pose: lost, and a loss after eyes
    # seen away that outlasts a blink is taken as the eyes out of the tracker's range
    block, starts = trace(segments)
    block = head_turn(block, starts, 1, pitch_deg=-15.0)
    off = PipelineConfig(glance_head_yaw_deg=0.0)
    result = detect_glances(Recording(block), off)
    lost = (result.t >= starts[1]) & (result.t < starts[2])
    assert (result.glance[lost] == CODE["lost"]).all()
    (alert,) = [a for a in result.alerts if a.kind == "long_distraction"]
    assert alert.t - alert.glances[0][0] == pytest.approx(3.15, abs=1.5 / 60)


def test_head_reference_follows_slow_posture_changes_but_not_the_turn_of_a_glance():
    # the head sways slowly on the road (+-10 degrees of yaw, 30 s period, as drivers shift
    # in the seat); 2.5 s of lost eyes: the head going on with its sway stays within the
    # ellipse around its pose of the last on-road seconds, a 15 degree turn with the loss does not
    segments = [(20.0, (0.0, 0.0)), (2.5, None), (5.0, (0.0, 0.0))]
    shares = {}
    for turn in (0.0, 15.0):
        block, starts = trace(segments, warmup_s=80.0)
        t = block[:, 0]
        lost = (t >= starts[1]) & (t < starts[2])
        block[:, FIELD_INDEX["head_yaw"]] = np.radians(10.0 * np.sin(2 * np.pi * t / 30.0)
                                                       + np.where(lost, turn, 0.0))
        block[:, FIELD_INDEX["head_pitch"]] = 0.0
        result = detect_glances(Recording(block))
        shares[turn] = np.mean(result.glance[lost] == CODE["off_road"])
    assert shares[0.0] == 0.0
    assert shares[15.0] == 1.0


def test_window_features_and_state_on_a_gaze_only_stream():
    block, starts = trace([(2.5, DISPLAY), (7.5, (0.0, 0.0))] * 3)
    windows = extract_features(Recording(block))
    i = np.flatnonzero(windows.t_end == 90.0)[0]    # [80, 90): glance 80-82.5 and 2.5 s road
    assert np.isnan(windows.X[i, :10][[0, 1, 2, 3, 4, 5]]).all()   # no head pose
    x = windows.X[i]
    assert x[PRC] == pytest.approx(0.75, abs=0.01)
    assert x[OFF] == pytest.approx(0.25, abs=0.01)
    assert x[LONGEST] == pytest.approx(2.5, abs=1e-9)   # last road sample to last away sample
    assert x[RATE] == pytest.approx(6.0)
    assert x[LOSS] == 0.0
    assert windows.road_ready[i] and windows.on_road[i] == 1.0 and windows.buffer_s[i] == 2.0
    early = np.flatnonzero(windows.t_end == 30.0)[0]
    assert not windows.road_ready[early] and np.isnan(windows.buffer_s[early])
    assert windows.X[early, PRC] > 0.95                   # features run during the warm-up
    no_gaze = block.copy()
    no_gaze[:, 7:11] = np.nan
    none = extract_features(Recording(no_gaze))
    assert np.isnan(none.X[:, -5:]).all() and np.isnan(none.on_road).all()
    off = extract_features(Recording(block), PipelineConfig(glances=False))
    assert np.isnan(off.X[:, -5:]).all()
    np.testing.assert_array_equal(off.X[:, :25], windows.X[:, :25])


def test_alerts_ride_with_the_next_window_and_the_wire_builders():
    block, starts = trace([(3.2, DISPLAY), (10.0, (0.0, 0.0))])
    windows = extract_features(Recording(block))
    carrying = [i for i in range(len(windows)) if windows.alerts[i]]
    assert len(carrying) == 1
    i = carrying[0]
    (alert,) = windows.alerts[i]
    assert windows.t_end[i - 1] + PipelineConfig().lag_s <= alert.t
    assert alert.t < windows.t_end[i] + PipelineConfig().lag_s
    event = alert_event("s1", alert.kind, alert.t, alert.glances, alert.away_s)
    assert event["type"] == "alert" and event["kind"] == "long_distraction"
    assert event["glances"] == [[alert.glances[0][0], alert.t]]
    state = glance_state(windows.on_road[i], windows.off_road_s[i], windows.buffer_s[i],
                         windows.road_ready[i])
    assert state == {"on_road": False, "off_road_s": pytest.approx(windows.off_road_s[i]),
                     "buffer_s": pytest.approx(windows.buffer_s[i]), "road": "ready"}
    assert state["off_road_s"] > 0.0
    message = state_message("s1", (0.0, 10.0), "unknown", 0.0, "m", 1.0, None, glance=state)
    assert message["glance"] is state
    assert "glance" not in state_message("s1", (0.0, 10.0), "unknown", 0.0, "m", 1.0, None)


def _glance_trace_stream(samples, cuts):
    """The glance channel's per-sample outputs and the windows of a processor fed ``samples`` in
    the blocks ``cuts``."""
    processor = StreamProcessor()
    outputs, parts, alerts = [], [], []
    for part in np.split(samples, cuts) + [samples[:0]]:
        final = len(outputs) == len(cuts) + 1
        windows, _, _, traces, a = processor._feed(part, None, with_events=True, final=final)
        outputs.append(traces[0])
        parts.append(windows)
        alerts.extend(a)
    return np.concatenate(outputs), Windows.concat(parts), alerts


def test_stream_equals_batch_for_the_glance_channel():
    segments = ([(1.8, DISPLAY), (1.0, (0.0, 0.0))] * 6 + [(3.5, MIRROR), (4.0, (0.0, 0.0))]
                + [(0.1, None), (3.4, DISPLAY), (20.0, (0.0, 0.0))])
    block, _ = trace(segments, noise_deg=1.5)
    recording = Recording(block)
    batch = extract_features(recording)
    whole = detect_glances(recording)
    assert [a.kind for a in whole.alerts] == ["time_sharing", "long_distraction",
                                              "long_distraction"]
    rng = np.random.default_rng(3)
    for cuts in (np.sort(rng.choice(len(block), 300, replace=False)), np.arange(1, 3000)):
        outputs, stream, alerts = _glance_trace_stream(block, cuts)
        assert alerts == whole.alerts
        np.testing.assert_array_equal(outputs["cls"], whole.glance)
        np.testing.assert_array_equal(outputs["off_s"], whole.off_road_s)
        np.testing.assert_array_equal(outputs["buffer"], whole.buffer_s)
        for name in Windows._COLUMNS:
            np.testing.assert_array_equal(getattr(stream, name), getattr(batch, name))
    assert sum(len(a) for a in batch.alerts) == 3



def test_road_progress_counts_tracked_gaze_time_toward_the_warm_up():
    # 20 s on the road, 10 s of lost eyes, 50 s on the road: only tracked gaze time counts
    block, _ = trace([(10.0, None), (50.0, (0.0, 0.0))], warmup_s=20.0)
    processor = StreamProcessor()
    assert processor.glances.road_progress == 0.0
    progress = {}
    previous = 0.0
    for end in (15.0, 25.0, 40.0, 75.0):
        processor.update(block[(block[:, 0] >= previous) & (block[:, 0] < end)])
        previous = end
        progress[end] = processor.glances.road_progress
    assert progress[15.0] == pytest.approx(15.0 / 60.0, abs=0.01)
    assert progress[25.0] == pytest.approx(20.0 / 60.0, abs=0.01)    # the loss adds nothing
    assert progress[40.0] == pytest.approx(30.0 / 60.0, abs=0.01)
    assert progress[75.0] == 1.0 and processor.glances.road_ready
    short = StreamProcessor(PipelineConfig(glance_road_warmup_s=10.0))
    short.update(block[block[:, 0] < 5.0])
    assert short.glances.road_progress == pytest.approx(0.5, abs=0.01)


def saccade(target, duration_s, back=False, rate_hz=60.0):
    """Segments of a straight saccade from the road centre to ``target`` (or back), 0.1 s."""
    n = int(round(0.1 * rate_hz))
    steps = np.arange(1, n + 1) / (n + 1)
    if back:
        steps = steps[::-1]
    return [(1.0 / rate_hz, (target[0] * f, target[1] * f)) for f in steps]


@pytest.mark.parametrize("away_s, alerted", [(2.9, False), (3.1, True)])
def test_the_transition_back_is_not_part_of_the_glance(away_s, alerted):
    # ISO 15007: a glance ends where the transition back starts. A 0.1 s saccade out to the
    # display, the dwell, and a 0.1 s saccade back through the samples outside the road ellipse:
    # true glance from the saccade's start to the saccade back's start
    target = (-40.0, -25.0)
    segments = (saccade(target, 0.1) + [(away_s - 0.1, target)] + saccade(target, 0.1, back=True)
                + [(5.0, (0.0, 0.0))])
    block, starts = trace(segments, noise_deg=0.2)
    result = detect_glances(Recording(block))
    kinds = [a.kind for a in result.alerts]
    assert kinds == (["long_distraction"] if alerted else [])
    back = starts[len(saccade(target, 0.1)) + 1]   # the first sample of the saccade back
    glance = (result.t >= starts[0]) & (result.t < back + 0.1)
    assert np.nanmax(result.off_road_s[glance]) == pytest.approx(away_s, abs=1.5 / 60)
    if alerted:
        assert result.alerts[0].t - starts[0] == pytest.approx(3.0, abs=1.5 / 60)


@pytest.mark.parametrize("away_s, alerted", [(2.9, False), (3.5, True)])
def test_eyes_leaving_the_tracker_downward_carry_the_glance(away_s, alerted):
    # a look at a phone in the lap with the head still (a lizard glance): the eyes leave the
    # tracker's range on their way down and come back only on the road. The glance goes on
    # while they are lost; it is known to last until EXIT_HIDDEN_S before each lost sample
    target = (-10.0, -40.0)
    down = saccade(target, 0.1)[:3]   # seen for 0.05 s on the way down, then lost
    segments = down + [(away_s - 0.05, None), (5.0, (0.0, 0.0))]
    block, starts = trace(segments, noise_deg=0.2, head=True)
    result = detect_glances(Recording(block))
    long = [a for a in result.alerts if a.kind == "long_distraction"]
    if not alerted:
        assert long == []
        return
    (alert,) = long
    assert alert.glances[0][0] == pytest.approx(starts[0] - 1 / 60)
    assert alert.t - alert.glances[0][0] == pytest.approx(3.15, abs=1.5 / 60)
    # the same loss after a sample moving down on the road, not fast: a blink, no glance
    block, starts = trace([(0.05, (0.0, -2.0)), (away_s - 0.05, None), (5.0, (0.0, 0.0))],
                          noise_deg=0.2, head=True)
    assert detect_glances(Recording(block)).alerts == []


def test_a_blink_during_a_road_check_does_not_stop_its_reset():
    # conversation: 1.5 s head-and-eye turns to the passenger, 2.5 s back on the road with a
    # 0.2 s blink in the middle of each road check: every check resets the time-sharing count
    turns = [(1.5, DISPLAY), (1.2, (0.0, 0.0)), (0.2, None), (1.1, (0.0, 0.0))] * 9
    block, _ = trace(turns)
    assert detect_glances(Recording(block)).alerts == []
    # with 0.4 s road checks the count is not reset: 9 x 1.5 s within 30 s warns
    shared = [(1.5, DISPLAY), (0.4, (0.0, 0.0))] * 9
    block, _ = trace(shared)
    assert [a.kind for a in detect_glances(Recording(block)).alerts] == ["time_sharing"]


def shut_eyes(block, starts, segments):
    """Give ``block`` eyelids: open (aperture 1) except during the :func:`trace` segments
    ``segments``, where they are shut (0.05) with the gaze lost and the confidence 0.3, as a
    remote tracker sees a lid over the pupil."""
    rng = np.random.default_rng(2)
    t = block[:, 0]
    shut = np.zeros(len(t), dtype=bool)
    for segment in segments:
        shut |= (t >= starts[segment]) & (t < starts[segment + 1])
    for eye in "rl":
        block[:, FIELD_INDEX[f"eyelid_{eye}"]] = np.where(shut, 0.05, 1.0) + rng.normal(
            0.0, 0.01, len(t))
        for angle in ("yaw", "pitch"):
            block[shut, FIELD_INDEX[f"gaze_{eye}_{angle}"]] = np.nan
    block[shut, FIELD_INDEX["confidence"]] = 0.3
    return block


def test_eyes_closed_facing_forward_are_no_glance_away():
    # a 4 s closure facing the road, the head sinking 8 degrees as the driver nods off: beyond
    # the head-pose fallback's ellipse (glance_head_pitch_deg), within the fatigue channel's
    # forward one. The closure is fatigue's (sleep), not a glance away
    segments = [(4.0, None), (5.0, (0.0, 0.0))]
    block, starts = trace(segments)
    block = shut_eyes(head_turn(block, starts, 0, pitch_deg=-8.0), starts, [0])
    recording = Recording(block)
    result = detect_glances(recording)
    closed = (result.t >= starts[0]) & (result.t < starts[1])
    assert (result.glance[closed] == CODE["lost"]).all()
    assert result.alerts == []
    assert [a.kind for a in detect_fatigue(recording).alerts] == ["microsleep", "sleep"]
    # without an eyelid signal the same loss is the head's: away, and a long distraction
    block[:, [FIELD_INDEX["eyelid_r"], FIELD_INDEX["eyelid_l"]]] = np.nan
    assert [a.kind for a in detect_glances(Recording(block)).alerts] == ["long_distraction"]
    # the eyes closing right after a fast move downward are closed, not out of the tracker's
    # range below: no glance
    down = saccade((-10.0, -40.0), 0.1)[:3]
    block, starts = trace(down + segments, noise_deg=0.2, head=True)
    block = shut_eyes(block, starts, [len(down)])
    assert detect_glances(Recording(block)).alerts == []
    # closures do not add up to time sharing: 1.5 s closures with 0.4 s of road between
    block, starts = trace([(1.5, None), (0.4, (0.0, 0.0))] * 9, head=True)
    block = shut_eyes(block, starts, range(0, 18, 2))
    assert detect_glances(Recording(block)).alerts == []


@pytest.mark.parametrize("yaw_deg", [15.0, 40.0])
def test_a_blink_inside_an_owl_glance_does_not_end_it(yaw_deg):
    # a 4 s owl glance to the display (head turned 15 degrees: inside the fatigue channel's
    # forward ellipse; 40: outside it) with a 0.15 s blink after 1.5 s: one glance, alerted 3 s
    # after it began
    segments = [(1.5, DISPLAY), (0.15, None), (2.35, DISPLAY), (5.0, (0.0, 0.0))]
    block, starts = trace(segments)
    turned = (block[:, 0] >= starts[0]) & (block[:, 0] < starts[3])
    block[:, FIELD_INDEX["head_yaw"]] = np.where(turned, np.radians(yaw_deg), 0.0)
    block[:, FIELD_INDEX["head_pitch"]] = 0.0
    block = shut_eyes(block, starts, [1])
    (alert,) = detect_glances(Recording(block)).alerts
    assert alert.kind == "long_distraction"
    assert alert.glances[0][0] == pytest.approx(starts[0] - 1 / 60)
    assert alert.t - alert.glances[0][0] == pytest.approx(3.0, abs=1.5 / 60)


def test_a_blink_on_the_way_back_from_the_lap_does_not_end_the_glance():
    # a lizard look at a phone in the lap (eyes out of the tracker's range below for 2.9 s), then
    # the eyes blinking for 0.4 s as they come back: the glance goes on through the blink and
    # reaches its alert in it
    down = saccade((-10.0, -40.0), 0.1)[:3]
    block, starts = trace(down + [(2.9, None), (0.4, None), (5.0, (0.0, 0.0))], noise_deg=0.2,
                          head=True)
    block = shut_eyes(block, starts, [len(down) + 1])
    (alert,) = detect_glances(Recording(block)).alerts
    assert alert.kind == "long_distraction"
    assert alert.glances[0][0] == pytest.approx(starts[0] - 1 / 60)
    assert alert.t - alert.glances[0][0] == pytest.approx(3.15, abs=1.5 / 60)


def test_a_gaze_tracked_while_the_lids_reopen_is_the_gaze_s():
    # a blink with the look down to the display: the lids still half open (0.4 of the open
    # aperture, inside the fatigue channel's closure until 0.5) while the tracker already sees
    # the gaze there: off road, not a closure
    segments = [(0.15, None), (0.05, DISPLAY), (3.5, DISPLAY), (5.0, (0.0, 0.0))]
    block, starts = trace(segments, head=True)
    block = shut_eyes(block, starts, [0])
    reopening = (block[:, 0] >= starts[1]) & (block[:, 0] < starts[2])
    block[np.ix_(reopening, [FIELD_INDEX["eyelid_r"], FIELD_INDEX["eyelid_l"]])] = 0.4
    result = detect_glances(Recording(block))
    assert (result.glance[reopening] == CODE["off_road"]).all()
    (alert,) = result.alerts
    assert alert.kind == "long_distraction"
    assert alert.glances[0][0] == pytest.approx(starts[0] - 1 / 60)


def test_a_second_region_of_the_road_scene_is_road_but_a_display_is_not():
    # a driver whose gaze alternates between two regions at the road's level (two screens of a
    # simulator: Taamneh et al.'s drives), the second 20 deg to the side a third of the time:
    # its glances alert until the forgetting histogram holds enough of it (about 3 min here)
    second = (20.0, 1.0)
    block, starts = trace([(6.0, (0.0, 0.0)), (3.5, second)] * 30
                          + [(3.5, DISPLAY), (6.0, (0.0, 0.0))])
    result = detect_glances(Recording(block))
    late = [a for a in result.alerts if a.t > starts[40]]
    assert [a.kind for a in late] == ["long_distraction"]
    assert late[0].glances[0][0] == pytest.approx(starts[-2], abs=0.05)   # the display
    at_second = (result.t > starts[41] + 0.5) & (result.t < starts[41] + 3.0)
    assert (result.glance[at_second] == CODE["on_road"]).all()
