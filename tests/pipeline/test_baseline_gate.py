"""The attentive gate and the absolute features of the per-stream baseline: a task longer than the
memory stays out of line, a lasting benign change is still learnt, stream equals batch."""

import numpy as np
import pytest

from distractd import ConfigError
from distractd.pipeline import (
    FEATURE_NAMES, PipelineConfig, RunningBaseline, StreamProcessor, extract_features,
)
from distractd.pipeline._baseline import GATE_DIRECTIONS
from distractd.pipeline.formats import read_taamneh

MEMORY_S = 180.0


def loss_with_step(t0, t1, seed=0, hop_s=1.0, end_s=1500.0):
    """A track-loss-like feature (about 0.1, noisy) that rises to about 0.6 from t0 to t1, and a
    second, gaze-like feature that does not change."""
    t = np.arange(10.0, end_s, hop_s)
    rng = np.random.default_rng(seed)
    loss = np.clip(0.1 + 0.05 * rng.standard_normal(len(t)) + 0.5 * ((t >= t0) & (t < t1)), 0, 1)
    gaze = rng.standard_normal(len(t))
    return t, np.column_stack([loss, gaze])


def baseline(gate=True, gate_max_s=600.0, absolute=None):
    return RunningBaseline(2, MEMORY_S, gate=[1, 0] if gate else None, gate_z=2.0,
                           gate_max_s=gate_max_s, absolute=absolute)


def median_z(t, Z, t0, t1):
    return float(np.median(Z[(t >= t0) & (t < t1), 0]))


def test_a_task_longer_than_the_memory_is_not_absorbed_while_gated():
    t, X = loss_with_step(300.0, 700.0)  # 400 s of task: more than twice the 180 s memory
    plain = baseline(gate=False).update(t, X)
    gated = baseline().update(t, X)
    # without the gate the task becomes the normal within the memory
    assert median_z(t, plain, 300.0, 330.0) > 3.0   # measured 4.9 (the step is 10 noise SDs)
    assert abs(median_z(t, plain, 600.0, 700.0)) < 1.0   # measured 0.07
    # with it, the task's last 100 s stand as far out as its first 30 s
    assert median_z(t, gated, 600.0, 700.0) > 5.0   # measured 8 (the clip)
    assert median_z(t, gated, 600.0, 700.0) == pytest.approx(median_z(t, gated, 300.0, 330.0),
                                                             abs=0.5)
    # and after it the driver is judged against the attentive past, at once
    assert abs(median_z(t, gated, 720.0, 800.0)) < 1.0   # measured 0.31
    assert median_z(t, plain, 720.0, 800.0) < -1.0  # measured -1.8: its ring still holds the task
    # the feature that does not vote is standardised as before, against attentive windows
    assert np.nanstd(gated[t > 800.0, 1]) == pytest.approx(1.0, abs=0.15)


def test_a_lasting_change_is_learnt_once_it_outlasts_the_gate():
    t, X = loss_with_step(300.0, np.inf)  # a tracker that loses the eyes more from now on
    Z = baseline(gate_max_s=300.0).update(t, X)
    assert median_z(t, Z, 500.0, 600.0) > 5.0   # within gate_max_s: out of line (measured 8)
    # then, one memory later, the new normal (measured 0.07)
    assert abs(median_z(t, Z, 300.0 + 300.0 + MEMORY_S, 1500.0)) < 1.0


def test_absolute_features_pass_through_once_ready_and_still_gate():
    t, X = loss_with_step(300.0, 700.0)
    Z = baseline(absolute=[True, False]).update(t, X)
    ready = np.isfinite(Z[:, 1])
    np.testing.assert_array_equal(Z[ready, 0], X[ready, 0])
    assert np.isnan(Z[~ready, 0]).all()
    relative = baseline().update(t, X)
    np.testing.assert_array_equal(Z[:, 1], relative[:, 1])  # the same gate decisions


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_gated_stream_equals_batch_over_random_splits(seed):
    t, X = loss_with_step(250.0, 500.0, seed=seed, hop_s=0.5)
    X[np.random.default_rng(seed).random(X.shape) < 0.05] = np.nan
    batch = baseline(gate_max_s=120.0, absolute=[False, True]).update(t, X)
    rng = np.random.default_rng(seed + 10)
    cuts = np.sort(rng.choice(np.arange(1, len(t)), 60, replace=False))
    stream = baseline(gate_max_s=120.0, absolute=[False, True])
    parts = [stream.update(t[lo:hi], X[lo:hi])
             for lo, hi in zip(np.r_[0, cuts], np.r_[cuts, len(t)])]
    np.testing.assert_array_equal(np.vstack(parts), batch)


def test_from_config_gates_on_the_glance_features_only():
    config = PipelineConfig(baseline=True, baseline_gate=True, baseline_absolute_glances=True)
    built = RunningBaseline.from_config(config, FEATURE_NAMES)
    votes = {name: int(sign) for name, sign in zip(FEATURE_NAMES, built.gate) if sign}
    assert votes == GATE_DIRECTIONS
    assert [n for n, a in zip(FEATURE_NAMES, built.absolute) if a] == [
        n for n in FEATURE_NAMES if n.startswith("glance_")]
    default = RunningBaseline.from_config(PipelineConfig(baseline=True), FEATURE_NAMES)
    assert not default.gate.any()   # the defaults: no gate, absolute glance features
    np.testing.assert_array_equal(default.absolute, built.absolute)
    off = RunningBaseline.from_config(
        PipelineConfig(baseline=True, baseline_absolute_glances=False), FEATURE_NAMES)
    assert not off.absolute.any()


def test_bad_gate_settings_name_the_field():
    with pytest.raises(ConfigError, match="baseline.gate must have one entry per feature"):
        RunningBaseline(3, gate=[1, 0])
    with pytest.raises(ConfigError, match="baseline.gate_z"):
        RunningBaseline(3, gate_z=0.0)
    with pytest.raises(ConfigError, match="pipeline.baseline_gate_max_s"):
        PipelineConfig(baseline_gate_max_s=-1.0)


def texting_loss(recording, config):
    """Median standardised track-loss fraction of a texting drive's texting windows."""
    windows = extract_features(recording, config)
    z = windows.X[:, FEATURE_NAMES.index("glance_track_loss_fraction")]
    texting = np.isfinite(z) & (windows.label == 1)
    return float(np.median(z[texting])) if texting.any() else np.nan


def test_real_texting_stays_out_of_line_through_the_processor(shared_data):
    """Taamneh et al. 2017 (doi:10.1038/sdata.2017.110) texting drives, 1 Hz gaze: two 160 s
    texting blocks, each close to the 3-minute memory. Without the gate a driver's median texting
    window stands about one robust SD above the baseline (median over drivers); with it, 3.6.
    Stream equals batch through the processor with the gate on."""
    paths = sorted((shared_data / "taamneh").glob("T*.csv"))
    if not paths:
        pytest.skip("no Taamneh subject file in ../shared/data/taamneh")
    plain, gated = (PipelineConfig(baseline=True, baseline_gate=gate,
                                   baseline_absolute_glances=False) for gate in (False, True))
    medians = np.array([(texting_loss(r, plain), texting_loss(r, gated))
                        for path in paths for r in read_taamneh(path, drives=(7,))])
    medians = medians[np.isfinite(medians).all(axis=1)]
    assert len(medians) >= 20   # 24 drivers with gaze while texting
    assert np.median(medians[:, 0]) < 1.5    # measured 1.0
    assert np.median(medians[:, 1]) > 2.5    # measured 3.6
    assert (medians[:, 1] > medians[:, 0]).sum() >= 0.7 * len(medians)   # measured 19 of 24

    recording = read_taamneh(paths[1], drives=(7,))[0]
    batch = extract_features(recording, gated)
    processor = StreamProcessor(gated)
    parts = [processor.update(recording.samples[lo:lo + 37], recording.labels[lo:lo + 37])
             for lo in range(0, recording.n_samples, 37)] + [processor.flush()]
    np.testing.assert_array_equal(np.vstack([w.X for w in parts]), batch.X)
