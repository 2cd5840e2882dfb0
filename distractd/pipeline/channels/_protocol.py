"""The protocol of a per-sample channel: what the processor's compiled pass calls on every channel.

A channel's kernel is a plain tuple of arrays whose first two are its one-record state and output
arrays (``(state, out, ...)``; the rest are its own). The processor holds one kernel per channel
(:data:`~distractd.pipeline.channels.CHANNELS` order) in its channel slots, unpacks them once per
block and calls, per accepted sample and in that order, :func:`step` on each channel that is
:func:`enabled` (:func:`restart` on a clock reset); numba picks each channel's implementation by the
record type of its state, so the processor never names a channel, and an empty slot (None) does
nothing. A channel module registers its implementations with :func:`implement` (docs/pipeline.md
"Channels" lists what a channel provides). :func:`step` is compiled apart and called, not inlined
(numba's inlining of overloads mis-compiled the pass: the events' state came out changed), and
compiled without numba's reference counting (``_nrt=False``): the arrays it is passed live in the
processor for the whole call, and counting each of them in and out of every call made every
sample about half again as slow. So a channel's step allocates no array (numba refuses to
compile one that does).
"""

from dataclasses import dataclass

import numpy as np
from numba import from_dtype, types
from numba.extending import overload

__all__ = ["Channel", "ChannelTrace", "one_record", "implement", "enabled", "step", "restart"]


class Channel:
    """The Python side of a channel, built per stream by the processor. A subclass is declared
    with ``name`` (the processor's attribute, ``NAME``), ``output`` (the per-sample output record,
    ``OUTPUT``), ``alert`` (its :class:`~._alerts.ChannelAlert` class, ``ALERT``), ``kinds`` (its
    alert kinds, ``ALERT_KINDS``) and ``max_alert_rows`` (alert rows one sample can write at
    most, ``MAX_ALERT_ROWS``); it sets ``kernel`` (its arrays, ``(state, out, ...)``) and provides
    ``trace(t, rejected, outputs, alerts)`` (its batch twin)."""

    def __init_subclass__(cls, *, name, output, alert, kinds, max_alert_rows, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.NAME, cls.OUTPUT, cls.ALERT, cls.ALERT_KINDS = name, output, alert, kinds
        cls.MAX_ALERT_ROWS = max_alert_rows

    def __init__(self, config):
        self.config = config

    @classmethod
    def alert(cls, kind, t, episodes, amount, level):
        """The alert of an alert row's values (``kind`` an index into ``ALERT_KINDS``)."""
        return cls.ALERT.of_row(cls.ALERT_KINDS[kind], t, episodes, amount, level)


@dataclass
class ChannelTrace:
    """What every channel's per-sample trace of a recording holds first (its batch twin's result;
    a channel's trace class adds its columns, then its ``alerts``).

    Attributes
    ----------
    t : ndarray of shape (n_samples,)
        Sample times, seconds.
    """

    t: np.ndarray


def one_record(dtype, reset):
    """A one-record array of ``dtype`` (a state record) set to its initial state by ``reset``."""
    states = np.empty(1, dtype)
    reset(states)
    return states


def enabled(kernel, params):
    """Whether the channel runs for these parameters (its ``PipelineConfig`` switch)."""


def step(kernel, trace, channel, x, sample, params, face, slot, alerts, n_a, k):
    """Advance the channel by one accepted sample ``x`` (``sample``: its ``_face.SAMPLE`` record;
    ``face``: the shared ``_face.FACE`` record): write its outputs to ``kernel[1][0]``, add them to
    ``slot`` (the sample's hop of the window ring) and, when ``k >= 0``, to row ``k`` of
    ``trace``; write any alert rows (``_alerts.ALERT_ROW``, stamped with ``channel``, its index in
    the processor) to ``alerts`` from row ``n_a``; return the new alert row count. One compiled
    call per channel and sample: the processor calls nothing else per sample."""


def restart(kernel, face):
    """A new clock: start afresh (what the channel publishes in ``face`` included)."""


def implement(state, switch, step_impl, to_hop_impl, restart_impl):
    """Register a channel's compiled implementations of the protocol for kernels whose state is a
    record array of dtype ``state``: ``switch`` names the parameter (a field of ``_config.PARAMS``)
    that turns it on (1.0), None for always on; ``step_impl(kernel, x, sample, params, face,
    alerts, n_a)`` advances the channel and returns the alert row count, ``to_hop_impl(kernel,
    slot)`` adds its outputs to the hop record, ``restart_impl(kernel, face)`` starts afresh."""
    record = from_dtype(state)

    def ours(kernel):
        return (isinstance(kernel, types.BaseTuple) and isinstance(kernel[0], types.Array)
                and kernel[0].dtype == record)

    @overload(enabled)
    def _enabled(kernel, params):
        if ours(kernel):
            if switch is None:
                return lambda kernel, params: True
            return lambda kernel, params: params[switch] == 1.0

    @overload(step, jit_options={"_nrt": False})
    def _step(kernel, trace, channel, x, sample, params, face, slot, alerts, n_a, k):
        if ours(kernel):
            def step_and_add(kernel, trace, channel, x, sample, params, face, slot, alerts, n_a,
                             k):
                first = n_a
                n_a = step_impl(kernel, x, sample, params, face, alerts, n_a)
                for a in range(first, n_a):
                    alerts[a].channel = channel
                to_hop_impl(kernel, slot)
                if k >= 0:
                    trace[k] = kernel[1][0]
                return n_a
            return step_and_add

    @overload(restart)
    def _restart(kernel, face):
        if ours(kernel):
            return lambda kernel, face: restart_impl(kernel, face)


@overload(enabled)
def _empty_enabled(kernel, params):
    if kernel is types.none:   # an empty channel slot of the processor: never on
        return lambda kernel, params: False


@overload(step)
def _empty_step(kernel, trace, channel, x, sample, params, face, slot, alerts, n_a, k):
    if kernel is types.none:
        return lambda kernel, trace, channel, x, sample, params, face, slot, alerts, n_a, k: n_a


@overload(restart)
def _empty_restart(kernel, face):
    if kernel is types.none:
        return lambda kernel, face: None
