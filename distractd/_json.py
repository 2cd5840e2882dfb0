"""Values made ready for JSON: one conversion for reports, model metadata and the review page."""

import math

import numpy as np

__all__ = ["json_ready"]


def json_ready(value, decimals=None):
    """``value`` with numpy scalars as Python ones, arrays and tuples as lists (recursively through
    dicts and lists), and every NaN or infinity as None, since JSON has neither.

    Parameters
    ----------
    value : object
        A number, string, None, numpy scalar or array, or a dict, list or tuple of them.
    decimals : int, optional
        Round floats to this many decimals (a smaller page for the browser); None keeps them
        whole.

    Returns
    -------
    object
        Built from dict, list, str, int, float, bool and None only.
    """
    if isinstance(value, dict):
        return {key: json_ready(item, decimals) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_ready(item, decimals) for item in value]
    if isinstance(value, np.ndarray):
        if value.dtype.kind != "f":
            return value.tolist()
        if decimals is not None:
            value = np.round(value, decimals)
        plain = value.astype(object)
        plain[~np.isfinite(value)] = None
        return plain.tolist()
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        return value if decimals is None else round(value, decimals)
    return value
