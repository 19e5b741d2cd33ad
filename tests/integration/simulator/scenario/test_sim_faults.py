"""Fault semantics on the ``sim`` backend: a duration without a count fails every request while active,
clearing one kind leaves the others, an old duration timer leaves a newer injection alone, and the new
kinds (dataplane_unreachable, kube_latency, clock_skew) act on the fakes and the replicas' clocks."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
import yaml

from simulator.scenario.backend import BackendSetup
from simulator.scenario.schema import FaultAction
from simulator.scenario.sim_backend import SimBackend, SimFactory
from tests.support.paths import REPO


def fault(**spec: Any) -> Any:
    action = FaultAction.model_validate({"inject": spec})
    assert action.inject is not None
    return action.inject


def run(haproxy_bin: str, body: Any) -> Any:
    config = yaml.safe_load((REPO / "scenarios" / "configs" / "slots.yaml").read_text())
    factory = SimFactory(haproxy_bin)
    backend = factory.create()

    async def main() -> Any:
        await backend.start(BackendSetup(pods=2, replicas=2, config=config, objects=[], seed=3))
        try:
            return await body(backend)
        finally:
            await backend.stop()

    return factory.run(main)


def errors(backend: SimBackend, pod: str, n: int) -> list[int | None]:
    dataplane = backend.h.pods[pod].dataplane
    return [dataplane.take_injected_error("/v3/services/haproxy/configuration/version") for _ in range(n)]


def test_a_duration_without_count_fails_every_request_until_it_ends(haproxy_bin: str) -> None:
    async def body(b: SimBackend) -> None:
        await b.inject_fault(fault(kind="dataplane_5xx", pod=1, duration=10.0))
        assert errors(b, "haproxy-1", 50) == [503] * 50
        assert errors(b, "haproxy-0", 1) == [None]
        await b.advance(10.5)
        assert errors(b, "haproxy-1", 1) == [None]
        await b.inject_fault(fault(kind="dataplane_5xx", pod=1, count=2, duration=10.0, status=500))
        assert errors(b, "haproxy-1", 3) == [500, 500, None]

    run(haproxy_bin, body)


def test_clearing_one_kind_keeps_the_others_and_old_timers_spare_new_injections(haproxy_bin: str) -> None:
    async def body(b: SimBackend) -> None:
        faults = b.h.pods["haproxy-0"].dataplane.faults
        await b.inject_fault(fault(kind="dataplane_slow", pod=0, delay=2.0))
        await b.inject_fault(fault(kind="dataplane_5xx", pod=0, duration=5.0))
        await b.clear_faults("dataplane_5xx")
        assert faults.error_count == 0 and b.h.pods["haproxy-0"].dataplane.faults.delay == 2.0
        await b.inject_fault(fault(kind="reload_failure", pod=0, duration=5.0))
        await b.advance(3.0)
        await b.inject_fault(fault(kind="reload_failure", pod=0, duration=10.0))
        await b.advance(4.0)  # the first timer fired: the second injection is still armed
        assert b.h.pods["haproxy-0"].dataplane.faults.fail_reloads > 0
        await b.advance(7.0)
        assert b.h.pods["haproxy-0"].dataplane.faults.fail_reloads == 0
        assert b.h.pods["haproxy-0"].dataplane.faults.delay == 2.0

    run(haproxy_bin, body)


def test_unreachable_refuses_connections_then_answers_again(haproxy_bin: str) -> None:
    async def body(b: SimBackend) -> None:
        url = f"http://{b.h.pods['haproxy-1'].ip}:5555/v3/info"
        await b.inject_fault(fault(kind="dataplane_unreachable", pod="haproxy-1", duration=5.0))
        transport = b.h._transport(url)
        assert transport is not None
        async with httpx.AsyncClient(transport=transport) as client:
            with pytest.raises(httpx.ConnectError):
                await client.get(url)
        await b.advance(5.5)
        assert b.h._transport(url) is b.h.pods["haproxy-1"].transport

    run(haproxy_bin, body)


def test_kube_latency_delays_api_calls_and_clock_skew_moves_one_wall_clock(haproxy_bin: str) -> None:
    async def body(b: SimBackend) -> None:
        await b.inject_fault(fault(kind="kube_latency", delay=3.0, duration=20.0))
        loop = asyncio.get_running_loop()
        start = loop.time()
        await b.h.api.faults.gate("get", None)
        assert loop.time() - start == pytest.approx(3.0)
        await b.clear_faults("kube_latency")
        start = loop.time()
        await b.h.api.faults.gate("get", None)
        assert loop.time() == start
        await b.inject_fault(fault(kind="clock_skew", replica=1, offset="-90s", duration=30.0))
        skewed, plain = b.h.replica_clock("controller-1"), b.h.replica_clock("controller-0")
        assert plain.wall() - skewed.wall() == pytest.approx(90.0)
        assert skewed.monotonic() == plain.monotonic()
        await b.advance(31.0)
        assert plain.wall() == skewed.wall()

    run(haproxy_bin, body)


def test_unknown_replica_for_clock_skew_is_an_error(haproxy_bin: str) -> None:
    async def body(b: SimBackend) -> None:
        with pytest.raises(ValueError, match="no replica #5"):
            await b.inject_fault(fault(kind="clock_skew", replica=5, offset=10))

    run(haproxy_bin, body)
