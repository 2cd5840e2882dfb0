"""Cohort statistics of protocol results: per-driver means, mean and sd over drivers, and the
right-tailed paired t-tests of semi-supervised against supervised models (S0 §5.4.5)."""

import numpy as np
from scipy import stats

__all__ = ["summarise", "summarise_scheme", "paired_tests", "PAIRS", "WINDOW_METRICS", "TIMINGS",
           "DEPLOYMENT_METRICS"]

PAIRS = (("sselm", "elm"), ("lapsvm", "svm"), ("tsvm", "svm"))
"""(semi-supervised, supervised) pairs tested by right-tailed paired t-tests (S0 §5.4.5)."""

WINDOW_METRICS = ("accuracy", "sensitivity", "specificity", "g_mean")
"""Window metrics of every split record (:func:`~distractd.models.detectors.binary_scores`)."""

TIMINGS = ("select_ms", "fit_ms", "predict_ms")
"""Timings of every split record, in milliseconds."""

DEPLOYMENT_METRICS = ("detection_delay_s", "missed_fraction", "false_alarms_per_hour", "coverage")
"""Figures of the published states (the decision rule) on a test drive in time order."""


def summarise(cohort):
    """Per-driver means over splits, then mean and sd over drivers, for every model.

    Parameters
    ----------
    cohort : list of dict
        :func:`evaluate_cohort` output.

    Returns
    -------
    dict
        Per model: ``per_driver`` (metric -> list over drivers) and, per metric, ``{"mean", "sd"}``
        over drivers (sd with ddof=1, NaN for one driver). Deployment metrics: ``detection_delay_s``
        (per driver, the mean delay of detected episodes), ``missed_fraction`` (missed episodes)
        and ``false_alarms_per_hour``, each averaged over repeats first.
    """
    summary = {}
    for name in cohort[0]:
        per_driver = {key: [] for key in WINDOW_METRICS + TIMINGS}
        for driver in cohort:
            splits = driver[name]["splits"]
            for key in WINDOW_METRICS + TIMINGS:
                per_driver[key].append(float(np.nanmean([s[key] for s in splits])))
            if "delays_s" in driver[name]:
                delays = np.concatenate([np.asarray(d, float) for d in driver[name]["delays_s"]])
                missed = np.isnan(delays)
                per_driver.setdefault("detection_delay_s", []).append(
                    float(np.mean(delays[~missed])) if (~missed).any() else float("nan"))
                per_driver.setdefault("missed_fraction", []).append(
                    float(missed.mean()) if delays.size else float("nan"))
                per_driver.setdefault("false_alarms_per_hour", []).append(
                    float(np.nanmean(driver[name]["false_alarms_per_hour"])))
        summary[name] = {key: _mean_sd(values) for key, values in per_driver.items()}
        summary[name]["per_driver"] = per_driver
    return summary


def summarise_scheme(results):
    """Per-driver means over test drives, then mean and sd over drivers, for every model.

    Parameters
    ----------
    results : dict
        :func:`~distractd.models.evaluation.evaluate_scheme` output.

    Returns
    -------
    dict
        The shape of :func:`summarise`: per model, per metric ``{"mean", "sd"}`` over drivers and
        ``per_driver`` (metric -> list in driver order). ``detection_delay_s`` is the mean delay
        of the driver's detected episodes, ``missed_fraction`` the fraction of its episodes never
        detected, ``false_alarms_per_hour`` and ``coverage`` (windows decided) the means over its
        drives.
    """
    summary = {}
    for name, drivers in results.items():
        per_driver = {key: [] for key in WINDOW_METRICS + DEPLOYMENT_METRICS}
        for records in drivers.values():
            for key in WINDOW_METRICS + ("false_alarms_per_hour", "coverage"):
                per_driver[key].append(_nanmean([r[key] for r in records]))
            delays = np.array([d for r in records for d in r["delays_s"]], dtype=np.float64)
            missed = np.isnan(delays)
            per_driver["detection_delay_s"].append(
                float(delays[~missed].mean()) if (~missed).any() else float("nan"))
            per_driver["missed_fraction"].append(float(missed.mean()) if delays.size
                                                 else float("nan"))
        summary[name] = {key: _mean_sd(values) for key, values in per_driver.items()}
        summary[name]["per_driver"] = per_driver
        summary[name]["drivers"] = list(drivers)
    return summary


def paired_tests(summary, pairs, metric="g_mean", alternative="greater"):
    """Paired t-tests over drivers: is ``better`` above ``worse`` on ``metric``?

    Parameters
    ----------
    summary : dict
        :func:`summarise` output.
    pairs : sequence of (str, str)
        (better, worse) model names; pairs with a model missing from ``summary`` are skipped.
    metric : str, default="g_mean"
    alternative : {"greater", "two-sided"}, default="greater"
        Right-tailed (the source's tests of a semi-supervised model over its counterpart) or
        two-sided (a model against the naive floor, which may be the better one).

    Returns
    -------
    list of dict
        ``better``, ``worse``, ``metric``, ``alternative``, ``mean_difference``, ``wins`` and
        ``losses`` (drivers where ``better`` scored above, below ``worse``), ``t``, ``df``,
        ``p``.
    """
    tests = []
    for better, worse in pairs:
        if better not in summary or worse not in summary:
            continue
        a = np.asarray(summary[better]["per_driver"][metric])
        b = np.asarray(summary[worse]["per_driver"][metric])
        both = np.isfinite(a) & np.isfinite(b)
        if both.sum() < 2:
            continue
        result = stats.ttest_rel(a[both], b[both], alternative=alternative)
        tests.append({"better": better, "worse": worse, "metric": metric,
                      "alternative": alternative,
                      "mean_difference": float(np.mean(a[both] - b[both])),
                      "wins": int(np.sum(a[both] > b[both])),
                      "losses": int(np.sum(a[both] < b[both])),
                      "t": float(result.statistic), "df": int(both.sum()) - 1,
                      "p": float(result.pvalue)})
    return tests


def _nanmean(values):
    values = np.asarray(values, dtype=np.float64)
    return float(np.nanmean(values)) if np.isfinite(values).any() else float("nan")


def _mean_sd(values):
    values = np.asarray(values, dtype=np.float64)
    sd = float(np.nanstd(values, ddof=1)) if np.isfinite(values).sum() > 1 else float("nan")
    return {"mean": float(np.nanmean(values)) if np.isfinite(values).any() else float("nan"),
            "sd": sd}
