"""A log that says at most one line per reason per interval, and how many it held back."""

import logging

import numpy as np

__all__ = ["RateLimitedLog"]

log = logging.getLogger("distractd.daemon")


class RateLimitedLog:
    """At most one log line per reason per interval, reporting how many were suppressed: lines
    ``<prefix> <message>`` and ``<prefix> <n> more <reason> <noun>`` at ``level``.

    Parameters
    ----------
    interval_s : float
        Shortest time between two lines of one reason, in seconds
        (``service.rejection_log_interval_s``).
    prefix, noun : str
        The words around each line.
    level : int
        The lines' logging level.
    """

    def __init__(self, interval_s, prefix="rejected", noun="messages", level=logging.WARNING):
        self.interval_s = interval_s
        self.prefix = prefix
        self.noun = noun
        self.level = level
        self.last_s = {}
        self.suppressed = {}

    def warning(self, reason, message, now_s):
        """Log ``message`` unless a line of ``reason`` was logged less than ``interval_s`` ago
        (then count it)."""
        if now_s - self.last_s.get(reason, -np.inf) < self.interval_s:
            self.suppressed[reason] = self.suppressed.get(reason, 0) + 1
            return
        more = self.suppressed.pop(reason, 0)
        log.log(self.level, "%s %s%s", self.prefix, message,
                f" ({more} more {reason} since the last line)" if more else "")
        self.last_s[reason] = now_s

    def flush(self, now_s, force=False):
        """Log the counts suppressed for reasons whose interval has passed (all when forced)."""
        for reason in list(self.suppressed):
            if force or now_s - self.last_s[reason] >= self.interval_s:
                log.log(self.level, "%s %d more %s %s", self.prefix, self.suppressed.pop(reason),
                        reason, self.noun)
                self.last_s[reason] = now_s
