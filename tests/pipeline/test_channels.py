"""The channel protocol's contract: a third channel needs only its own files.

The toy channel below is written as a new channel would be (docs/pipeline.md "Channels"): one
module's worth of code that imports only the protocol (``channels._protocol``, ``_alerts``,
``_face``) and changes nothing in ``distractd``. Run beside the real channels it gets its alerts
into the windows in time order, its per-sample trace from the batch driver, its restart at a clock
reset, and leaves every other output as it was.
"""

from dataclasses import dataclass

import numpy as np
import pytest
from numba import njit

from distractd.pipeline import (
    CHANNELS, FIELD_INDEX, Recording, StreamProcessor, Windows, detect_channel, empty_block,
)
from distractd.pipeline._config import _HEAD_PITCH, _record
from distractd.pipeline._processor import CHANNEL_SLOTS
from distractd.pipeline.channels._alerts import ChannelAlert, write_alert
from distractd.pipeline.channels._protocol import Channel, implement

# ---- the toy channel: head pitched down for DOWN_S raises "head_down", once per episode ----

DOWN_RAD = np.radians(-20.0)
DOWN_S = 2.0
STATE = _record("start", "raised", "restarts")
OUTPUT = _record("down_s")


@dataclass(frozen=True)
class HeadDownAlert(ChannelAlert):
    episodes: tuple


class HeadDownChannel(Channel, name="head_down", output=OUTPUT, alert=HeadDownAlert,
                      kinds=("head_down",), max_alert_rows=1):
    def __init__(self, config):
        super().__init__(config)
        state = np.zeros(1, STATE)
        state["start"] = np.nan
        self.kernel = (state, np.zeros(1, OUTPUT))

    @staticmethod
    def trace(t, rejected, outputs, alerts):
        down = outputs["down_s"].copy()
        down[rejected] = np.nan
        return t, down, alerts


@njit(cache=True)
def _step(kernel, x, sample, params, face, alerts, n_a):
    state = kernel[0][0]
    if x[_HEAD_PITCH] < DOWN_RAD and sample.gap == 0.0:
        if state.start != state.start:
            state.start = sample.t
        if state.raised == 0.0 and sample.t - state.start >= DOWN_S:
            state.raised = 1.0
            n_a = write_alert(alerts, n_a, 0.0, sample.t, sample.t - state.start, np.nan,
                              state.start, sample.t, True)
    else:
        state.start = np.nan
        state.raised = 0.0
    kernel[1][0].down_s = 0.0 if state.start != state.start else sample.t - state.start
    return n_a


@njit(cache=True)
def _to_hop(kernel, slot):
    pass


@njit(cache=True)
def _restart(kernel, face):
    state = kernel[0][0]
    state.start = np.nan
    state.raised = 0.0
    state.restarts += 1.0


implement(STATE, None, _step, _to_hop, _restart)

# ---- the contract ----


def drive(seconds=60.0, rate_hz=30.0):
    """Eyes on the road, the head pitched down at 20-23.5 s (3.5 s) and 40-41 s (1 s)."""
    n = int(seconds * rate_hz)
    block = empty_block(n)
    t = np.arange(n) / rate_hz
    block[:, 0] = t
    rng = np.random.default_rng(0)
    for name in ("gaze_r_yaw", "gaze_l_yaw", "gaze_r_pitch", "gaze_l_pitch"):
        block[:, FIELD_INDEX[name]] = np.radians(rng.normal(0.0, 0.5, n))
    block[:, FIELD_INDEX["eyelid_r"]] = block[:, FIELD_INDEX["eyelid_l"]] = 1.0
    block[:, FIELD_INDEX["confidence"]] = 0.9
    block[:, FIELD_INDEX["head_yaw"]] = 0.0
    pitch = np.zeros(n)
    pitch[(t >= 20.0) & (t < 23.5)] = np.radians(-30.0)
    pitch[(t >= 40.0) & (t < 41.0)] = np.radians(-30.0)
    block[:, FIELD_INDEX["head_pitch"]] = pitch
    return Recording(block, np.full(n, -1, dtype=np.int8))


def test_a_toy_third_channel_runs_from_its_own_module_beside_the_real_ones():
    recording = drive()
    t, down, alerts = detect_channel(HeadDownChannel, recording)
    assert [(a.kind, a.t, a.episodes) for a in alerts] == [
        ("head_down", t[660], ((t[600], t[660]),))]   # 20.0 s + 2.0 s at 30 Hz
    assert down[659] == t[659] - t[600] and down[720] == 0.0 and down[1210] == t[1210] - t[1200]
    # the channel rides in the windows beside the real ones; their outputs are unchanged
    with_toy = StreamProcessor(channels=CHANNELS + (HeadDownChannel,))
    plain = StreamProcessor()
    ours = Windows.concat([with_toy.update(recording.samples), with_toy.flush()])
    theirs = Windows.concat([plain.update(recording.samples), plain.flush()])
    np.testing.assert_array_equal(ours.X, theirs.X)
    np.testing.assert_array_equal(ours.eyes_closed_s, theirs.eyes_closed_s)
    toy_alerts = [(i, a) for i, group in enumerate(ours.alerts) for a in group
                  if isinstance(a, HeadDownAlert)]
    assert [a for _, a in toy_alerts] == alerts
    window = toy_alerts[0][0]   # the first window emitted at or after the alert
    assert ours.t_end[window] + with_toy.config.lag_s >= alerts[0].t
    assert with_toy.head_down.kernel[0]["restarts"][0] == 0.0


def test_a_clock_reset_restarts_the_toy_channel():
    recording = drive()
    samples = recording.samples.copy()
    samples[900:, 0] -= 1000.0   # the tracker's clock restarts far back at 30 s
    processor = StreamProcessor(channels=CHANNELS + (HeadDownChannel,))
    processor.update(samples)
    assert processor.rejected["clock_reset"] == 1
    assert processor.head_down.kernel[0]["restarts"][0] == 1.0


def test_a_processor_takes_as_many_channels_as_it_has_slots():
    fourth = StreamProcessor(channels=(HeadDownChannel,) * CHANNEL_SLOTS)   # every slot taken
    fourth.update(drive(seconds=5.0).samples)
    with pytest.raises(ValueError, match=f"at most {CHANNEL_SLOTS} channels, got "
                                         f"{CHANNEL_SLOTS + 1}"):
        StreamProcessor(channels=(HeadDownChannel,) * (CHANNEL_SLOTS + 1))
