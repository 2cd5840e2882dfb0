"""The built distributions as a packager and an administrator meet them, offline: the sdist holds
the tests and builds the wheel; the wheel, installed into a fresh virtual environment, holds the
systemd unit, the default configuration and the docs; and the installed unit's own start lines
(``ExecStartPre=``, ``ExecStart=``), run under its sandbox as systemd would run them with each
given the unit's ``TimeoutStartSec``, bring the daemon from an empty kernel cache to READY —
after a plain install without a configuration file, and configured with the shipped file."""

import ctypes.util
import re
import shlex
import shutil
import signal
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import time
import tomllib
import urllib.request
import zipfile
from pathlib import Path

import pytest
import zmq
from prometheus_client.parser import text_string_to_metric_families

from distractd.daemon import DEFAULTS, decision_options, default_model_path
from distractd.models import load_model
from distractd.models.detectors import DecisionRule, predict_windows
from distractd.pipeline.formats import STATE_NAMES, decode_output
from distractd.simulators import NotifyReceiver, free_port, replay, simulate_drive

from .daemon._unit import (ANALYZE, SECCOMP, allowed_syscalls, namespaces_available, seconds,
                           unit_environment, unit_settings)

pytestmark = pytest.mark.slow  # a wheel build, a cold compile of every kernel (~65 CPU s + a 13 CPU s helper), 2 starts

ROOT = Path(__file__).resolve().parents[1]
NOT_SOURCE = shutil.ignore_patterns(".git", ".venv", "build", "dist", "*.egg-info", "__pycache__",
                                    ".pytest_cache", "*.py[cod]", "*.nbi", "*.nbc", ".ci", "out")
SYSTEMD_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin"
"""The ``PATH`` systemd gives a system service."""


def run(command, **kwargs):
    """A command that must succeed; its output is the failure message."""
    result = subprocess.run(command, capture_output=True, text=True, timeout=600, **kwargs)
    assert result.returncode == 0, f"{command}: {result.stdout[-2000:]}{result.stderr[-3000:]}"
    return result


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    """A copy of the working tree: the build writes into its tree."""
    source = tmp_path_factory.mktemp("source") / "distractd"
    shutil.copytree(ROOT, source, ignore=NOT_SOURCE)
    return source


@pytest.fixture(scope="module")
def sdist(source, tmp_path_factory):
    """The sdist built from the copy of the working tree."""
    out = tmp_path_factory.mktemp("dist")
    name = run([sys.executable, "-c", "import sys; from setuptools import build_meta; "
                "print(build_meta.build_sdist(sys.argv[1]))", str(out)],
               cwd=source).stdout.split()[-1]
    return out / name


@pytest.fixture(scope="module")
def wheel(sdist, tmp_path_factory):
    """The wheel built from the sdist alone, with this environment's setuptools (no network)."""
    out = tmp_path_factory.mktemp("wheel")
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
         "--wheel-dir", str(out), str(sdist)])
    return next(out.glob("distractd-*.whl"))


@pytest.fixture(scope="module")
def prefix(wheel, tmp_path_factory):
    """A fresh virtual environment with the wheel installed (as /opt/distractd in
    docs/deployment.md); the dependencies are this environment's, added to its path after the
    install (a path line in a ``.pth`` file: this environment's own ``.pth`` files, among them the
    editable install of the working tree, are not run there), less matplotlib (``[plots]``)."""
    prefix = tmp_path_factory.mktemp("opt") / "distractd"
    run([sys.executable, "-m", "venv", "--without-pip", str(prefix)])
    python = prefix / "bin" / "python"
    run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
         "--no-index", "--quiet", str(wheel)])
    purelib = Path(run([str(python), "-c", "import sysconfig; "
                        "print(sysconfig.get_paths()['purelib'])"]).stdout.strip())
    dependencies = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (purelib / "dependencies.pth").write_text("\n".join(sorted(dependencies)) + "\n")
    # the core dependencies only: matplotlib, of the [plots] extra, is not importable there
    (purelib / "matplotlib.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'matplotlib'\", name='matplotlib')\n")
    return prefix


def test_the_sdist_holds_the_tests_and_what_deployment_needs(source, sdist):
    with tarfile.open(sdist) as archive:
        names = {Path(*Path(name).parts[1:]) for name in archive.getnames()}
    tests = {path.relative_to(source) for path in (source / "tests").rglob("*.py")}
    assert len(tests) > 50 and tests <= names, sorted(tests - names)
    assert {Path("systemd/distractd.service"), Path("config/distractd.toml"), Path("Makefile"),
            Path("MANIFEST.in"), Path("docs/deployment.md"), Path("docs/img/review.png"),
            Path("distractd/data/default_model.npz")} <= names
    assert not [name for name in names if name.suffix in (".pyc", ".nbi", ".nbc")]


def test_the_wheel_installs_the_unit_the_configuration_and_the_docs(source, wheel, prefix):
    with zipfile.ZipFile(wheel) as archive:
        metadata = archive.read(next(name for name in archive.namelist()
                                     if name.endswith(".dist-info/METADATA"))).decode()
    # matplotlib (about 100 MB, never used by the daemon) only with the [plots] extra
    assert re.findall(r"^Requires-Dist: matplotlib.*$", metadata, re.MULTILINE) \
        == ['Requires-Dist: matplotlib>=3.7; extra == "plots"']
    assert "Author: distractd developers" in metadata
    assert "Classifier: Operating System :: POSIX :: Linux" in metadata

    share = prefix / "share"
    data_files = tomllib.loads((source / "pyproject.toml").read_text())["tool"]["setuptools"][
        "data-files"]
    for directory, patterns in data_files.items():
        for shipped in (match for pattern in patterns for match in source.glob(pattern)):
            installed = prefix / directory / shipped.name
            assert installed.read_bytes() == shipped.read_bytes(), installed
    assert (share / "distractd" / "distractd.service").is_file()
    assert (share / "distractd" / "distractd.toml").is_file()
    docs = share / "doc" / "distractd"
    for value in unit_settings((share / "distractd" / "distractd.service").read_text())[
            "Documentation"]:
        path = Path(value.removeprefix("file://").replace("/opt/distractd", str(prefix)))
        assert path.is_file(), value
    # every link between the docs (their images and measurement pages) resolves where installed
    links = 0
    for page in (source / "docs").rglob("*.md"):
        for target in re.findall(r"\]\(([^)#\s]+)", page.read_text()):
            inside = (page.parent / target).resolve()
            if "://" in target or not inside.is_relative_to(source / "docs") \
                    or not inside.exists():
                continue
            links += 1
            installed = docs / page.relative_to(source / "docs").parent / target
            assert installed.exists(), f"{page.name} links {target}, not installed"
    assert links > 10 and (docs / "img" / "review.png").is_file()

    located = run([str(prefix / "bin" / "python"), "-c", "import distractd; "
                   "print(distractd.__file__)"], cwd="/", env={"PATH": SYSTEMD_PATH}).stdout.strip()
    assert Path(located).is_relative_to(prefix)


class Installed:
    """The installed unit with /opt/distractd, /etc/distractd and /var/lib/distractd moved to
    temporary directories, its start lines run as systemd would: the unit's environment and
    ``NOTIFY_SOCKET``, each command in the unit's sandbox (its system-call filter as a real seccomp
    filter, new user and mount namespaces) and given ``TimeoutStartSec``; in a private network
    namespace, the built-in endpoints and metrics port do not meet the host's."""

    def __init__(self, prefix, root):
        self.etc = root / "etc" / "distractd"
        self.etc.mkdir(parents=True)
        text = (prefix / "share" / "distractd" / "distractd.service").read_text()
        for path, moved in (("/opt/distractd", prefix), ("/etc/distractd", self.etc),
                            ("/var/lib/distractd", root / "var" / "lib" / "distractd")):
            text = text.replace(path, str(moved))
        self.unit = unit_settings(text)
        self.timeout_s = seconds(self.unit["TimeoutStartSec"][0])
        self.env = {"PATH": SYSTEMD_PATH, "HOME": "/", **unit_environment(self.unit)}
        self.cache = Path(self.env["NUMBA_CACHE_DIR"])
        allowed = allowed_syscalls(self.unit["SystemCallFilter"])
        self.seccomp = [sys.executable, "-c", SECCOMP, " ".join(sorted(allowed))]

    def command(self, key, private_network):
        (line,) = self.unit[key]
        assert line[0] not in "-+!@:", f"{key} prefixes are not emulated"
        wrapper = self.seccomp
        if private_network:
            wrapper = ["unshare", "--net", "sh", "-c", 'ip link set lo up && exec "$@"', "sh",
                       *wrapper]
        return ["unshare", "--user", "--map-root-user", "--mount", *wrapper, *shlex.split(line)]

    def start_pre(self, private_network=False):
        """``ExecStartPre=``: its exit status and output."""
        result = subprocess.run(self.command("ExecStartPre", private_network), env=self.env,
                                cwd="/", capture_output=True, text=True, timeout=self.timeout_s)
        return result.returncode, result.stdout + result.stderr

    def start(self, notify, private_network=False):
        """``ExecStart=``: the READY message, or None when the daemon exits or the timeout passes
        before it."""
        self.log = tempfile.TemporaryFile(mode="w+")
        self.process = subprocess.Popen(self.command("ExecStart", private_network),
                                        env={**self.env, "NOTIFY_SOCKET": notify.path},
                                        cwd="/", stderr=self.log, text=True)
        deadline = time.monotonic() + self.timeout_s
        while self.process.poll() is None and time.monotonic() < deadline:
            ready = notify.wait_for("READY=1", timeout_s=1)
            if ready is not None:
                return ready
        return None

    def stop(self):
        """SIGTERM (``systemctl stop``), then the exit status and the log."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            status = self.process.wait(timeout=seconds(self.unit["TimeoutStopSec"][0]))
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
        self.log.seek(0)
        log = self.log.read()
        self.log.close()
        return status, log

    def cache_files(self):
        return {path: path.stat().st_mtime_ns for path in self.cache.rglob("*") if path.is_file()}


@pytest.mark.skipif(
    ANALYZE is None or ctypes.util.find_library("seccomp") is None or shutil.which("ip") is None
    or not namespaces_available("--user", "--map-root-user", "--mount", "--net"),
    reason="needs systemd-analyze, libseccomp, ip and unshare with user, mount and network "
           "namespaces")
def test_the_installed_unit_starts_after_a_plain_install_and_configured(prefix, tmp_path):
    """The first boot after ``pip install``: no /etc/distractd/distractd.toml and no kernel cache.
    ExecStartPre compiles every kernel into the state directory; ExecStart reaches READY on the
    built-in defaults, with one line saying so, and stops cleanly on SIGTERM. Then configured as
    docs/deployment.md says (the shipped file copied to /etc/distractd, its endpoints and metrics
    port edited) and restarted: the check loads the kernels, the daemon compiles nothing more,
    publishes the batch's states for a replayed drive and counts its samples on /metrics."""
    unit = Installed(prefix, tmp_path)
    assert not unit.cache.exists()
    status, output = unit.start_pre(private_network=True)
    assert status == 0, output
    compiled = unit.cache_files()
    assert any(path.suffix == ".nbi" for path in compiled), sorted(compiled)
    with NotifyReceiver() as notify:
        ready = unit.start(notify, private_network=True)
        status, log = unit.stop()
    assert ready is not None and status == 0, log[-3000:]
    assert log.count("running with the built-in defaults") == 1, log[-3000:]
    assert "Traceback" not in log

    endpoints = {"input": f"tcp://127.0.0.1:{free_port()}",
                 "output": f"tcp://127.0.0.1:{free_port()}", "metrics": free_port()}
    shipped = (prefix / "share" / "distractd" / "distractd.toml").read_text()
    configured = shipped.replace('bind = ["tcp://127.0.0.1:5555"]',
                                 f'bind = ["{endpoints["input"]}"]')
    configured = configured.replace('bind = "tcp://127.0.0.1:5556"',
                                    f'bind = "{endpoints["output"]}"')
    configured = configured.replace("port = 9105", f"port = {endpoints['metrics']}")
    assert configured.count("127.0.0.1:") == shipped.count("127.0.0.1:") \
        and str(endpoints["metrics"]) in configured
    (unit.etc / "distractd.toml").write_text(configured)
    status, output = unit.start_pre()
    assert status == 0, output

    drive = simulate_drive(7, duration_s=30.0)
    detector = load_model(default_model_path())
    rule = DecisionRule(**decision_options(DEFAULTS, detector.feature_names))
    windows, _, labels = predict_windows(detector, drive, rule)
    context = zmq.Context()
    subscriber = context.socket(zmq.SUB)
    subscriber.linger = 0
    subscriber.subscribe(b"state.")
    published = {}
    with NotifyReceiver() as notify:
        try:
            ready = unit.start(notify)
            assert ready is not None, unit.stop()
            subscriber.connect(endpoints["output"])
            subscriber.poll(300)  # let the subscription reach the daemon (slow joiner)
            replay([drive], endpoints["input"], speed=30, prefix="car")
            while len(published) < len(windows) and subscriber.poll(60_000):
                _, _, state = decode_output(subscriber.recv_multipart())
                if "age_s" not in state:
                    published.setdefault(state["t"], state["state"])
            url = f"http://127.0.0.1:{endpoints['metrics']}/metrics"
            with urllib.request.urlopen(url, timeout=10) as response:
                exposition = response.read().decode()
        finally:
            subscriber.close()
            context.term()
            status, log = unit.stop()
    assert status == 0 and "built-in defaults" not in log and "Traceback" not in log, log[-3000:]
    assert unit.cache_files() == compiled
    assert sorted(published) == windows.t_end.tolist()
    assert [published[t] for t in sorted(published)] == [STATE_NAMES[label] for label in labels]
    samples = {sample.name: sample.value
               for family in text_string_to_metric_families(exposition)
               for sample in family.samples}
    assert samples["distractd_samples_received_total"] == drive.n_samples
