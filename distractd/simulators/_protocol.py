"""The drive schedule of the source protocol: normal driving, sound-counting tasks, recovery gaps.

One protocol cycle is a normal-driving section, a secondary-task section and a 15 s recovery gap
(Liu's thesis §5.3.3; ALGORITHMS §1.10). Task sections last N(52.9 s, 7.8 s) clipped to 30-80 s;
normal sections 73 + 206 * Beta(1, 5) s, which stays within the reported 73-279 s and has a mean of
107 s so that task/normal time is about the reported 0.45 imbalance. Labels are 1 inside task
sections and 0 elsewhere; recovery gaps are labelled 0 (the source labels task vs normal only) while
the simulated behaviour carries the load over into them.

The texting protocol of Taamneh et al. 2017 (doi:10.1038/sdata.2017.110; drives 5-7) runs in long
blocks instead: about 80 s off, 160 s on, 240 s off, 160 s on, 120 s off (:func:`texting_schedule`;
the block lengths are jittered per drive as measured on the real texting drives, docs/simulator.md).
"""

from dataclasses import dataclass

import numpy as np

__all__ = ["PROTOCOLS", "Section", "drive_schedule", "texting_schedule", "schedule_labels",
           "cognitive_load"]

PROTOCOLS = ("cognitive", "visual-manual", "none", "texting-blocks", "normal-blocks")
"""The task protocols: the source's sound counting, a texting-like visual-manual task, no task;
Taamneh et al.'s texting drive (long blocks of texting on a hand-held phone) and its matching
drive without a task."""

N_TASKS = 9
RECOVERY_S = 15.0
TASK_MEAN_S, TASK_SD_S, TASK_RANGE_S = 52.9, 7.8, (30.0, 80.0)
NORMAL_MIN_S, NORMAL_SPAN_S = 73.0, 206.0
SOUND_PERIOD_S = 2.0
# Taamneh's texting drives, early subjects' timing (T001-T051; median block lengths, s, and
# their spread between drives): off, on, off, on, off.
TEXTING_BLOCKS = (("normal", 78.0, 6.0), ("task", 158.0, 5.0), ("normal", 255.0, 18.0),
                  ("task", 158.0, 5.0), ("normal", 140.0, 15.0))


@dataclass(frozen=True)
class Section:
    """One section of a drive, ``[start_s, end_s)`` in seconds; ``kind`` is "normal", "task" or
    "recovery"."""

    kind: str
    start_s: float
    end_s: float

    @property
    def duration_s(self):
        return self.end_s - self.start_s


def drive_schedule(rng, duration_s=None):
    """Draw the sections of one drive.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of the section durations.
    duration_s : float or None, default=None
        None: exactly nine protocol cycles (about 24-29 min). Otherwise the cycles are repeated as
        far as needed and the last section is cut at ``duration_s``.

    Returns
    -------
    tuple of Section
        Contiguous sections from 0 s.
    """
    sections, t = [], 0.0
    while (len(sections) < 3 * N_TASKS) if duration_s is None else (t < duration_s):
        normal = NORMAL_MIN_S + NORMAL_SPAN_S * rng.beta(1.0, 5.0)
        task = float(np.clip(rng.normal(TASK_MEAN_S, TASK_SD_S), *TASK_RANGE_S))
        for kind, length in (("normal", normal), ("task", task), ("recovery", RECOVERY_S)):
            sections.append(Section(kind, t, t + float(length)))
            t += float(length)
    if duration_s is None:
        return tuple(sections)
    kept = [s for s in sections if s.start_s < duration_s]
    last = kept[-1]
    kept[-1] = Section(last.kind, last.start_s, min(last.end_s, float(duration_s)))
    return tuple(kept)


def texting_schedule(rng, duration_s=None):
    """Draw the blocks of one Taamneh-like texting drive.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of the block lengths: each is normal around the real drives' median
        (:data:`TEXTING_BLOCKS`), clipped to +-3 SD.
    duration_s : float or None, default=None
        None: the five blocks (about 13 min). Otherwise the drive is cut at ``duration_s``, or its
        last task-free block runs on to ``duration_s``.

    Returns
    -------
    tuple of Section
        Contiguous sections from 0 s: normal, task, normal, task, normal.
    """
    sections, t = [], 0.0
    for kind, median_s, sd_s in TEXTING_BLOCKS:
        length = median_s + sd_s * float(np.clip(rng.standard_normal(), -3.0, 3.0))
        sections.append(Section(kind, t, t + length))
        t += length
    if duration_s is None:
        return tuple(sections)
    kept = [s for s in sections if s.start_s < duration_s]
    last = kept[-1]
    end_s = float(duration_s) if last is sections[-1] else min(last.end_s, float(duration_s))
    kept[-1] = Section(last.kind, last.start_s, end_s)
    return tuple(kept)


def schedule_labels(t, sections):
    """Per-sample labels (int8): 1 inside task sections, 0 elsewhere within the drive."""
    t = np.asarray(t, dtype=np.float64)
    labels = np.zeros(len(t), dtype=np.int8)
    for section in sections:
        if section.kind == "task":
            labels[(t >= section.start_s) & (t < section.end_s)] = 1
    return labels


def cognitive_load(t, sections, rise_s=1.5, decay_s=4.0, sound_modulation=0.3, gains=None):
    """The cognitive load level (0..1 times the section's gain) at times ``t``.

    Load rises exponentially with time constant ``rise_s`` after a task onset (full within 2-5 s),
    dips by up to ``sound_modulation`` between sounds (period 2 s, Halin et al. 2025: gaze
    concentrates while processing, re-scans in between) and decays with ``decay_s`` after the task
    ends (carry-over into the recovery gap, Reyes & Lee 2008). ``gains`` (one per task section, in
    order; None = all 1) scales each section's level: the driver's engagement varies from task to
    task.
    """
    t = np.asarray(t, dtype=np.float64)
    load = np.zeros(len(t))
    tasks = [section for section in sections if section.kind == "task"]
    gains = np.ones(len(tasks)) if gains is None else np.asarray(gains, dtype=np.float64)
    for section, gain in zip(tasks, gains):
        inside = (t >= section.start_s) & (t < section.end_s)
        since = t[inside] - section.start_s
        phase = np.cos(np.pi * since / SOUND_PERIOD_S) ** 2
        level = gain * (1 - np.exp(-since / rise_s)) * (1 - sound_modulation * (1 - phase))
        load[inside] = np.maximum(load[inside], level)
        reached = gain * (1 - np.exp(-section.duration_s / rise_s))
        after = (t >= section.end_s) & (t < section.end_s + 6 * decay_s)
        load[after] = np.maximum(load[after],
                                 reached * np.exp(-(t[after] - section.end_s) / decay_s))
    return load
