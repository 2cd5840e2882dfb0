"""``service.coalesce_s``: the loop's rest after a wake-up gathers many messages into one drain,
and what the daemon publishes does not change (the daemon as a real subprocess, real sockets)."""

import subprocess
import sys

import pytest

from distractd import ConfigError
from distractd.daemon import default_model_path, load_config
from distractd.models import load_model
from distractd.pipeline import write_recording
from distractd.simulators import simulate_drive

from ._published import states_of
from .test_service import assert_same_states, expected_states


def test_the_longest_rest_publishes_what_batch_decides(start_daemon, tmp_path):
    """Map form at 60x real time (3,600 messages/s) with the longest rest, 0.1 s: hundreds of
    messages per drain, every window's state as the batch prediction decides it."""
    drive = simulate_drive(7, duration_s=120.0)
    path = tmp_path / "drive.npz"
    write_recording(drive, path)
    windows, scores, states = expected_states(drive, load_model(default_model_path()))
    assert len(set(states)) >= 2
    daemon = start_daemon(["service.coalesce_s=0.1", "sessions.idle_timeout_s=3"])
    result = subprocess.run(
        [sys.executable, "-m", "distractd.cli", "replay", str(path), "--endpoint", daemon.input,
         "--speed", "60", "--stream-id", "car", "--form", "map"],
        capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    messages = daemon.collect(lambda m: len(states_of(m, "car")) >= len(windows), timeout_s=60)
    assert_same_states(states_of(messages, "car"), windows, scores, states)
    assert daemon.metric("distractd_messages_received_total") == drive.n_samples


@pytest.mark.parametrize("value", ["-0.001", "0.2"])
def test_a_rest_out_of_range_names_the_field_and_value(value):
    with pytest.raises(ConfigError) as info:
        load_config(overrides=[f"service.coalesce_s={value}"])
    assert f"service.coalesce_s must be in [0, 0.1], got {float(value)}" in str(info.value)
