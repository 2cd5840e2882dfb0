"""The shipped systemd unit as the tests read and emulate it: its settings, its system-call filter
expanded by this systemd, and a seccomp wrapper that runs a command under that filter."""

import re
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
UNIT = ROOT / "systemd" / "distractd.service"
ANALYZE = shutil.which("systemd-analyze")

SECCOMP = """
import ctypes, ctypes.util, errno, os, sys
allowed, command = sys.argv[1].split(), sys.argv[2:]
lib = ctypes.CDLL(ctypes.util.find_library("seccomp"))
lib.seccomp_init.restype = ctypes.c_void_p
lib.seccomp_init.argtypes = [ctypes.c_uint32]
lib.seccomp_rule_add.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint]
lib.seccomp_load.argtypes = [ctypes.c_void_p]
lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
context = lib.seccomp_init(0x00050000 | errno.EPERM)  # SCMP_ACT_ERRNO: SystemCallErrorNumber
for name in allowed:
    number = lib.seccomp_syscall_resolve_name(name.encode())
    if number >= 0:
        assert lib.seccomp_rule_add(context, 0x7FFF0000, number, 0) == 0, name  # SCMP_ACT_ALLOW
assert lib.seccomp_load(context) == 0
os.execv(command[0], command)
"""
"""Loads a seccomp filter that allows the named system calls and fails every other one with
EPERM, as systemd's ``SystemCallFilter=`` allow list with ``SystemCallErrorNumber=EPERM``, then
runs the command."""


def unit_settings(text=None):
    """``Key=value`` lines of the unit (``text``, else the shipped one), values of repeated keys
    in order; a line ending in a backslash continues on the next, joined by a space as systemd
    reads it."""
    settings = {}
    text = UNIT.read_text() if text is None else text
    for line in text.replace("\\\n", " ").splitlines():
        if "=" in line and not line.startswith(("#", "[")):
            key, value = line.split("=", 1)
            settings.setdefault(key, []).append(value)
    return settings


def seconds(value):
    """A unit's time span (``60``, ``60s``, ``5min``) in seconds."""
    number, unit = re.fullmatch(r"(\d+)(s|min)?", value).groups()
    return int(number) * (60 if unit == "min" else 1)


def unit_environment(settings):
    """The variables of the unit's ``Environment=`` lines."""
    return dict(value.split("=", 1) for value in " ".join(settings["Environment"]).split())


def syscalls(names):
    """The system calls named, ``@groups`` expanded as this systemd defines them."""
    calls = set()
    for name in names.split():
        if not name.startswith("@"):
            calls.add(name)
            continue
        out = subprocess.run([ANALYZE, "syscall-filter", name], capture_output=True, text=True,
                             check=True, timeout=60).stdout
        for line in out.splitlines()[1:]:
            line = line.strip()
            if line and not line.startswith("#"):
                calls |= syscalls(line)
    return calls


def allowed_syscalls(filters):
    """The system calls a unit's ``SystemCallFilter=`` lines allow, when the first is an allow
    list: each later line adds its calls, or with ``~`` removes them (systemd.exec(5))."""
    assert not filters[0].startswith("~")
    allowed = set()
    for line in filters:
        if line.startswith("~"):
            allowed -= syscalls(line[1:])
        else:
            allowed |= syscalls(line)
    return allowed


def namespaces_available(*options):
    """Whether ``unshare`` can enter new namespaces with these options here."""
    return shutil.which("unshare") is not None and subprocess.run(
        ["unshare", *options, "true"], capture_output=True).returncode == 0
