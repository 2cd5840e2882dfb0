"""The names ``evaluate`` offers (``--scheme``, ``--recipe``, ``--normalisation``; their meaning:
:mod:`._schemes`): names alone, so that declaring the command loads no estimator."""

__all__ = ["SCHEMES", "RECIPES", "NORMALISATIONS"]

SCHEMES = ("new-driver", "causal", "new-drive", "blocked", "source")
RECIPES = ("cohort", "per-driver")
NORMALISATIONS = ("running", "drive", "driver", "none")
