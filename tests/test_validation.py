import pytest

from distractd import ConfigError
from distractd._validation import Interval, Options, check_params

CONSTRAINTS = {
    "hop_s": Interval(0, None, closed="neither"),
    "n_neighbors": Interval(1, None, integer=True),
    "mode": Options(("hysteresis", "dwell")),
    "width": [None, Interval(0, None, closed="neither")],
    "flag": bool,
}


@pytest.mark.parametrize("name, value, message", [
    ("hop_s", 0.0, r"windows.hop_s must be in \(0, inf\), got 0.0"),
    ("hop_s", float("nan"), r"windows.hop_s must be in \(0, inf\), got nan"),
    ("n_neighbors", 2.5, r"windows.n_neighbors must be an integer in \[1, inf\), got 2.5"),
    ("n_neighbors", True, r"windows.n_neighbors must be an integer in \[1, inf\), got True"),
    ("mode", "fast", r"windows.mode must be one of 'hysteresis', 'dwell', got 'fast'"),
    ("width", -1.0, r"windows.width must be None or in \(0, inf\), got -1.0"),
    ("flag", 1, r"windows.flag must be of type bool, got 1"),
])
def test_violations_name_the_field_rule_and_value(name, value, message):
    with pytest.raises(ConfigError, match=message):
        check_params({name: value}, CONSTRAINTS, owner="windows")


def test_valid_values_and_absent_names_pass():
    check_params({"hop_s": 0.5, "n_neighbors": 10, "mode": "dwell", "width": None, "flag": False},
                 CONSTRAINTS, owner="windows")
    check_params({}, CONSTRAINTS, owner="windows")
