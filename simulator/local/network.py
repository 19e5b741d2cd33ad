"""Loopback addresses and ports for one local stack.

Linux routes all of ``127.0.0.0/8`` to the loopback interface, so distinct ``127.a.b.c`` addresses
play the part of pod IPs. A stack takes a random ``/24`` block (seeded by the caller when it wants
reproducible addresses) and checks that it can bind there before using it.
"""

from __future__ import annotations

import errno
import random
import socket
from collections.abc import Sequence

# Hosts of a block: pods from 10, echo backends from 100, controller replicas from 200 (kept apart to
# read logs at a glance).
POD_BASE = 10
ECHO_BASE = 100
CONTROLLER_BASE = 200


class NetworkError(RuntimeError):
    pass


def can_bind(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((host, port))
        except OSError as exc:
            if exc.errno in (errno.EADDRINUSE, errno.EADDRNOTAVAIL, errno.EACCES):
                return False
            raise
    return True


class LoopbackNetwork:
    """A ``127.a.b.0/24`` block: ``pod_ip(i)``, ``echo_ip(i)`` and ports free on a set of its hosts."""

    def __init__(self, rng: random.Random | None = None, *, attempts: int = 20) -> None:
        rng = rng or random.Random()
        for _ in range(attempts):
            prefix = f"127.{rng.randint(1, 254)}.{rng.randint(0, 255)}"
            if can_bind(f"{prefix}.{POD_BASE}", 0):
                self.prefix = prefix
                self._rng = rng
                return
        raise NetworkError(
            "cannot bind any 127.a.b.c loopback address; the local tier needs the whole 127.0.0.0/8 "
            "routed to the loopback interface (Linux does this by default)"
        )

    def pod_ip(self, index: int) -> str:
        return self._host(POD_BASE + index)

    def echo_ip(self, index: int) -> str:
        return self._host(ECHO_BASE + index)

    def controller_ip(self, replica: int) -> str:
        """Where controller replica ``replica`` serves metrics, debug and webhook: an address of the block,
        not 127.0.0.1, so that no other process on the machine binds the port between the stack choosing
        it and the controller binding it (on 127.0.0.1 every test's servers draw from the same ports)."""
        return self._host(CONTROLLER_BASE + replica)

    def _host(self, number: int) -> str:
        if not 1 <= number <= 254:
            raise NetworkError(f"host number {number} is outside the block {self.prefix}.0/24")
        return f"{self.prefix}.{number}"

    def free_port(self, hosts: Sequence[str], *, avoid: Sequence[int] = (), attempts: int = 50) -> int:
        """A port that every host of ``hosts`` can bind now (ephemeral range, as the kernel picks)."""
        for _ in range(attempts):
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
                sock.bind((hosts[0], 0))
                port = int(sock.getsockname()[1])
            if port not in avoid and all(can_bind(host, port) for host in hosts[1:]):
                return port
        raise NetworkError(f"no port free on all of {', '.join(hosts)} after {attempts} attempts")
