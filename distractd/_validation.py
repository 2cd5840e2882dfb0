"""Parameter constraints as data, checked by one helper.

Estimators, streaming objects and configuration loaders declare what each parameter accepts in a
dictionary of constraints and call :func:`check_params` once, at their boundary (``fit``, construction
of a streaming object, configuration load). Inner helpers and numba kernels trust their inputs.

>>> check_params({"hop_s": 0.5}, {"hop_s": Interval(0, None, closed="neither")}, owner="windows")
>>> check_params({"hop_s": -0.5}, {"hop_s": Interval(0, None, closed="neither")}, owner="windows")
Traceback (most recent call last):
...
distractd._errors.ConfigError: windows.hop_s must be in (0, inf), got -0.5
"""

import math
import numbers
from dataclasses import dataclass

from ._errors import ConfigError

__all__ = ["Interval", "Options", "check_params"]


@dataclass(frozen=True)
class Interval:
    """A real (or, with ``integer=True``, whole) number between ``low`` and ``high``.

    ``None`` for a bound means unbounded. ``closed`` is one of "both", "left", "right", "neither".
    """

    low: float | None
    high: float | None
    closed: str = "both"
    integer: bool = False

    def accepts(self, value):
        kind = numbers.Integral if self.integer else numbers.Real
        if isinstance(value, bool) or not isinstance(value, kind):
            return False
        if not math.isfinite(value):
            return False
        low_ok = self.low is None or (
            value >= self.low if self.closed in ("both", "left") else value > self.low)
        high_ok = self.high is None or (
            value <= self.high if self.closed in ("both", "right") else value < self.high)
        return low_ok and high_ok

    def __str__(self):
        left = "[" if self.closed in ("both", "left") and self.low is not None else "("
        right = "]" if self.closed in ("both", "right") and self.high is not None else ")"
        low = "-inf" if self.low is None else f"{self.low:g}"
        high = "inf" if self.high is None else f"{self.high:g}"
        kind = "an integer in " if self.integer else "in "
        return f"{kind}{left}{low}, {high}{right}"


@dataclass(frozen=True)
class Options:
    """One of a fixed set of values."""

    values: tuple

    def accepts(self, value):
        return value in self.values

    def __str__(self):
        return "one of " + ", ".join(repr(v) for v in self.values)


def check_params(params, constraints, owner, error=ConfigError):
    """Raise ``error`` naming ``owner.name``, the rule and the value for the first violation.

    Parameters
    ----------
    params : mapping
        Parameter names to values.
    constraints : mapping
        Parameter names to an :class:`Interval`, :class:`Options`, a type, ``None`` (accept
        ``None``) or a list of these (any one may accept).
    owner : str
        What the parameters belong to, used as the prefix of the name in the message.
    error : type, default=ConfigError
        The exception class raised.
    """
    for name, rules in constraints.items():
        if name not in params:
            continue
        value = params[name]
        rules = rules if isinstance(rules, list) else [rules]
        if any(_accepts(rule, value) for rule in rules):
            continue
        wanted = " or ".join(_describe(rule) for rule in rules)
        raise error(f"{owner}.{name} must be {wanted}, got {value!r}")


def _accepts(rule, value):
    if rule is None:
        return value is None
    if isinstance(rule, type):
        return isinstance(value, rule) and not (rule is not bool and isinstance(value, bool))
    return rule.accepts(value)


def _describe(rule):
    if rule is None:
        return "None"
    if isinstance(rule, type):
        return f"of type {rule.__name__}"
    return str(rule)
