"""systemd notification (``sd_notify``) over the ``NOTIFY_SOCKET`` datagram socket.

systemd starts a ``Type=notify`` service with ``NOTIFY_SOCKET`` set to a Unix datagram socket path
(or an abstract-namespace name written with a leading ``@``). The service sends newline-separated
``KEY=VALUE`` assignments: ``READY=1``, ``STATUS=...``, ``WATCHDOG=1``, ``RELOADING=1``,
``STOPPING=1``. Outside systemd (no ``NOTIFY_SOCKET``) every call is a no-op.
"""

import os
import socket
import time

__all__ = ["Notifier"]


class Notifier:
    """Send ``sd_notify`` messages to the socket named by the environment.

    Parameters
    ----------
    env : mapping, default=os.environ
        Where ``NOTIFY_SOCKET``, ``WATCHDOG_USEC`` and ``WATCHDOG_PID`` are read from.

    Attributes
    ----------
    enabled : bool
        Whether a notification socket is configured.
    watchdog_s : float or None
        The watchdog timeout in seconds when systemd asks this process for keep-alive pings.
    """

    def __init__(self, env=None):
        env = os.environ if env is None else env
        address = env.get("NOTIFY_SOCKET", "")
        self.address = "\0" + address[1:] if address.startswith("@") else address
        self.enabled = bool(address)
        usec = env.get("WATCHDOG_USEC", "")
        pid = env.get("WATCHDOG_PID", "")
        for_us = not pid or pid == str(os.getpid())
        self.watchdog_s = int(usec) / 1e6 if usec.isdigit() and int(usec) > 0 and for_us else None

    def notify(self, **assignments):
        """Send ``KEY=VALUE`` lines (keys upper-cased); return whether a message was sent.

        The send never blocks: when the receiver's queue is full (or gone) the message is
        dropped, as a missed STATUS or WATCHDOG ping must not stall the daemon's loop.
        """
        if not self.enabled:
            return False
        message = "\n".join(f"{key.upper()}={value}" for key, value in assignments.items())
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
            sock.setblocking(False)
            try:
                sock.connect(self.address)
                sock.send(message.encode("utf-8"))
            except (BlockingIOError, ConnectionRefusedError, FileNotFoundError):
                return False
        return True

    def ready(self, status):
        return self.notify(ready=1, status=status)

    def reloading(self):
        return self.notify(reloading=1, monotonic_usec=time.clock_gettime_ns(time.CLOCK_MONOTONIC)
                           // 1000)

    def status(self, status):
        return self.notify(status=status)

    def watchdog(self):
        return self.notify(watchdog=1)

    def stopping(self, status):
        return self.notify(stopping=1, status=status)
