"""Same scenario and seed, fresh virtual loop each time: byte-identical traces."""

from __future__ import annotations

from haptic.core import VirtualClock
from simulator.cluster_objects import endpoint_slice, ingress, service
from simulator.harness import Harness


def _run(haproxy_bin: str, seed: int) -> str:
    async def scenario() -> str:
        h = await Harness(pods=2, replicas=2, seed=seed, haproxy_binary=haproxy_bin,
                            ingress_library=True).start()
        h.apply(service("web"))
        h.apply(ingress("web", "web.example", "web"))
        h.apply(endpoint_slice("web", ["10.1.0.1", "10.1.0.2"]))
        await h.settle()
        h.apply(endpoint_slice("web", ["10.1.0.1", "10.1.0.2", "10.1.0.9"]))
        await h.settle()
        await h.stop()
        return h.trace_jsonl()

    return VirtualClock.run(scenario())


def test_same_seed_gives_identical_trace(haproxy_bin: str) -> None:
    first = _run(haproxy_bin, 7)
    second = _run(haproxy_bin, 7)
    assert first == second
    assert '"type":"deployment.completed"' in first
    assert '"type":"leader.became"' in first


def test_other_seed_gives_other_ids(haproxy_bin: str) -> None:
    assert _run(haproxy_bin, 1) != _run(haproxy_bin, 2)
