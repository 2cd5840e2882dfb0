"""Synthetic drives, replay, the Pupil Core-compatible emulator and the demo."""

from ._calibration import CONDITIONS, summarise_tracking, tracking_statistics
from ._demo import NotifyReceiver, demo, free_port
from ._driver import DriverTraits, draw_driver
from ._protocol import (
    Section, cognitive_load, drive_schedule, schedule_labels, texting_schedule,
)
from ._pupil_emulator import CaptureMatcher, PupilEmulator
from ._replay import replay, stream_ids
from ._simulate import (
    PROTOCOLS, DriveTruth, GlanceTruth, cohort_seeds, simulate_cohort, simulate_drive,
    simulate_drive_truth, simulate_texting_study,
)
from ._tracker import TRACKERS

__all__ = [
    "simulate_drive", "simulate_drive_truth", "DriveTruth", "GlanceTruth", "simulate_cohort",
    "cohort_seeds", "PROTOCOLS", "simulate_texting_study", "TRACKERS",
    "tracking_statistics", "summarise_tracking", "CONDITIONS",
    "DriverTraits", "draw_driver", "Section", "drive_schedule", "texting_schedule",
    "schedule_labels", "cognitive_load",
    "replay", "stream_ids", "PupilEmulator", "CaptureMatcher", "demo", "NotifyReceiver",
    "free_port",
]
