"""Synthetic drives, replay, the Pupil Core-compatible emulator and the demo."""

from ._demo import NotifyReceiver, demo, free_port
from ._driver import DriverTraits, draw_driver
from ._protocol import Section, cognitive_load, drive_schedule, schedule_labels
from ._pupil_emulator import CaptureMatcher, PupilEmulator
from ._replay import replay, stream_ids
from ._simulate import (
    PROTOCOLS, DriveTruth, GlanceTruth, cohort_seeds, simulate_cohort, simulate_drive,
    simulate_drive_truth,
)

__all__ = [
    "simulate_drive", "simulate_drive_truth", "DriveTruth", "GlanceTruth", "simulate_cohort",
    "cohort_seeds", "PROTOCOLS",
    "DriverTraits", "draw_driver", "Section", "drive_schedule", "schedule_labels", "cognitive_load",
    "replay", "stream_ids", "PupilEmulator", "CaptureMatcher", "demo", "NotifyReceiver",
    "free_port",
]
