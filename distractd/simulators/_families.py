"""The conformance scorecard's scenario families, in a module of their own so that
``distractd conformance --help`` loads no simulator kernel (docs/conformance.md)."""

FAMILIES = ("long_distraction", "vats", "phone", "robustness", "negative")
"""The scenario families built today, each scenario's ``family`` in ``scorecard.json`` (the
fatigue families wait for the fatigue alerts)."""
