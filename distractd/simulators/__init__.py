"""Synthetic drives, replay, the Pupil Core-compatible emulator and the demo.

Names are imported from their module when first used (:mod:`distractd._lazy`), so that a light
name does not load the heavy modules beside it."""

from .._lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "._calibration": ("CONDITIONS", "summarise_tracking", "tracking_statistics"),
    "._demo": ("NotifyReceiver", "demo", "free_port"),
    "._driver": ("DriverTraits", "draw_driver"),
    "._protocol": (
        "PROTOCOLS", "Section", "cognitive_load", "drive_schedule", "schedule_labels",
        "texting_schedule",
    ),
    "._pupil_emulator": ("CaptureMatcher", "PupilEmulator"),
    "._replay": ("replay", "stream_ids"),
    "._simulate": (
        "DriveTruth", "GlanceTruth", "cohort_seeds", "simulate_cohort", "simulate_drive",
        "simulate_drive_truth", "simulate_texting_study",
    ),
    "._tracker_profiles": ("TRACKERS",),
})
