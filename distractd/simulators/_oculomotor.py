"""Rendering event sequences into signals: saccades, pursuit, eyelid, head turns, slow noise.

Gaze is rendered at an internal rate of at least 500 Hz and averaged over each output frame (the
camera integrates over its frame), so a 30 ms saccade is embedded physically in 60 Hz samples.
Saccades follow the main sequence ``peak = vmax * (1 - exp(-A / c))`` with a raised-cosine position
profile (peak velocity = pi/2 times the mean), which gives durations close to ``2.2 A + 21`` ms.
"""

import math

import numpy as np
from numba import njit

__all__ = ["main_sequence_peak", "saccade_duration", "ou_noise", "smooth_drift", "render_gaze",
           "render_eyelid", "render_head", "MIN_INTERNAL_HZ"]

MIN_INTERNAL_HZ = 500.0
_SHAPE = math.pi / 2


@njit(cache=True)
def main_sequence_peak(amplitude_deg, vmax_deg_s, c_deg):
    """Peak velocity (deg/s) of a saccade of ``amplitude_deg`` on the main sequence."""
    return vmax_deg_s * (1.0 - np.exp(-amplitude_deg / c_deg))


@njit(cache=True)
def saccade_duration(amplitude_deg, peak_deg_s, c_over_vmax_s):
    """Duration (s) of a raised-cosine saccade with this amplitude and peak velocity."""
    if amplitude_deg < 1e-6:
        return _SHAPE * c_over_vmax_s
    return _SHAPE * amplitude_deg / peak_deg_s


def ou_noise(rng, n, dt_s, tau_s, sd):
    """A stationary Ornstein-Uhlenbeck (AR(1)) series of ``n`` samples with standard deviation
    ``sd`` and correlation time ``tau_s``, sampled every ``dt_s`` seconds."""
    a = math.exp(-dt_s / tau_s)
    innovations = rng.standard_normal(n) * sd * math.sqrt(1 - a * a)
    innovations[0] = rng.standard_normal() * sd
    return _first_order(innovations, 1.0, a, 0.0)


@njit(cache=True)
def _first_order(x, gain, a, state):
    """``y[n] = gain x[n] + a y[n-1]`` with ``a y[-1] = state``: the first-order recursive filter
    ``scipy.signal.lfilter([gain], [1, -a], x, zi=[state])`` computes, in its order of operations
    (the same floats), without loading scipy for the simulator."""
    y = np.empty_like(x)
    for n in range(x.shape[0]):
        state = gain * x[n] + state
        y[n] = state
        state = a * state
    return y


def smooth_drift(rng, n, dt_s, tau_s, sd):
    """A slow drift of ``n`` samples with standard deviation ``sd``: an Ornstein-Uhlenbeck series
    low-passed once more with the same time constant ``tau_s``, so it is smooth (its change over
    ``dt << tau_s`` grows like ``dt``, not ``sqrt(dt)``), as posture, light and calibration creep
    are."""
    a = math.exp(-dt_s / tau_s)
    scale = math.sqrt((1 + a * a) / (1 + a) ** 2)   # stationary SD of the twice-filtered series
    x = ou_noise(rng, n, dt_s, tau_s, 1.0)
    y = _first_order(x, 1.0 - a, a, (scale - 1.0 + a) * x[0])
    return y * sd / scale


def render_gaze(plan, n_frames, rate_hz, internal=False):
    """Gaze yaw and pitch (deg) and the saccade flag at the output frames.

    Frame ``j`` (time ``j / rate_hz``) is the mean of the ``k = ceil(500 / rate_hz)`` internal
    samples centred on it. With ``internal=True`` the internal samples are returned instead, as
    ``(t, yaw, pitch, in_saccade)``.
    """
    k = max(1, math.ceil(MIN_INTERNAL_HZ / rate_hz))
    fs = rate_hz * k
    offset = -(k - 1) / 2 / fs
    out = np.empty((n_frames * k, 3))
    _render_gaze_kernel(offset, fs, plan.start, plan.duration, plan.yaw, plan.pitch,
                        plan.drift_yaw, plan.drift_pitch, plan.saccade_start,
                        plan.saccade_duration, out)
    if internal:
        return offset + np.arange(len(out)) / fs, out[:, 0], out[:, 1], out[:, 2]
    frames = out.reshape(n_frames, k, 3)
    return frames[:, :, 0].mean(axis=1), frames[:, :, 1].mean(axis=1), frames[:, :, 2].max(axis=1)


@njit(cache=True)
def _render_gaze_kernel(offset, fs, start, duration, yaw, pitch, drift_yaw, drift_pitch,
                        saccade_start, saccade_duration, out):
    n = out.shape[0]
    end_yaw, end_pitch = yaw[0], pitch[0]
    last = 0
    for i in range(len(start)):
        if i > 0 and saccade_duration[i] > 0:
            a = max(int(math.ceil((saccade_start[i] - offset) * fs)), last)
            b = min(int(math.ceil((start[i] - offset) * fs)), n)
            for j in range(a, b):
                tau = ((offset + j / fs) - saccade_start[i]) / saccade_duration[i]
                w = 0.5 - 0.5 * math.cos(math.pi * tau)
                out[j, 0] = end_yaw + (yaw[i] - end_yaw) * w
                out[j, 1] = end_pitch + (pitch[i] - end_pitch) * w
                out[j, 2] = 1.0
            last = max(last, b)
        a = 0 if i == 0 else max(int(math.ceil((start[i] - offset) * fs)), last)
        b = n
        if i + 1 < len(start):
            b = min(int(math.ceil((start[i + 1] - saccade_duration[i + 1] - offset) * fs)), n)
        for j in range(a, b):
            dt = (offset + j / fs) - start[i]
            out[j, 0] = yaw[i] + drift_yaw[i] * dt
            out[j, 1] = pitch[i] + drift_pitch[i] * dt
            out[j, 2] = 0.0
        last = max(last, b)
        end_yaw = yaw[i] + drift_yaw[i] * duration[i]
        end_pitch = pitch[i] + drift_pitch[i] * duration[i]
        if last >= n:
            break
    for j in range(last, n):
        out[j, 0], out[j, 1], out[j, 2] = end_yaw, end_pitch, 0.0


def render_eyelid(t, blinks):
    """Eyelid closure (0 open .. 1 closed) at times ``t`` from a :class:`BlinkPlan`.

    Four phases (Kwon et al. 2013): a sine-shaped close, a closed plateau, a fast early and slow
    late reopening (``(1 - tau) ** 1.5``), so opening takes longer than closing (Sforza et al.
    2008).
    """
    closure = np.zeros(len(t))
    _render_eyelid_kernel(t, blinks.start, blinks.close_s, blinks.closed_s, blinks.open_s,
                          blinks.depth, closure)
    return closure


@njit(cache=True)
def _render_eyelid_kernel(t, start, close, closed, reopen, depth, closure):
    j0 = 0
    n = len(t)
    for b in range(len(start)):
        while j0 < n and t[j0] < start[b]:
            j0 += 1
        end = start[b] + close[b] + closed[b] + reopen[b]
        j = j0
        while j < n and t[j] < end:
            dt = t[j] - start[b]
            if dt < close[b]:
                c = depth[b] * math.sin(0.5 * math.pi * dt / close[b]) ** 2
            elif dt < close[b] + closed[b]:
                c = depth[b]
            else:
                c = depth[b] * (1.0 - (dt - close[b] - closed[b]) / reopen[b]) ** 1.5
            closure[j] = max(closure[j], c)
            j += 1


def render_head(t, onset, target, omega):
    """Head angle (deg) at times ``t`` following a piecewise-constant ``target`` that switches at
    ``onset`` (sorted), through a critically damped second-order system of natural frequency
    ``omega`` (rad/s); one column per angle in ``target``."""
    out = np.empty((len(t), target.shape[1]))
    _render_head_kernel(t, onset, target, omega, out)
    return out


@njit(cache=True)
def _render_head_kernel(t, onset, target, omega, out):
    m = target.shape[1]
    x = target[0].copy()
    v = np.zeros(m)
    k = 0
    for j in range(len(t)):
        while k + 1 < len(onset) and onset[k + 1] <= t[j]:
            k += 1
        if j > 0:
            dt = t[j] - t[j - 1]
            steps = int(math.ceil(dt * omega / 0.2))
            h = dt / steps
            for _ in range(steps):
                for c in range(m):
                    v[c] += h * (omega * omega * (target[k, c] - x[c]) - 2 * omega * v[c])
                    x[c] += h * v[c]
        out[j] = x
