"""The protocol of a per-sample channel: what the processor's compiled pass calls on every channel.

A channel's kernel is a plain tuple of arrays whose first two are its one-record state and output
arrays (``(state, out, ...)``; the rest are its own). The processor holds one kernel per channel
(:data:`~distractd.pipeline.channels.CHANNELS` order) and calls, per accepted sample and in that
order, the four generic functions below; numba picks each channel's implementation by the record
type of its state, so the processor never names a channel. A channel module registers its
implementations with :func:`implement` (docs/pipeline.md "Channels" lists what a channel provides).
"""

from numba import from_dtype, types
from numba.extending import overload

__all__ = ["implement", "enabled", "step", "to_hop", "restart"]


def enabled(kernel, params):
    """Whether the channel runs for these parameters (its ``PipelineConfig`` switch)."""


def step(kernel, x, sample, params, face, alerts, n_a):
    """Advance the channel by one accepted sample ``x`` (``sample``: its ``_face.SAMPLE`` record;
    ``face``: the shared ``_face.FACE`` record); write its outputs to ``kernel[1][0]`` and any alert
    rows (``_alerts.ALERT_ROW``) to ``alerts`` from row ``n_a``; return the new alert row count."""


def to_hop(kernel, slot):
    """Add the latest outputs to ``slot``, the sample's hop of the window ring (a no-op for a
    channel that adds nothing to windows)."""


def restart(kernel, face):
    """A new clock: start afresh (what the channel publishes in ``face`` included)."""


def implement(state, enabled_impl, step_impl, to_hop_impl, restart_impl):
    """Register a channel's compiled implementations of the protocol for kernels whose state is a
    record array of dtype ``state`` (each implementation takes the generic function's arguments)."""
    record = from_dtype(state)

    def ours(kernel):
        return (isinstance(kernel, types.BaseTuple) and isinstance(kernel[0], types.Array)
                and kernel[0].dtype == record)

    @overload(enabled)
    def _enabled(kernel, params):
        if ours(kernel):
            return lambda kernel, params: enabled_impl(kernel, params)

    @overload(step)
    def _step(kernel, x, sample, params, face, alerts, n_a):
        if ours(kernel):
            return lambda kernel, x, sample, params, face, alerts, n_a: step_impl(
                kernel, x, sample, params, face, alerts, n_a)

    @overload(to_hop)
    def _to_hop(kernel, slot):
        if ours(kernel):
            return lambda kernel, slot: to_hop_impl(kernel, slot)

    @overload(restart)
    def _restart(kernel, face):
        if ours(kernel):
            return lambda kernel, face: restart_impl(kernel, face)
