"""Synthetic drives, replay and the Pupil Core-compatible emulator."""
