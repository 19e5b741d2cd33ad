"""The harness trace keeps every event of a run, not every render: a long run at 10,000 Ingresses kept three
events' 4 MB config per change alive (and every render then wrote to fresh memory, which the endpoint-change
benchmark counted as the controller's CPU)."""

from __future__ import annotations

from dataclasses import fields

from haptic.core import VirtualClock
from haptic.core.event import digest
from haptic.dataplane.aux_files import AuxFiles
from simulator.cluster_objects import endpoint_slice, ingress, service
from simulator.harness import Harness, TraceEntry


def _run(haproxy_bin: str) -> tuple[list[TraceEntry], str]:
    async def scenario() -> tuple[list[TraceEntry], str]:
        h = await Harness(pods=1, replicas=1, haproxy_binary=haproxy_bin, ingress_library=True).start()
        h.apply(service("web"))
        h.apply(ingress("web", "web.example", "web"))
        h.apply(endpoint_slice("web", ["10.1.0.1", "10.1.0.2"]))
        await h.settle()
        for n in range(3, 6):
            h.apply(endpoint_slice("web", ["10.1.0.1", f"10.1.0.{n}"]))
            await h.settle()
        deployed = h.deployed_config(0)
        await h.stop()
        return h.trace, deployed

    return VirtualClock.run(scenario())


def test_trace_events_keep_digests_of_the_rendered_configs_not_the_texts(haproxy_bin: str) -> None:
    trace, deployed = _run(haproxy_bin)
    rendered = [e for e in trace if e.event.type == "template.rendered"]
    assert len(rendered) >= 4
    # the JSON form still names what was rendered: the last render is what the pod runs
    assert rendered[-1].data["haproxy_config"] == digest(deployed)
    carrying = [
        f"{entry.event.type}.{f.name}"
        for entry in trace for f in fields(entry.event)
        if (isinstance(value := getattr(entry.event, f.name), str) and "\nbackend " in value)
        or (isinstance(value, AuxFiles) and not value.is_empty)
    ]
    assert carrying == []
