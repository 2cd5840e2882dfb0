"""Every numeric pipeline setting has an upper bound (issue 37, item 2: 21 spans had none, so a
model could carry ``glance_sharing_window_s = 1e7`` or ``max_jump_s = 1e308`` past ``run
--check``). Each refusal is one line naming the setting, its bound and the value."""

import dataclasses
import math

import pytest

from distractd._errors import ConfigError
from distractd.pipeline import PipelineConfig

NUMERIC = [f.name for f in dataclasses.fields(PipelineConfig)
           if isinstance(f.default, float) and not isinstance(f.default, bool)]


def test_every_duration_setting_is_counted():
    spans = [name for name in NUMERIC if name.endswith("_s") and not name.endswith("_deg_s")]
    assert len(spans) >= 35 and "glance_sharing_window_s" in spans and "max_jump_s" in spans


@pytest.mark.parametrize("name", NUMERIC)
@pytest.mark.parametrize("value", [1e7, 1e308])
def test_a_huge_value_of_any_numeric_setting_is_refused_in_one_line(name, value):
    with pytest.raises(ConfigError) as refused:
        PipelineConfig(**{name: value})
    message = str(refused.value)
    assert message.startswith(f"pipeline.{name} must be ") and message.endswith(f"got {value!r}")
    assert "\n" not in message


def test_the_defaults_and_an_hour_are_accepted():
    config = PipelineConfig(glance_sharing_window_s=3600.0, max_jump_s=3600.0,
                            fatigue_open_memory_s=3600.0)
    assert config.glance_sharing_window_s == 3600.0
    assert all(math.isfinite(getattr(PipelineConfig(), name)) for name in NUMERIC)
