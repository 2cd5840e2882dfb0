"""The vehicle channel: lane keeping, steering, speed and pedals per sample, summed per hop.

Per accepted sample with any of the car's five signals (lane offset, steering, speed,
accelerator, brake), :func:`~distractd.pipeline._vehicle_measures.vehicle_step` advances the
stream's vehicle state and its outputs are added to the sample's hop; a window's
:data:`~distractd.pipeline.VEHICLE_FEATURES` are computed from its hops' sums
(``_windows._emit``). A sample without them costs five NaN checks. The measures and their sources:
:mod:`distractd.pipeline._vehicle_measures`; docs/pipeline.md "Vehicle signals". The channel
raises no alert: its features reach the models; what the daemon makes of steering and pedal input
is the daemon's.
"""

from dataclasses import dataclass

import numpy as np
from numba import njit

from .._vehicle_measures import (
    _ACCEL, _BRAKE, _LANE, _SPEED, _STEER, OUTPUT, STATE, VehicleSettings, add_to_hop, new_state,
    vehicle_step,
)
from ._protocol import Channel, ChannelTrace, implement, one_record

__all__ = ["VehicleChannel", "VehicleTrace"]

_NONE = np.full(1, np.nan, OUTPUT)   # a sample without vehicle signals: no output
_NONE["reversal_small"] = _NONE["reversal_large"] = 0.0
_NONE["entropy_bin"] = -1.0


@dataclass
class VehicleTrace(ChannelTrace):
    """Per-sample vehicle channel of a recording (``detect_channel(VehicleChannel, ...)``): ``t``,
    and

    Attributes
    ----------
    outputs : ndarray of shape (n_samples,), dtype ``_vehicle_measures.OUTPUT``
        Each sample's vehicle outputs: the signals' values, the steps' absolute changes and
        times, the reversals it completes, its steering-entropy bin and its time to line
        crossing (NaN for a sample without vehicle signals or a rejected one).
    alerts : list
        Empty: the vehicle channel raises no alert.
    """

    outputs: np.ndarray
    alerts: list


class VehicleChannel(Channel, name="vehicle", output=OUTPUT, alert=None, kinds=(),
                     max_alert_rows=0):
    """State of one stream's vehicle channel; the processor feeds it (see the module docstring
    and :mod:`~distractd.pipeline.channels`). Per-stream memory: about 0.4 KB, and 352 bytes
    per hop of the window ring for its sums (its ``v_*`` fields: 8 KB at the defaults).

    Parameters
    ----------
    config : PipelineConfig
        The switch (``vehicle``); the measures' settings are :class:`VehicleSettings`' defaults.

    Attributes
    ----------
    has_vehicle : bool
        The stream has had a vehicle signal on this clock.
    """

    def __init__(self, config):
        super().__init__(config)
        self._state = one_record(STATE, new_state)
        self.kernel = (self._state, np.zeros(1, OUTPUT), VehicleSettings().params())
        """The compiled pass's arrays: the state, the latest sample's outputs, the settings."""

    @staticmethod
    def trace(t, rejected, outputs, alerts):
        """The :class:`VehicleTrace` of a recording's per-sample outputs (``rejected``: samples
        validation dropped: NaN)."""
        outputs[rejected] = _NONE[0]
        return VehicleTrace(t, outputs, alerts)

    @property
    def has_vehicle(self):
        return bool(np.isfinite(self._state["ref"][0]).any())


@njit(cache=True, inline="always")
def _step(kernel, x, sample, params, face, alerts, n_a):
    """The protocol's step: the vehicle measures of a sample with a vehicle signal."""
    states, outs, settings = kernel
    state = states[0]
    if (x[_LANE] != x[_LANE] and x[_STEER] != x[_STEER] and x[_SPEED] != x[_SPEED]
            and x[_ACCEL] != x[_ACCEL] and x[_BRAKE] != x[_BRAKE]):
        if state.quiet == 0.0:   # the output says "none" until a signal comes
            outs[0] = _NONE[0]
            state.quiet = 1.0
        return n_a
    state.quiet = 0.0
    vehicle_step(state, settings[0], sample.t, x, outs[0])
    return n_a


@njit(cache=True, inline="always")
def _to_hop(kernel, slot):
    """Add the latest sample's outputs to its hop (nothing for a sample without signals)."""
    states, outs, _ = kernel
    if states[0].quiet == 0.0:
        add_to_hop(states[0], outs[0], slot)


@njit(cache=True)
def _restart(kernel, face):
    """A new clock: the signals' histories and references start afresh (the windows do too)."""
    new_state(kernel[0])


implement(STATE, "vehicle", _step, _to_hop, _restart)
