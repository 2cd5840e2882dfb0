"""``json_ready``: the one conversion of reports, model metadata and review pages to JSON."""

import json
import math

import numpy as np

from distractd._json import json_ready


def test_numpy_scalars_and_arrays_become_python_values_recursively():
    value = {"C": np.float64(2.5), "n": np.int64(7), "flag": np.bool_(True), "kernel": "rbf",
             "grid": (np.float32(0.5), [np.int32(3), None]), "X": np.array([[1, 2], [3, 4]])}
    plain = json_ready(value)
    assert plain == {"C": 2.5, "n": 7, "flag": True, "kernel": "rbf", "grid": [0.5, [3, None]],
                     "X": [[1, 2], [3, 4]]}
    assert [type(plain[k]) for k in ("C", "n", "flag")] == [float, int, bool]
    assert json.loads(json.dumps(plain)) == plain


def test_nan_and_infinity_become_none_as_json_has_neither():
    plain = json_ready({"mean": math.nan, "sd": np.float64(np.inf), "x": np.array([1.0, np.nan]),
                        "rows": [-math.inf, 0.0]})
    assert plain == {"mean": None, "sd": None, "x": [1.0, None], "rows": [None, 0.0]}
    json.dumps(plain, allow_nan=False)   # raises on any NaN left


def test_decimals_round_floats_only():
    plain = json_ready({"t": np.array([0.123456, np.nan]), "score": 2.000049,
                        "state": np.array([-1, 0, 1])}, decimals=4)
    assert plain == {"t": [0.1235, None], "score": 2.0, "state": [-1, 0, 1]}
