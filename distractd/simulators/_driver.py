"""One synthetic driver: baseline physiology, habits, tracker quality and load effects, from a seed.

Every trait is drawn once per driver from a between-driver distribution whose centre and spread come
from the literature collected in ``SIMULATOR_EVIDENCE.md`` (the table in ``docs/simulator.md`` gives
each source and grade). Load effects are multipliers applied at full cognitive load; a driver's
*susceptibility* scales all of them together, so some drivers show almost no effect.
"""

import math
from dataclasses import asdict, dataclass

import numpy as np

__all__ = ["DriverTraits", "draw_driver"]


@dataclass(frozen=True)
class DriverTraits:
    """The per-driver parameters of the simulator (angles in degrees, times in seconds).

    Attributes ending in ``_deg``, ``_s``, ``_mm``, ``_m``, ``_per_min`` carry those units. Fields
    named ``load_*`` are the multipliers (``load_pupil_mm``: the additive dilation) that full
    cognitive load applies to the matching baseline behaviour.
    """

    age_years: float
    female: bool
    road_sd_yaw_deg: float
    road_sd_pitch_deg: float
    road_pitch_deg: float
    fixation_median_s: float
    glance_rate_per_min: float
    glance_median_s: float
    okn_gain_per_s: float
    vmax_deg_s: float
    c_deg: float
    eye_free_deg: float
    head_gain: float
    head_shift_m_per_rad: float
    head_sway_deg: float
    head_sway_m: float
    head_position_m: tuple
    posture_sd_m: float
    posture_axes: tuple
    posture_rot_deg: tuple
    blink_rate_per_min: float
    blink_close_s: float
    blink_open_s: float
    blink_partial_fraction: float
    pupil_mm: float
    anisocoria_mm: float
    noise_deg: float
    offset_yaw_deg: float
    offset_pitch_deg: float
    loss_per_min: float
    loss_median_s: float
    drop_fraction: float
    duplicate_fraction: float
    jitter_s: float
    calibration_drift_deg: float
    pupil_light_sd_mm: float
    susceptibility: float
    load_gaze_sd_yaw: float
    load_gaze_sd_pitch: float
    load_glance_rate: float
    load_fixation: float
    load_velocity: float
    load_blink_rate: float
    load_pupil_mm: float
    load_head_sd: float
    load_lean_m: tuple
    load_head_rot_deg: tuple
    load_gaze_pitch_deg: float
    display_glance_median_s: float
    display_glance_sigma: float
    phone_dwell_factor: float

    def summary(self):
        """The traits as a JSON-ready dict (floats rounded to 4 significant digits)."""
        return {name: (float(f"{value:.4g}") if isinstance(value, float) else
                       [float(f"{v:.4g}") for v in value] if isinstance(value, tuple) else value)
                for name, value in asdict(self).items()}


# Median load multipliers of the sound-counting task (SIMULATOR_EVIDENCE "per-driver effect
# multipliers"), applied as median ** susceptibility.
_LOAD_MEDIANS = {
    "load_gaze_sd_yaw": 0.95, "load_gaze_sd_pitch": 0.85, "load_glance_rate": 0.55,
    "load_fixation": 1.05, "load_velocity": 0.97, "load_blink_rate": 1.25, "load_head_sd": 0.85,
}


def draw_driver(seed):
    """Draw one driver's traits.

    Parameters
    ----------
    seed : int, numpy.random.SeedSequence or numpy.random.Generator
        The driver's seed; equal seeds give equal drivers.

    Returns
    -------
    DriverTraits
    """
    rng = np.random.default_rng(seed)
    age = float(rng.uniform(21.0, 65.0))
    female = bool(rng.random() < 11 / 34)

    def lognormal(median, sigma):
        return float(median * math.exp(sigma * rng.standard_normal()))

    def unit(vector):
        return vector / np.linalg.norm(vector)

    # Susceptibility ~ Exponential(1): mean 1, about 26 % of drivers below 0.3 (nearly no effect).
    susceptibility = float(rng.exponential(1.0))
    effects = {name: float(median ** susceptibility * math.exp(0.05 * rng.standard_normal()))
               for name, median in _LOAD_MEDIANS.items()}
    # Posture drifts slowly in a plane of two modes (slump, sideways lean); under load the head
    # moves by about 1 cm across that plane (towards the windscreen). The tracker's world frame is
    # tilted with the camera rig, so the lean is spread over x, y, z. No source: chosen values.
    lean_axis = unit(np.ones(3) + 0.3 * rng.standard_normal(3))
    first = unit(np.cross(lean_axis, [1.0, 0.0, 0.0]))
    second = np.cross(lean_axis, first)
    lean = lean_axis * lognormal(0.012, 0.3)
    # Blink rate: log-normal between drivers, women higher (Sforza 2008), median ~17/min driving.
    blink_median = 24.0 if female else 19.0
    return DriverTraits(
        age_years=age,
        female=female,
        road_sd_yaw_deg=lognormal(3.0, 0.2),
        road_sd_pitch_deg=lognormal(1.6, 0.2),
        road_pitch_deg=float(rng.uniform(-3.0, -1.0)),
        fixation_median_s=lognormal(0.33, 0.12),
        glance_rate_per_min=lognormal(7.0, 0.25),
        glance_median_s=lognormal(0.55, 0.12),
        okn_gain_per_s=float(rng.uniform(0.15, 0.35)),
        vmax_deg_s=lognormal(510.0, 0.12),
        c_deg=float(rng.uniform(6.5, 9.0)),
        eye_free_deg=float(rng.uniform(15.0, 22.0)),
        head_gain=float(rng.uniform(0.5, 0.9)),
        head_shift_m_per_rad=float(rng.uniform(0.02, 0.09)),
        head_sway_deg=lognormal(1.5, 0.3),
        head_sway_m=lognormal(0.004, 0.3),
        head_position_m=(float(rng.normal(0.0, 0.02)), float(rng.normal(0.0, 0.02)),
                         float(rng.normal(0.65, 0.04))),
        posture_sd_m=lognormal(0.07, 0.3),
        posture_axes=tuple(float(v) for v in np.r_[first, second]),
        blink_rate_per_min=lognormal(blink_median, 0.4),
        blink_close_s=lognormal(0.09, 0.12) * (1 + 0.006 * max(age - 30.0, 0.0)),
        blink_open_s=lognormal(0.22, 0.15) * (1 + 0.01 * max(age - 30.0, 0.0)),
        blink_partial_fraction=float(rng.uniform(0.3, 0.55)),
        pupil_mm=float(np.clip(4.03 - 0.025 * (age - 40.0) + 0.8 * rng.standard_normal(),
                               2.5, 7.0)),
        anisocoria_mm=float(rng.normal(0.0, 0.2)),
        noise_deg=lognormal(0.32, 0.3),
        offset_yaw_deg=float(rng.normal(0.0, 0.9)),
        offset_pitch_deg=float(rng.normal(0.0, 0.9)),
        loss_per_min=lognormal(0.8, 0.9),
        loss_median_s=lognormal(0.6, 0.3),
        drop_fraction=float(10 ** rng.uniform(-3.0, -2.0)),
        duplicate_fraction=float(10 ** rng.uniform(-3.5, -2.5)),
        jitter_s=float(rng.uniform(0.0005, 0.002)),
        susceptibility=susceptibility,
        load_pupil_mm=float(0.15 * susceptibility * math.exp(0.2 * rng.standard_normal())),
        load_lean_m=tuple(float(v) for v in lean),
        # Slow structure and the load signature across fields (see docs/simulator.md): the head
        # rotation (yaw, pitch, roll; deg per unit mode) that comes with each posture mode,
        # tracker calibration drift, ambient-light pupil drift; under load a per-driver head
        # rotation (a "listening" head set: random direction, about 1 deg) and gaze further ahead
        # (Reimer 2009, direction). No source for the sizes.
        posture_rot_deg=tuple(float(v) for v in (rng.standard_normal((2, 3)) *
                                                  [3.0, 2.25, 1.5] * lognormal(1.0, 0.3)).ravel()),
        calibration_drift_deg=lognormal(0.6, 0.3),
        pupil_light_sd_mm=lognormal(0.2, 0.3),
        load_head_rot_deg=tuple(float(v) for v in unit(rng.standard_normal(3))
                                * lognormal(0.8, 0.3)),
        load_gaze_pitch_deg=lognormal(0.3, 0.3),
        # Visual-manual (texting-like) task: dwell on the phone per glance is log-normal with this
        # median and log SD (texting glances: mean 1.1-1.6 s, >= 10 % over 2 s; docs/simulator.md).
        # Drawn last so that the traits above do not depend on them.
        display_glance_median_s=lognormal(1.1, 0.15),
        display_glance_sigma=float(rng.uniform(0.4, 0.55)),
        # Texting on a hand-held phone (texting-blocks): how much longer (or shorter) than usual
        # this driver looks down; the real drives' on-task valid gaze ranges 0.01-0.78 between
        # drivers (docs/simulator.md). Drawn last.
        phone_dwell_factor=lognormal(1.0, 0.5),
        **effects,
    )
