"""A pod whose version check fails transiently is retried within seconds, and settle waits for it."""

from __future__ import annotations

import asyncio

import pytest

from simulator.harness import Harness
from tests.integration.haptic.controller.conftest import add_app

pytestmark = pytest.mark.looptime


async def test_pod_with_transient_version_check_failures_is_admitted_within_seconds(haproxy_bin: str) -> None:
    async with Harness(pods=1, haproxy_binary=haproxy_bin, ingress_library=True) as h:
        await h.settle()
        add_app(h, "web", "web.example", ["10.1.0.1"])
        await h.settle()
        loop = asyncio.get_running_loop()
        added = loop.time()
        for _ in range(2):
            pod = h.add_pod()
            pod.dataplane.inject_errors(4, 503, "/v3/info")  # its first four version checks fail
        await h.settle()
        assert h.settled
        admitted = [e for e in h.entries("haproxy.pods.discovered") if e.event.count == 3]  # type: ignore[attr-defined]
        assert admitted, "all three pods admitted"
        assert admitted[0].t - added < 20.0, f"admitted {admitted[0].t - added:.1f}s after the pods appeared"
        configs = {h.deployed_config(name) for name in h.pods}
        assert len(configs) == 1 and "web.example" in (h.stored_file(2, "maps", "path-prefix.map") or "")


async def test_settle_waits_while_a_version_check_retry_is_pending(haproxy_bin: str) -> None:
    async with Harness(pods=1, haproxy_binary=haproxy_bin, ingress_library=True) as h:
        await h.settle()
        pod = h.add_pod()
        pod.dataplane.inject_errors(2, 503, "/v3/info")
        said: set[str] = set()
        for _ in range(40):  # the pod is seen, its check fails: a retry is due, and settle must know
            await h.advance(0.25)
            said.add(h.busy())
        assert any("version check of http://" in s and "to be retried" in s for s in said), said
        await h.settle()
        assert h.settled and h.busy() == ""
        assert len(h.events("haproxy.pods.discovered")[-1].endpoints) == 2  # type: ignore[attr-defined]
