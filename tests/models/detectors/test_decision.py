"""The one decision rule: quality gate, smoothing, glance alerts; stream equals batch."""

import numpy as np
import pytest

from distractd import ConfigError
from distractd.models.detectors import DecisionRule, DecisionSmoother, decide


def test_low_quality_and_missing_scores_get_no_decision_and_hold_the_smoother():
    t = np.arange(1.0, 7.0)
    scores = np.array([1.0, np.nan, 1.0, -1.0, -1.0, 1.0])
    quality = np.array([1.0, 1.0, 0.3, 0.3, 1.0, 1.0])
    states = decide(t, scores, quality, min_quality=0.5, mode="hysteresis", on=0.0, off=0.0)
    assert states.tolist() == [1, -1, -1, -1, 0, 1]


def test_usable_windows_follow_the_smoother_exactly():
    rng = np.random.default_rng(0)
    t = 0.5 * np.arange(1, 401)
    scores = rng.normal(size=400)
    states = decide(t, scores, np.ones(400), mode="hysteresis", on=0.3, off=-0.3)
    expected = DecisionSmoother("hysteresis", on=0.3, off=-0.3).update(t, scores)
    np.testing.assert_array_equal(states, expected)


def test_a_glance_alert_makes_the_state_distracted_for_the_hold_time():
    t = 0.5 * np.arange(1, 21)
    alerts = [(3.2, "long_distraction"), (7.0, "time_sharing")]
    states = decide(t, -np.ones(20), np.ones(20), alerts, alert_hold_s=2.0, mode="hysteresis")
    assert t[states == 1].tolist() == [3.5, 4.0, 4.5, 5.0]  # time-sharing: an event, no state
    states = decide(t, -np.ones(20), np.ones(20), alerts, mode="hysteresis",
                    alert_kinds=("long_distraction", "time_sharing"))
    assert t[states == 1].tolist() == [3.5, 4.0, 4.5, 5.0, 7.0, 7.5, 8.0, 8.5, 9.0]
    # alerts also decide windows the detector cannot (a gaze-only stream's missing features)
    states = decide(t, np.full(20, np.nan), np.ones(20), alerts)
    assert set(states[(t >= 3.5) & (t <= 5.0)]) == {1} and set(states[t < 3.5]) == {-1}


@pytest.mark.parametrize("seed", range(3))
def test_stream_equals_batch_over_random_splits(seed):
    rng = np.random.default_rng(seed)
    n = 300
    t = 0.5 * np.arange(1, n + 1)
    scores = np.where(rng.random(n) < 0.1, np.nan, rng.normal(size=n))
    quality = rng.uniform(0.3, 1.0, n)
    alerts = np.sort(rng.uniform(0, t[-1], 6))
    pairs = [(a, "long_distraction") for a in alerts]
    options = {"min_quality": 0.5, "mode": "dwell", "on": 0.2, "min_dwell_s": 1.5}
    batch = decide(t, scores, quality, pairs, **options)
    rule = DecisionRule(**options)
    cuts = np.r_[0, np.sort(rng.choice(np.arange(1, n), 15, replace=False)), n]
    parts = []
    for lo, hi in zip(cuts[:-1], cuts[1:]):
        due = [(a, kind) for a, kind in pairs if (t[lo - 1] if lo else -np.inf) < a <= t[hi - 1]]
        parts.append(rule.update(t[lo:hi], scores[lo:hi], quality[lo:hi], due))
    np.testing.assert_array_equal(np.concatenate(parts), batch)


def test_bad_settings_name_the_field():
    with pytest.raises(ConfigError, match="decision.min_quality"):
        DecisionRule(min_quality=1.5)
    with pytest.raises(ConfigError, match="smoothing.off"):
        DecisionRule(mode="hysteresis", on=0.0, off=0.5)


def test_the_daemons_defaults_are_the_rules():
    import inspect

    from distractd.daemon import DEFAULTS, decision_options

    defaults = {name: p.default for name, p in inspect.signature(DecisionRule).parameters.items()
                if name in ("min_quality", "engagement_s", "mode", "on", "off", "min_dwell_s",
                            "loss_evidence")}
    assert decision_options(DEFAULTS) == defaults
    assert decision_options(DEFAULTS, ["glance_track_loss_fraction"])["loss_evidence"] is True
