"""The fatigue channel on closures it once missed (issue 35): eyes closed from the stream's first
sample or over a clock restart, near-shut eyes, and drowsiness from repeated sub-second closures.
Each case alerts, or says it cannot judge yet (``available`` false), never "open" by default.

The closures are scripted into a simulated drive's eyelids (``script_eyelids``: the tracker loses
the pupil under the lid, as it does in a blink)."""

import numpy as np
import pytest

from distractd.pipeline import PipelineConfig, Recording, detect_fatigue
from distractd.simulators._behaviour import BlinkPlan
from distractd.simulators._body_scripts import ScriptedClosure, closure_plan, script_eyelids
from distractd.simulators._simulate import simulate_drive_truth

CONFIG = PipelineConfig(drive_side="right")


@pytest.fixture(scope="module")
def drive():
    return simulate_drive_truth(5, 200.0, 60.0, protocol="none")


def _lids(drive, plan, cut_s=0.0):
    """The drive with ``plan``'s lids, its first ``cut_s`` dropped (a stream starting then)."""
    recording, truth = drive
    samples = script_eyelids(recording.samples, truth.closure[truth.rows], plan)
    samples = samples[samples[:, 0] >= cut_s]
    samples[:, 0] -= cut_s
    return detect_fatigue(Recording(samples, recording.labels[:len(samples)], recording.meta),
                          CONFIG)


def _slow_closures(first_s, last_s, every_s, shut_s):
    starts = np.arange(first_s, last_s, every_s)
    n = len(starts)
    return BlinkPlan(starts, np.full(n, 0.1), np.full(n, shut_s), np.full(n, 0.1), np.ones(n))


@pytest.mark.parametrize("plan, cut_s, open_s", [
    (closure_plan([ScriptedClosure(0.0, 20.0)]), 0.0, 20.0),      # closed from the first sample
    (closure_plan([ScriptedClosure(95.0, 20.0)]), 100.0, 15.0),   # a restart in the middle of it
    (BlinkPlan(*(np.array([v]) for v in (0.0, 0.12, 20.0, 0.25, 0.9))), 0.0, 20.0),  # 90 % shut
], ids=["from-the-start", "restart-mid-closure", "near-shut"])
def test_a_closure_the_stream_starts_in_raises_microsleep_and_sleep(drive, plan, cut_s, open_s):
    result = _lids(drive, plan, cut_s)
    kinds = {a.kind: a.t for a in result.alerts}
    assert kinds["microsleep"] == pytest.approx(1.0, abs=0.2)
    assert kinds["sleep"] == pytest.approx(3.0, abs=0.2)
    during = (result.t > 2.0) & (result.t < open_s - 1.0)
    assert result.available[during].mean() > 0.9
    assert (result.eyes_closed_s[during & result.available] > 1.0).all()
    # the open level is learned from open eyes only: not judged again until it is
    reopened = (result.t > open_s + 2.0) & (result.t < open_s + 8.0)
    assert not result.available[reopened].any()
    assert result.available[result.t > 40.0].mean() > 0.8


@pytest.mark.parametrize("every_s, shut_s", [(2.0, 0.8), (1.5, 0.45)])
def test_repeated_sub_second_closures_raise_drowsiness(drive, every_s, shut_s):
    # 1 s closed / 1 s open and 0.6 s / 0.9 s: longer than any blink, shorter than a microsleep
    result = _lids(drive, _slow_closures(60.0, 180.0, every_s, shut_s))
    drowsy = [a.t for a in result.alerts if a.kind == "drowsiness"]
    assert drowsy and 60.0 < drowsy[0] < 90.0


def test_a_calm_drive_raises_no_fatigue_alert(drive):
    result = _lids(drive, closure_plan([]))
    assert result.alerts == []
    assert result.available[result.t > 15.0].mean() > 0.9
