"""The join of a stream's vehicle samples to its eye samples (``[vehicle]`` options).

Vehicle samples arrive on their own topic (``vehicle.topic`` + stream id), at their own rate,
with their own ``t`` on the same time base as the stream's eye samples. Each stream that received
some has a :class:`VehicleJoin`: a bounded buffer of its recent vehicle samples, in time order.
When the stream's held eye samples are fed to the pipeline, each takes the vehicle fields of the
latest vehicle sample at or before its own ``t`` and at most ``vehicle.max_age_s`` older (a
zero-order hold, as a car's bus signals are held between frames); otherwise they stay NaN. A
field the eye sample carries itself is kept. A stream that has received vehicle samples but no eye
sample for ``vehicle.alone_after_s`` is processed as a stream of vehicle samples alone.
"""

import numpy as np

from ..pipeline.formats import FIELD_INDEX, N_FIELDS, VEHICLE_FIELDS

__all__ = ["VEHICLE_REJECT_REASONS", "VehicleJoin", "VehicleSamples"]

VEHICLE_REJECT_REASONS = ("vehicle_late", "vehicle_overflow")
"""Why vehicle samples were dropped: ``t`` not after the stream's newest vehicle sample (or not
finite), or too old for any eye sample still to come; or the buffer full
(``vehicle.buffer_samples``), which drops the oldest."""

_COLUMNS = np.array([FIELD_INDEX[name] for name in VEHICLE_FIELDS])


class VehicleSamples:
    """A decoded vehicle message's samples (a canonical block), told apart from eye samples."""

    __slots__ = ("block",)

    def __init__(self, block):
        self.block = block


class VehicleJoin:
    """One stream's recent vehicle samples, joined to its eye samples.

    Parameters
    ----------
    options : dict
        ``[vehicle]``: ``max_age_s``, ``buffer_samples``, ``alone_after_s``.
    now_s : float
        Monotonic time (s) of the stream's first vehicle message.
    eyes : bool
        The stream has received eye samples before.

    Attributes
    ----------
    alone : bool
        The stream is processed as vehicle samples alone (no eye sample came).
    eyes : bool
        The stream has received eye samples.
    """

    __slots__ = ("max_age_s", "t", "values", "n", "first_s", "alone_after_s", "alone", "eyes",
                 "t_eye")

    def __init__(self, options, now_s, eyes=False):
        capacity = options["buffer_samples"]
        self.max_age_s = options["max_age_s"]
        self.alone_after_s = options["alone_after_s"]
        self.t = np.empty(capacity)
        self.values = np.empty((capacity, len(VEHICLE_FIELDS)))
        self.n = 0
        self.first_s = now_s
        self.alone = False
        self.eyes = eyes
        self.t_eye = -np.inf  # t of the newest eye sample joined

    def add(self, block):
        """Buffer a vehicle message's samples; return ``(n_late, n_overflow)`` dropped."""
        t = block[:, 0]
        newest = self.t[self.n - 1] if self.n else -np.inf
        before = np.fmax.accumulate(np.concatenate(([newest], t[:-1])))  # NaN t skipped
        keep = (t > before) & np.isfinite(t) & (t >= self.t_eye - self.max_age_s)
        n_late = len(t) - int(np.count_nonzero(keep))
        t, values = t[keep], block[keep][:, _COLUMNS]
        capacity = len(self.t)
        if len(t) > capacity:
            t, values = t[-capacity:], values[-capacity:]
        n_overflow = max(0, self.n + len(t) - capacity)
        if n_overflow:
            kept = self.n - n_overflow if n_overflow < self.n else 0
            self.t[:kept] = self.t[self.n - kept:self.n]
            self.values[:kept] = self.values[self.n - kept:self.n]
            self.n = kept
        self.t[self.n:self.n + len(t)] = t
        self.values[self.n:self.n + len(t)] = values
        self.n += len(t)
        return n_late, n_overflow

    def due_alone(self, now_s):
        """Whether the stream is to be processed as vehicle samples alone from now on."""
        return not self.eyes and not self.alone and now_s - self.first_s >= self.alone_after_s

    def fill(self, block):
        """Return the eye samples ``block`` with their missing vehicle fields joined in; keep
        only the vehicle samples later ones can still use."""
        if not self.n or not len(block):
            return block
        t = block[:, 0]
        buffered = self.t[:self.n]
        index = np.searchsorted(buffered, t, side="right") - 1
        usable = (index >= 0) & (t - buffered[np.maximum(index, 0)] <= self.max_age_s)
        if usable.any():
            if not block.flags.writeable:
                block = block.copy()
            own = block[:, _COLUMNS]
            joined = self.values[np.maximum(index, 0)]
            block[:, _COLUMNS] = np.where(usable[:, None] & np.isnan(own), joined, own)
        if np.isfinite(t[-1]) and t[-1] > self.t_eye:
            self.t_eye = t[-1]
            first = max(int(np.searchsorted(buffered, self.t_eye, side="right")) - 1, 0)
            if first:
                self.t[:self.n - first] = buffered[first:].copy()
                self.values[:self.n - first] = self.values[first:self.n].copy()
                self.n -= first
        return block

    def take(self):
        """Remove and return the buffered vehicle samples as canonical rows (vehicle fields only,
        the others NaN), for a stream processed as vehicle samples alone."""
        from_buffer = np.full((self.n, N_FIELDS), np.nan)
        from_buffer[:, 0] = self.t[:self.n]
        from_buffer[:, _COLUMNS] = self.values[:self.n]
        self.n = 0
        return from_buffer
