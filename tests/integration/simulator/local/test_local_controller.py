"""The local tier with the real controller: two `haptic run` replicas (leader election over the fake
API's Lease), published HAProxyCfg, metrics, and a leader stopping while the backends scale."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from haptic import commands as haptic_commands
from simulator.local import LocalStack, StackOptions, TrafficReport, objects
from simulator.local.events import events_from_log

pytestmark = pytest.mark.haproxy
HOST = "ha.local.test"


@pytest.fixture
async def stack(haproxy_bin: str, tmp_path: Path) -> AsyncIterator[LocalStack]:
    if not (Path(haptic_commands.__file__).parent / "run.py").exists():
        pytest.skip("the controller's `haptic run` is not part of this build")
    options = StackOptions(pods=2, replicas=2, haproxy_bin=haproxy_bin, workdir=tmp_path / "stack",
                           reload_delay=0.05)
    async with LocalStack(options) as running:
        yield running


def served_by(*names: str) -> Callable[[TrafficReport], bool]:
    return lambda report: report.flowed and report.servers == sorted(names)


def leader(stack: LocalStack) -> int:
    rt = stack.kube.types.by_kind("coordination.k8s.io/v1", "Lease")
    assert rt is not None
    lease = stack.kube.get(rt, "haptic", "haptic-leader")
    holder = str(lease["spec"].get("holderIdentity") or "")
    assert holder.startswith("haptic-controller-"), lease["spec"]
    return int(holder.rsplit("-", 1)[1])


async def wait_all(stack: LocalStack, accept: Callable[[TrafficReport], bool],
                   within: float = 60.0) -> list[TrafficReport]:
    reports = [await stack.wait_for_traffic(i, HOST, accept, within=within) for i in range(len(stack.pods))]
    assert all(accept(r) for r in reports), [r.summary() for r in reports]
    return reports


async def test_replicas_deploy_publish_and_survive_a_leader_stop(stack: LocalStack) -> None:
    echoes = [await stack.add_echo() for _ in range(2)]
    stack.apply(objects.namespace("apps"))
    stack.apply(objects.service("web", "apps"))
    stack.set_endpoints("web", "apps", echoes[:1])
    stack.apply(objects.ingress("web", "apps", HOST, "web"))
    await wait_all(stack, served_by("echo-1"))

    assert await stack.settle(within=30)
    assert stack.out_of_sync() == []
    published = stack.published_config()
    assert published is not None and "backend ing_apps_web_web_80" in published
    assert stack.deployed_config(0) == stack.deployed_config(1)
    first = leader(stack)
    assert "haptic_" in await stack.metrics(first)

    leader_process = stack.controllers[first]
    assert leader_process is not None
    completed = [e for e in events_from_log(leader_process.lines) if e.type == "deployment.completed"]
    assert completed and completed[-1].fields["succeeded"] == "2" and completed[-1].fields["failed"] == "0"
    code = await stack.stop_controller(first)
    assert code == 0
    stack.set_endpoints("web", "apps", echoes)
    await wait_all(stack, served_by("echo-1", "echo-2"))
    assert leader(stack) == 1 - first
    assert all(pod.counters()["runtime_server_updates"] >= 1 for pod in stack.pods)


async def test_restarted_pod_starts_over(stack: LocalStack) -> None:
    echo = await stack.add_echo()
    stack.apply(objects.service("web", "default"))
    stack.set_endpoints("web", "default", [echo])
    stack.apply(objects.ingress("web", "default", HOST, "web"))
    await wait_all(stack, served_by("echo-1"))
    await stack.restart_pod(1)
    assert stack.pods[1].fake.version == 1
    assert "ing_default_web_web_80" not in stack.deployed_config(1)
    assert (await stack.probe(0, HOST, count=2)).flowed
    pod = stack.kube.get(stack.kube.types.resolve("v1", "pods"), "haptic", "haproxy-1")
    assert [c["restartCount"] for c in pod["status"]["containerStatuses"]] == [1, 1]
