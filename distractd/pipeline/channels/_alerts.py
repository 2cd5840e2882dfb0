"""Alert rows: the one record every channel writes its alerts in, and the alerts they make.

A channel writes one row per episode (glance, eye closure, ...) an alert is based on, the first
row of an alert with ``first`` = 1; the processor stamps each row with its channel's index and the
count of windows written before it, in one buffer shared by all channels.
"""

from dataclasses import dataclass, fields

from numba import njit

from .._config import _record

__all__ = ["ALERT_ROW", "ChannelAlert", "write_alert", "keep_episode", "write_episodes",
           "alerts_from_rows"]

ALERT_ROW = _record(
    "channel",   # index of the channel in CHANNELS (set by the processor)
    "kind",      # index into the channel's alert kinds
    "t",         # stream time the alert was raised, s
    "amount",    # what crossed the threshold, s (glance away, closure so far; NaN: none)
    "level",     # a share the alert reports (PERCLOS; NaN: none)
    "start",     # the row's episode: start and end so far, s (NaN: no episode)
    "end",
    "first",     # 1 on the first row of an alert
    "window",    # windows written before the alert (set by the processor)
)


@dataclass(frozen=True)
class ChannelAlert:
    """What every channel's alert holds first (a channel's alert class adds its own fields).

    Attributes
    ----------
    kind : str
        One of the channel's alert kinds.
    t : float
        Stream time the alert was raised, seconds.
    """

    kind: str
    t: float

    @classmethod
    def of_row(cls, kind, t, episodes, amount, level):
        """The alert of an alert row's values (``kind`` by name), with as many of the episodes,
        the amount and the level as the class has fields for, in that order."""
        return cls(kind, t, *(episodes, amount, level)[:len(fields(cls)) - 2])


@njit(cache=True, inline="always")
def write_alert(alerts, n_a, kind, t, amount, level, start, end, first):
    """Write one alert row at row ``n_a`` of ``alerts``; return the new row count."""
    row = alerts[n_a]
    row.channel = 0.0
    row.kind = kind
    row.t = t
    row.amount = amount
    row.level = level
    row.start = start
    row.end = end
    row.first = 1.0 if first else 0.0
    row.window = 0.0
    return n_a + 1


@njit(cache=True, inline="always")
def keep_episode(ring, head, n, start, end):
    """Keep an episode ``(start, end)`` in a ring of recent ones (rows of (start, end)) at row
    ``head``, ``n`` rows being held; return the new head and count."""
    row = int(head)
    ring[row, 0] = start
    ring[row, 1] = end
    return (row + 1) % ring.shape[0], min(n + 1.0, ring.shape[0])


@njit(cache=True, inline="always")
def write_episodes(alerts, n_a, kind, t, amount, level, ring, head, used):
    """Write an alert's rows for the ``used`` latest episodes of a ring (``head`` its next row),
    oldest first, the first marked as the alert's first row; return the new row count."""
    size = ring.shape[0]
    for i in range(used - 1, -1, -1):
        row = (int(head) - 1 - i) % size
        n_a = write_alert(alerts, n_a, kind, t, amount, level, ring[row, 0], ring[row, 1],
                          i == used - 1)
    return n_a


def alerts_from_rows(rows, channels):
    """The alerts of ``rows`` (alert rows in order), each made by its channel in ``channels``
    (``channel.alert(kind, t, episodes, amount, level)``), and the window index of each; in time
    order within each window (a channel's own rows are; several channels' are merged)."""
    found = []
    for row in rows.tolist():
        channel, kind, t, amount, level, start, end, first, window = row
        if first == 1.0:
            found.append((int(window), t, int(channel), kind, [], amount, level))
        if start == start:
            found[-1][4].append((start, end))
    if len({alert[2] for alert in found}) > 1:
        found.sort(key=lambda alert: alert[:3])
    alerts = [channels[c].alert(int(k), t, tuple(e), a, lv) for _, t, c, k, e, a, lv in found]
    return alerts, [alert[0] for alert in found]
