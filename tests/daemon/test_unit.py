"""The systemd unit: consistent with the configuration, verified and scored by systemd-analyze,
and its sandbox (syscall filter, user and mount namespaces, one BLAS thread) tested not to break
numba, OpenBLAS or the daemon by running the daemon under the same restrictions."""

import ctypes
import ctypes.util
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from distractd.daemon import DEFAULTS, decision_options, default_model_path
from distractd.daemon._gate import DESCRIPTOR_RESERVE
from distractd.models import load_model
from distractd.models.detectors import DecisionRule, predict_windows
from distractd.pipeline.formats import STATE_NAMES
from distractd.simulators import replay, simulate_drive

from ._unit import (ANALYZE, ROOT, SECCOMP, UNIT, allowed_syscalls, namespaces_available,
                    seconds, unit_environment, unit_settings)

needs_analyze = pytest.mark.skipif(ANALYZE is None, reason="systemd-analyze is absent")


def test_limits_agree_with_the_configuration():
    unit = unit_settings()
    assert int(unit["LimitNOFILE"][0]) >= DEFAULTS["input"]["max_connections"] \
        + DESCRIPTOR_RESERVE
    assert seconds(unit["TimeoutStopSec"][0]) >= DEFAULTS["service"]["drain_timeout_s"] + 5
    assert {"MemoryHigh", "MemoryMax", "TasksMax"} <= set(unit)
    for option in ("PrivateUsers", "PrivateMounts", "NoNewPrivileges"):
        assert unit[option] == ["yes"], option
    assert unit["SystemCallFilter"][:2] == ["@system-service", "~@privileged @resources"]
    assert unit["SystemCallErrorNumber"] == ["EPERM"]
    assert unit["IPAddressDeny"] == ["any"] and unit["IPAddressAllow"] == ["localhost"]


def test_documentation_is_installed_where_the_unit_says():
    """The unit names its docs inside the environment of the daemon it starts, where the package's
    data-files put them, beside the unit itself (a regular wheel holds
    ``distractd-*.data/data/share/...``; editable installs leave data-files out, so the
    declaration is what is checked here; tests/test_packaging.py installs a built wheel)."""
    unit = unit_settings()
    prefix = Path(re.search(r"(/\S+)/bin/distractd ", unit["ExecStart"][0])[1])
    data_files = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "data-files"]
    installed = {Path(directory) / Path(match).name for directory, patterns in data_files.items()
                 for pattern in patterns for match in ROOT.glob(pattern)}
    documents = [Path(value.removeprefix("file://")) for value in unit["Documentation"]]
    assert [document.name for document in documents] == ["deployment.md", "daemon.md"]
    for document in documents:
        assert document.relative_to(prefix) in installed, document
        assert (ROOT / "docs" / document.name).is_file()
    assert {Path("share/distractd/distractd.service"),
            Path("share/distractd/distractd.toml")} <= installed


@needs_analyze
def test_systemd_analyze_verifies_and_scores_the_unit(tmp_path):
    path = tmp_path / "distractd.service"
    path.write_text(UNIT.read_text().replace("/opt/distractd/bin/distractd",
                                             str(Path(sys.executable).with_name("distractd"))))
    verify = subprocess.run([ANALYZE, "verify", str(path)], capture_output=True, text=True,
                            timeout=60)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    security = subprocess.run([ANALYZE, "security", "--offline=yes", str(path)],
                              capture_output=True, text=True, timeout=60)
    score = float(re.search(r"Overall exposure level for \S+: ([\d.]+)", security.stdout)[1])
    # 1.7 before PrivateUsers, PrivateMounts, the IP allow list and the ~@privileged @resources
    # deny list; 0.9 with it whole, 1.1 with sched_setscheduler allowed again for libzmq
    assert score <= 1.1, security.stdout


@needs_analyze
@pytest.mark.skipif(ctypes.util.find_library("seccomp") is None, reason="libseccomp is absent")
def test_the_daemon_runs_inside_the_units_sandbox(start_daemon, tmp_path):
    """The unit's system-call filter (``@system-service`` less ``@privileged @resources``, EPERM
    for the rest) as a real seccomp filter, in new user and mount namespaces when the kernel allows
    them (PrivateUsers, PrivateMounts), with the unit's BLAS environment: the daemon compiles or
    loads its kernels, serves a stream with the batch's states, and stays within TasksMax
    threads."""
    unit = unit_settings()
    allowed = allowed_syscalls(unit["SystemCallFilter"])
    assert not {"setrlimit", "sched_setaffinity", "chown", "setuid"} & allowed
    wrapper = [sys.executable, "-c", SECCOMP, " ".join(sorted(allowed))]
    if namespaces_available("--user", "--map-root-user", "--mount"):
        wrapper = ["unshare", "--user", "--map-root-user", "--mount", *wrapper]
    env = unit_environment(unit)
    del env["NUMBA_CACHE_DIR"]
    drive = simulate_drive(7, duration_s=30.0)
    detector = load_model(default_model_path())
    rule = DecisionRule(**decision_options(DEFAULTS, detector.feature_names))
    windows, _, labels = predict_windows(detector, drive, rule)
    daemon = start_daemon(["sessions.idle_timeout_s=1"], env=env, wrapper=wrapper)
    replay([drive], daemon.input, speed=30, prefix="car")
    messages = daemon.collect(lambda m: sum(k == "state" and "age_s" not in s
                                            for k, _, s in m) >= len(windows), timeout_s=60)
    published = sorted({s["t"]: s["state"] for kind, _, s in messages
                        if kind == "state" and "age_s" not in s}.items())
    assert [t for t, _ in published] == windows.t_end.tolist()
    assert [state for _, state in published] == [STATE_NAMES[label] for label in labels]
    threads = int(re.search(r"Threads:\s+(\d+)",
                            Path(f"/proc/{daemon.process.pid}/status").read_text())[1])
    assert threads <= int(unit["TasksMax"][0])
    assert daemon.stop() == 0
    assert "Traceback" not in daemon.log_text
