"""The conformance scorecard's scenario families, in a module of their own so that
``distractd conformance --help`` loads no simulator kernel (docs/conformance.md)."""

FAMILIES = ("long_distraction", "vats", "phone", "microsleep", "sleep", "drowsiness",
            "unresponsive", "robustness", "negative")
"""The scenario families (issue 27), each scenario's ``family`` in ``scorecard.json``."""
