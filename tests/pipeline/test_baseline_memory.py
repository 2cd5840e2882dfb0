"""The per-stream baseline's default memory: a lasting change of the driver is absorbed within
three minutes while its first seconds stand out."""

import numpy as np

from distractd.pipeline import PipelineConfig, RunningBaseline


def test_default_memory_absorbs_a_lasting_change_within_three_minutes():
    config = PipelineConfig()
    baseline = RunningBaseline(1, config.baseline_memory_s, config.baseline_spacing_s,
                               config.baseline_warmup_s)
    t = np.arange(0.5, 900.0, 0.5)
    rng = np.random.default_rng(3)
    x = rng.standard_normal(len(t)) + 6.0 * (t >= 400.0)  # the posture (or traffic) changes
    z = baseline.update(t, x[:, None])[:, 0]

    def typical(t0, t1):
        return np.median(z[(t >= t0) & (t < t1)])

    assert abs(typical(300.0, 400.0)) < 0.5
    assert typical(400.0, 420.0) > 3.0       # just after it: well out of line
    assert abs(typical(500.0, 540.0)) < 0.5  # 100-140 s after it: the new normal (a 5 min
    # memory still gave 1.6 here: the old level held most of its ring)
