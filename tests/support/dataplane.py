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


@pytest.fixture
async def fake() -> AsyncIterator[FakeDataplane]:
    instance = FakeDataplane(InstanceOptions(reload_delay=RELOAD_DELAY))
    yield instance
    await instance.aclose()


@pytest.fixture
async def client(fake: FakeDataplane) -> AsyncIterator[DataplaneClient]:
    async with client_for(fake) as c:
        yield c
