"""Shared fixtures: a fake Dataplane API instance and a ``DataplaneClient`` reaching it in-process.

Exposed to a test directory by its ``conftest.py`` (``from tests.support.dataplane import client, fake``).
``fake`` reloads after 1 s of loop time, so reload verification is exercised; it is closed after the test.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from haptic.dataplane.client import DataplaneClient
from simulator.dataplane.inprocess import client_for
from simulator.dataplane.instance import FakeDataplane, InstanceOptions

RELOAD_DELAY = 1.0

#: the head of the small configs the Dataplane tests push: global, defaults and ``frontend fe`` on :8080
#: (a test appends the frontend's routing lines and its backends)
FRONTEND_FE = """global
    daemon

defaults
    mode http
    timeout client 5s

frontend fe
    bind :8080
"""


@pytest.fixture
async def fake() -> AsyncIterator[FakeDataplane]:
    instance = FakeDataplane(InstanceOptions(reload_delay=RELOAD_DELAY))
    yield instance
    await instance.aclose()


@pytest.fixture
async def client(fake: FakeDataplane) -> AsyncIterator[DataplaneClient]:
    async with client_for(fake) as c:
        yield c


class SpyDriver:
    """Records what would reach haproxy's admin socket."""

    def __init__(self) -> None:
        self.running = True
        self.commands: list[str] = []

    async def check(self, text: str) -> None:
        return None

    async def reload(self, text: str) -> None:
        if not self.running:
            raise OSError("master socket: connection refused")

    async def runtime(self, commands: list[str]) -> str | None:
        if not self.running:
            return "admin socket: connection refused"
        self.commands.extend(commands)
        return None

    def stop(self) -> None:
        self.running = False

    def close(self) -> None:
        self.running = False
