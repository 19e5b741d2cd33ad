"""Reaching a fake Dataplane instance in-process: an httpx transport and a ready client."""

from __future__ import annotations

import httpx

from haptic.dataplane.client import DataplaneClient, RetryPolicy, SleepFn
from simulator.dataplane.app import create_app
from simulator.dataplane.instance import FakeDataplane


def transport_for(fake: FakeDataplane) -> httpx.ASGITransport:
    return httpx.ASGITransport(app=create_app(fake))


def client_for(
    fake: FakeDataplane, *, sleep: SleepFn | None = None, retry: RetryPolicy | None = None
) -> DataplaneClient:
    """A ``DataplaneClient`` talking to ``fake`` through ASGI (no sockets), with its credentials."""
    return DataplaneClient(
        f"http://{fake.options.name}:5555",
        fake.options.username,
        fake.options.password,
        transport=transport_for(fake),
        sleep=sleep,
        retry=retry,
    )
