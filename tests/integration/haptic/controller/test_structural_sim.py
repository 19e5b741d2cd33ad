"""On the simulator: an EndpointSlice change is validated structurally (no haproxy -c) and the trace
says so; a new Ingress still runs haproxy -c."""

from __future__ import annotations

from typing import Any

import pytest

from simulator.cluster_objects import endpoint_slice
from tests.integration.haptic.controller.conftest import add_app, web_cluster

pytestmark = pytest.mark.looptime


async def test_endpoint_changes_are_proven_structurally_and_new_ingresses_run_haproxy(make_harness: Any) -> None:
    h = await web_cluster(make_harness)
    assert h.entries("validation.completed")[-1].data["method"] == "haproxy -c"
    before = len(h.entries("validation.completed"))

    h.apply(endpoint_slice("web", ["10.1.0.1", "10.1.0.2", "10.1.0.7"]))
    await h.settle()
    entries = h.entries("validation.completed")[before:]
    assert entries and entries[-1].data["method"] == "structural"
    assert '"method":"structural"' in h.trace_jsonl()
    assert all("server SRV_3 10.1.0.7:8080" in h.deployed_config(pod) for pod in (0, 1))

    before = len(h.entries("validation.completed"))
    add_app(h, "api", "api.example", ["10.2.0.1"])
    await h.settle()
    assert h.entries("validation.completed")[before:][-1].data["method"] == "haproxy -c"
