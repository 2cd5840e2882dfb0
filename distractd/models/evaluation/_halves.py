"""Development and held-out halves of a set of drivers, and per-driver figures over them.

Choose on one part of the data, report on another: every study of real recordings splits the
drivers the same way — sorted by id, the drivers at odd positions (the second, fourth, ...: T003,
T007, ... of Taamneh et al.) are the **development** half on which designs are chosen, those at
even positions the **held-out** half that is only reported. A figure is a mean over drivers (each
driver's drives averaged first), given for the held-out half, the development half and all.
"""

import warnings

import numpy as np
from scipy.stats import ttest_rel

__all__ = ["driver_halves", "per_driver_means", "half_figures", "versus_floor"]


def driver_halves(driver_ids):
    """``(development, held_out)`` sets of driver ids: odd and even positions of the sorted
    ids."""
    ordered = sorted(driver_ids)
    return set(ordered[1::2]), set(ordered[0::2])


def per_driver_means(results, metric):
    """Per driver id, the NaN-aware mean of ``metric`` over the driver's test records
    (:func:`~._schemes.evaluate_scheme`'s per-model value); NaN where none is finite."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return {driver: float(np.nanmean([record[metric] for record in records]))
                for driver, records in results.items()}


def _rounded_mean_sd(values):
    """Mean and sd of the finite values, rounded to 3 decimals for reports, and their count."""
    values = np.array([v for v in values if v is not None and np.isfinite(v)], dtype=float)
    return {"mean": round(float(values.mean()), 3) if len(values) else None,
            "sd": round(float(values.std(ddof=1)), 3) if len(values) > 1 else None,
            "n": int(len(values))}


def half_figures(values, development, held_out):
    """Mean, sd and count of per-driver ``values`` (dict driver -> float) for the held-out
    half, the development half and all drivers (non-finite values left out)."""
    return {"held_out": _rounded_mean_sd(v for d, v in values.items() if d in held_out),
            "development": _rounded_mean_sd(v for d, v in values.items() if d in development),
            "all": _rounded_mean_sd(values.values())}


def versus_floor(per_model, floor, development, held_out):
    """Each model against ``floor`` over the drivers both score, per half.

    Parameters
    ----------
    per_model : dict
        Per model name, per driver id: a figure (e.g. window G-mean).
    floor : str
        The model every other is compared with (the naive floor).
    development, held_out : set
        :func:`driver_halves`.

    Returns
    -------
    dict
        Per model, per half (``held_out``, ``development``, ``all``) with two drivers or more:
        ``n``, ``mean_difference`` (model − floor), ``wins``, ``losses`` and ``p``, the
        two-sided paired t-test's p-value.
    """
    base = per_model[floor]
    out = {}
    for model, values in per_model.items():
        if model == floor:
            continue
        for half, members in (("held_out", held_out), ("development", development),
                              ("all", set(values) | set(base))):
            both = [d for d in sorted(members) if np.isfinite(values.get(d, np.nan))
                    and np.isfinite(base.get(d, np.nan))]
            if len(both) < 2:
                continue
            a = np.array([values[d] for d in both])
            b = np.array([base[d] for d in both])
            out.setdefault(model, {})[half] = {
                "n": len(both), "mean_difference": round(float(np.mean(a - b)), 3),
                "wins": int((a > b).sum()), "losses": int((a < b).sum()),
                "p": float(ttest_rel(a, b).pvalue) if np.any(a != b) else 1.0}
    return out
