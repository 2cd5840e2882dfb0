import json

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
    ({"hop_s": -0.5}, "pipeline.hop_s must be in [0.001, inf), got -0.5"),
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
