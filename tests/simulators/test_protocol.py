"""The drive schedule: section statistics, labels and the cognitive-load profile."""

import numpy as np
import pytest

from distractd.simulators import cognitive_load, drive_schedule, schedule_labels


def _schedules(n, duration_s=None):
    return [drive_schedule(np.random.default_rng(seed), duration_s) for seed in range(n)]


def test_protocol_schedule_statistics():
    schedules = _schedules(200)
    tasks = np.array([s.duration_s for sch in schedules for s in sch if s.kind == "task"])
    normals = np.array([s.duration_s for sch in schedules for s in sch if s.kind == "normal"])
    gaps = np.array([s.duration_s for sch in schedules for s in sch if s.kind == "recovery"])
    assert all(sum(s.kind == "task" for s in sch) == 9 for sch in schedules)
    assert tasks.mean() == pytest.approx(52.9, abs=1.0)
    assert tasks.std() == pytest.approx(7.8, abs=0.8)
    assert normals.min() >= 73.0 and normals.max() <= 279.0
    np.testing.assert_allclose(gaps, 15.0)
    minutes = np.array([sch[-1].end_s for sch in schedules]) / 60
    assert minutes.min() > 20 and minutes.max() < 40
    imbalance = tasks.sum() / (60 * minutes.sum() - tasks.sum())
    assert imbalance == pytest.approx(0.45, abs=0.05)


def test_sections_are_contiguous_in_protocol_order():
    for schedule in _schedules(5):
        assert schedule[0].start_s == 0.0
        assert all(a.end_s == b.start_s for a, b in zip(schedule[:-1], schedule[1:]))
        assert [s.kind for s in schedule[:3]] == ["normal", "task", "recovery"]


@pytest.mark.parametrize("duration_s", [30.0, 500.0, 7200.0])
def test_duration_truncates_or_extends(duration_s):
    schedule = _schedules(1, duration_s)[0]
    assert schedule[-1].end_s == duration_s
    assert sum(s.kind == "task" for s in schedule) == pytest.approx(duration_s / 175, abs=3)


def test_labels_mark_task_sections_only():
    schedule = _schedules(1)[0]
    t = np.arange(0, schedule[-1].end_s, 0.5)
    labels = schedule_labels(t, schedule)
    for section in schedule:
        inside = labels[(t >= section.start_s) & (t < section.end_s)]
        assert (inside == (section.kind == "task")).all()


def test_cognitive_load_ramps_modulates_and_carries_over():
    schedule = _schedules(1)[0]
    task = next(s for s in schedule if s.kind == "task")
    t = np.array([task.start_s - 1, task.start_s + 0.5, task.start_s + 10.0, task.start_s + 11.0,
                  task.end_s + 4.0, task.end_s + 14.9])
    load = cognitive_load(t, schedule)
    assert load[0] == 0.0
    assert 0.2 < load[1] < 0.4                      # rising with a 1.5 s time constant
    assert load[2] == pytest.approx(1.0, abs=1e-2)  # on a sound (2 s period)
    assert load[3] == pytest.approx(0.7, abs=1e-2)  # between sounds
    assert load[4] == pytest.approx(np.exp(-1.0), abs=1e-2)  # 4 s decay into the recovery gap
    assert 0 < load[5] < load[4]


def test_cognitive_load_scales_each_task_section_by_its_gain():
    schedule = _schedules(1)[0]
    tasks = [s for s in schedule if s.kind == "task"]
    t = np.array([s.start_s + 10.0 for s in tasks])   # on a sound, fully risen
    gains = np.linspace(0.5, 1.5, len(tasks))
    np.testing.assert_allclose(cognitive_load(t, schedule, gains=gains), gains, atol=1e-2)
