"""Dataplane clients share one TLS context: a client is created per pod and deployment attempt."""

from __future__ import annotations

import ssl

import pytest

from haptic.core.tls import default_ssl_context
from haptic.dataplane.client import DataplaneClient


async def test_clients_do_not_build_a_tls_context_each(monkeypatch: pytest.MonkeyPatch) -> None:
    default_ssl_context()  # the process's one context, built before counting
    built: list[object] = []
    original = ssl.SSLContext.load_verify_locations

    def counting(self: ssl.SSLContext, *args: object, **kwargs: object) -> None:
        built.append(args or kwargs)  # loading the CA bundle is the expensive part (tens of ms)
        original(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ssl.SSLContext, "load_verify_locations", counting)
    clients = [DataplaneClient(f"http://10.0.0.{i}:5555", "admin", "secret") for i in range(1, 4)]
    for client in clients:
        await client.aclose()
    assert built == []
    assert default_ssl_context() is default_ssl_context()
