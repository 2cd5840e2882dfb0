"""Physiological ranges of the simulated driver: saccades, fixations, blinks, gaze, head, pupil."""

import numpy as np
import pytest
from scipy.optimize import curve_fit

from distractd.simulators import simulate_drive_truth
from distractd.simulators._behaviour import TARGETS
from distractd.simulators._body_scripts import drowsy_plan
from distractd.simulators._oculomotor import render_eyelid, render_gaze

CLEAN = dict(noise=False, track_loss=False, drops=False, duplicates=False, jitter=False)


@pytest.fixture(scope="module")
def drive():
    return simulate_drive_truth(21, protocol="none", **CLEAN)


def _normal(t, sections):
    mask = np.zeros(len(t), bool)
    for s in sections:
        mask |= (s.kind == "normal") & (t >= s.start_s) & (t < s.end_s)
    return mask


def test_saccades_follow_the_main_sequence_on_the_internal_signal(drive):
    _, truth = drive
    plan, traits = truth.gaze, truth.traits
    n = 300 * 60
    t, yaw, pitch, _ = render_gaze(plan, n, 60.0, internal=True)
    fs = 1 / (t[1] - t[0])
    assert fs >= 500
    speed = np.hypot(np.gradient(yaw), np.gradient(pitch)) * fs
    amplitude, peak, duration = [], [], []
    for i in np.flatnonzero((plan.saccade_amplitude >= 1) & (plan.start < t[-1] - 1)):
        a = int(np.ceil((plan.saccade_start[i] - t[0]) * fs))
        b = int(np.ceil((plan.start[i] - t[0]) * fs))
        amplitude.append(plan.saccade_amplitude[i])
        peak.append(speed[a:b].max())
        duration.append(plan.saccade_duration[i] * 1e3)
    amplitude, peak, duration = map(np.array, (amplitude, peak, duration))
    (vmax, c), _ = curve_fit(lambda a, vm, c: vm * (1 - np.exp(-a / c)), amplitude, peak,
                             p0=(500, 7))
    assert vmax == pytest.approx(traits.vmax_deg_s, rel=0.1)
    assert c == pytest.approx(traits.c_deg, rel=0.15)
    assert 420 <= vmax <= 700 and 6 <= c <= 10
    slope, intercept = np.polyfit(amplitude[amplitude <= 30], duration[amplitude <= 30], 1)
    assert 1.9 <= slope <= 2.8 and 12 <= intercept <= 26  # literature: 2.2-2.4 ms/deg, 14-21 ms


def test_fixation_and_glance_durations(drive):
    _, truth = drive
    plan, traits = truth.gaze, truth.traits
    normal = _normal(plan.start, truth.sections)
    road = (plan.target == 0) & normal
    assert np.median(plan.duration[road]) == pytest.approx(traits.fixation_median_s, rel=0.15)
    assert 0.1 <= plan.duration[road].min() and plan.duration[road].max() <= 3.0
    saccades_per_s = len(plan) / truth.t[-1]
    assert 2.0 <= saccades_per_s <= 3.5
    away = (plan.target != 0) & normal
    glance = plan.duration[away] + plan.saccade_duration[away]
    assert 0.5 <= glance.mean() <= 1.1  # Brackstone & Waterson 2004: ~0.65 s (cohort median)
    minutes = _normal(truth.t, truth.sections).sum() / 60 / 60
    mirrors = np.isin(plan.target, (1, 2, 3)) & normal
    mirror_share = 0.75   # interior 0.40 + right 0.25 + left 0.10 of the glances
    expected = mirror_share * traits.glance_rate_per_min
    assert 0.4 * expected <= mirrors.sum() / minutes <= 1.3 * expected


def test_blink_rate_duration_and_variability(drive):
    _, truth = drive
    closed = truth.closure >= 0.5
    onsets = np.flatnonzero(np.diff(closed.astype(int)) == 1)
    minutes = truth.t[-1] / 60
    rate = len(onsets) / minutes
    assert 0.75 * truth.traits.blink_rate_per_min <= rate <= 1.1 * truth.traits.blink_rate_per_min
    assert 3 <= rate <= 45
    covered = truth.closure > 0.6
    starts = np.flatnonzero(np.diff(covered.astype(int)) == 1)
    stops = np.flatnonzero(np.diff(covered.astype(int)) == -1)
    spans = (stops[: len(starts)] - starts[: len(stops)]) / 60
    assert 0.12 <= np.median(spans) <= 0.25
    assert (spans > 0.3).mean() < 0.05
    ibi = np.diff(truth.t[onsets])
    assert 0.6 <= ibi.std() / ibi.mean() <= 1.1
    perclos = (truth.closure >= 0.75).mean()
    assert 0.01 <= perclos <= 0.08


def test_gaze_distribution_head_turns_and_pupil(drive):
    recording, truth = drive
    near = np.hypot(truth.gaze_yaw, truth.gaze_pitch - truth.traits.road_pitch_deg) < 10
    assert near.mean() >= 0.8
    plan = truth.gaze
    fixation = np.maximum(np.searchsorted(plan.start, truth.t, side="right") - 1, 0)
    left, interior = TARGETS.index("left_mirror"), TARGETS.index("interior_mirror")
    peak_head = np.zeros(len(plan))
    np.maximum.at(peak_head, fixation, np.abs(truth.head[:, 0]))
    assert (peak_head[plan.target == left] > 20).mean() > 0.8
    assert (peak_head[plan.target == interior] > 20).mean() < 0.3
    pupil = recording.column("pupil_r")
    assert 2.5 <= pupil.mean() <= 7.0 and pupil.std() < 0.5
    eye_yaw = truth.gaze_yaw - truth.head[:, 0]
    assert np.abs(eye_yaw).max() < 55  # human oculomotor range (Guitton & Volle 1987)


def test_cognitive_load_concentrates_gaze_for_a_susceptible_driver():
    susceptible = next(s for s in range(40)
                       if simulate_drive_truth(s, duration_s=1.0)[1].traits.susceptibility > 1.5)
    _, truth = simulate_drive_truth(susceptible, **CLEAN)
    plan = truth.gaze
    in_task = np.zeros(len(plan), bool)
    for s in truth.sections:
        if s.kind == "task":
            in_task |= (plan.start >= s.start_s + 5) & (plan.start < s.end_s)
    normal = _normal(plan.start, truth.sections)
    glances = plan.target != 0
    task_s = sum(s.duration_s - 5 for s in truth.sections if s.kind == "task")
    normal_s = sum(s.duration_s for s in truth.sections if s.kind == "normal")
    assert (glances & in_task).sum() / task_s < 0.8 * (glances & normal).sum() / normal_s
    road = plan.target == 0
    assert np.std(plan.pitch[road & in_task]) < np.std(plan.pitch[road & normal])


def _closed_runs(closed, rate_hz):
    """Durations (s) of the runs of True in ``closed``."""
    edges = np.diff(np.r_[0, closed.astype(np.int8), 0])
    return (np.flatnonzero(edges == -1) - np.flatnonzero(edges == 1)) / rate_hz


@pytest.mark.parametrize("seed", [4, 21])
def test_drowsiness_build_up_matches_the_perclos_and_blink_evidence(seed):
    # SIMULATOR_EVIDENCE §3: PERCLOS (P80) about 6 % alert, 10.5 % at the first 1-s microsleep;
    # blink duration and reopening time lengthen with drowsiness; slow closures, head nods
    length, start = 1800.0, 30.0
    _, truth = simulate_drive_truth(seed, start + length + 30.0, 60.0, protocol="none", **CLEAN)
    plan, nods = drowsy_plan(np.random.default_rng(seed), truth.blinks, start, length)
    closure = np.maximum(truth.closure, render_eyelid(truth.t, plan))

    def span(a, b):
        return (truth.t >= a) & (truth.t < b)

    first, last = span(start, start + 180.0), span(start + length - 180.0, start + length)
    alert_perclos = (closure[first] >= 0.8).mean()
    drowsy_perclos = (closure[last] >= 0.8).mean()
    assert 0.01 <= alert_perclos <= 0.08
    assert 0.09 <= drowsy_perclos <= 0.13
    alert_blinks = _closed_runs(closure[first] >= 0.5, 60.0)
    drowsy_blinks = _closed_runs(closure[last] >= 0.5, 60.0)
    assert drowsy_blinks.mean() >= 1.4 * alert_blinks.mean()
    assert (drowsy_blinks > 0.15).mean() > (alert_blinks > 0.15).mean()   # Anund's long blinks
    assert _closed_runs(closure >= 0.5, 60.0).max() < 1.0   # no microsleep in the build-up
    reopen = plan.open_s[(plan.start > start + length - 180.0) & (plan.start < start + length)]
    assert np.median(reopen) > 1.4 * np.median(truth.blinks.open_s)
    assert len(nods) >= 2 and (nods[:, 0] > start + length / 2).all()
    assert ((10.0 <= nods[:, 1]) & (nods[:, 1] <= 20.0)).all()
