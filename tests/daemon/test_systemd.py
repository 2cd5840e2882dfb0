"""sd_notify over a real datagram socket, path and abstract namespace."""

import os
import socket
import uuid

from distractd.daemon import Notifier
from distractd.simulators import NotifyReceiver


def test_messages_reach_a_path_socket():
    with NotifyReceiver() as receiver:
        notifier = Notifier({"NOTIFY_SOCKET": receiver.path})
        assert notifier.enabled
        assert notifier.ready("1 streams")
        assert receiver.wait_for("READY=1", 2) == "READY=1\nSTATUS=1 streams"
        notifier.watchdog()
        assert receiver.wait_for("WATCHDOG=1", 2) == "WATCHDOG=1"
        notifier.reloading()
        message = receiver.wait_for("RELOADING=1", 2)
        assert message.split("\n")[1].startswith("MONOTONIC_USEC=")
        notifier.stopping("bye")
        assert receiver.wait_for("STOPPING=1", 2) == "STOPPING=1\nSTATUS=bye"


def test_abstract_namespace_socket():
    name = f"distractd-test-{uuid.uuid4().hex}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind("\0" + name)
        sock.settimeout(2)
        assert Notifier({"NOTIFY_SOCKET": "@" + name}).status("ok")
        assert sock.recv(100) == b"STATUS=ok"


def test_without_systemd_nothing_is_sent():
    notifier = Notifier({})
    assert not notifier.enabled
    assert notifier.ready("x") is False
    assert notifier.watchdog_s is None


def test_watchdog_interval_only_for_this_process():
    assert Notifier({"WATCHDOG_USEC": "3000000"}).watchdog_s == 3.0
    mine = {"WATCHDOG_USEC": "3000000", "WATCHDOG_PID": str(os.getpid())}
    assert Notifier(mine).watchdog_s == 3.0
    assert Notifier({"WATCHDOG_USEC": "3000000", "WATCHDOG_PID": "1"}).watchdog_s is None
    assert Notifier({"WATCHDOG_USEC": "0"}).watchdog_s is None


def test_a_full_receiver_queue_drops_messages_instead_of_blocking():
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:  # bound, never read
        name = f"distractd-test-{uuid.uuid4().hex}"
        sock.bind("\0" + name)
        notifier = Notifier({"NOTIFY_SOCKET": "@" + name})
        sent = [notifier.status(f"{i} streams") for i in range(2000)]
    assert sent[0] and not all(sent)
