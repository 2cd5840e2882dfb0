import json
import re

import pytest

from distractd import ConfigError
from distractd.pipeline import PipelineConfig


def test_defaults_follow_the_source():
    config = PipelineConfig()
    assert (config.window_s, config.hop_s, config.blink_window_s, config.perclos_window_s,
            config.perclos_closure) == (10.0, 0.5, 60.0, 180.0, 0.75)


def test_dict_round_trip_is_json():
    config = PipelineConfig(hop_s=0.25, use_tracker_flags=True)
    settings = json.loads(json.dumps(config.to_dict()))
    assert PipelineConfig.from_dict(settings) == config


@pytest.mark.parametrize("settings, message", [
    ({"hop_s": -0.5}, "pipeline.hop_s must be in [0.001, 600], got -0.5"),
    ({"window_s": 10.2}, "pipeline.window_s must be a whole multiple of hop_s=0.5, got 10.2"),
    ({"perclos_closure": 1.5}, "pipeline.perclos_closure must be in [0, 1], got 1.5"),
    ({"use_tracker_flags": 1}, "pipeline.use_tracker_flags must be of type bool, got 1"),
    ({"blink_min_s": 0.6}, "pipeline.blink_min_s must be <= blink_max_s=0.5, got 0.6"),
    ({"window": 10.0}, "pipeline has no setting 'window'"),
])
def test_errors_name_the_field_and_value(settings, message):
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("(", r"\(")
                       .replace(")", r"\)")):
        PipelineConfig.from_dict(settings)


@pytest.mark.parametrize("settings, message", [
    ({"window_s": 600.5}, "pipeline.window_s must be in (0, 600], got 600.5"),
    ({"blink_window_s": 3600.5}, "pipeline.blink_window_s must be in (0, 3600], got 3600.5"),
    ({"perclos_window_s": 1e7}, "pipeline.perclos_window_s must be in (0, 3600], got 10000000.0"),
    ({"baseline_memory_s": 3605.0},
     "pipeline.baseline_memory_s must be in (0, 3600], got 3605.0"),
    ({"hop_s": 0.001, "window_s": 1.0, "blink_window_s": 1.0, "perclos_window_s": 7.201},
     "pipeline.perclos_window_s must span at most 7200 hops of hop_s=0.001, got 7.201"),
    ({"baseline_spacing_s": 0.2},
     "pipeline.baseline_spacing_s must hold at most 720 windows in baseline_memory_s=180.0, "
     "got 0.2"),
])
def test_spans_that_size_memory_are_bounded(settings, message):
    """Issue 23, item 4: each span that sizes a stream's rings has an upper bound, so no setting
    can make a stream hold millions of hops (a 1e7 s PERCLOS span stalled a reload for seconds)."""
    with pytest.raises(ConfigError, match=re.escape(message)):
        PipelineConfig.from_dict(settings)


def test_the_bounds_admit_every_documented_value():
    """The bounds themselves, and the longest spans documented or in use (a 5 min baseline, a
    PERCLOS hour), are valid."""
    PipelineConfig(window_s=600.0, blink_window_s=3600.0, perclos_window_s=3600.0,
                   baseline_memory_s=3600.0, baseline_spacing_s=5.0)
    PipelineConfig(hop_s=0.001, window_s=7.2, blink_window_s=7.2, perclos_window_s=7.2,
                   baseline_memory_s=300.0, baseline_spacing_s=0.5)
