"""The ``cluster`` backend against a running local stack taken as "the cluster": its fake API over HTTP
(through the official client), its real haproxy pods' Dataplane APIs, its controller subprocess's debug
server. The promoted scenarios (those that opt in to ``local``) run one after the other against the
same installation, as on a real cluster: each replaces the installation's config and leaves it as it
found it. Steps a real cluster cannot perform are not applicable, with their reason."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import os
from collections.abc import AsyncIterator

import pytest

from haptic.k8s.api import NotFound
from simulator.local.stack import LocalStack, StackOptions
from simulator.scenario.cluster_access import ClusterOptions
from simulator.scenario.cluster_backend import ClusterBackend, ClusterFactory
from simulator.scenario.loader import ScenarioCell, load_cells
from simulator.scenario.pytest_plugin import default_backends
from simulator.scenario.runner import CellResult, run_cell
from tests.support.paths import REPO

pytestmark = pytest.mark.haproxy
NAMESPACE, CONFIG = "haptic-system", "haptic-config"


#: a fast selection of the promoted scenarios (tests/e2e runs every promoted one on Kind)
SELECTED = ("basics/first-deployment", "basics/add-ingress", "scaling/within-slots-runtime-only",
            "faults/dataplane-5xx", "ha/leader-failover", "config/credentials-rotation",
            "config/webhook-rejects-hostile-ingress", "config/invalid-render-keeps-last-good")


def promoted() -> list[ScenarioCell]:
    """The selection, or every promoted scenario with ``HAPTIC_CLUSTER_PROMOTED=all`` (make test-cluster-local)."""
    if os.environ.get("HAPTIC_CLUSTER_PROMOTED") == "all":
        every = [c for path in sorted((REPO / "scenarios").rglob("*.yaml")) for c in _cells(path)]
        return [c for c in every if "local" in default_backends(c)]
    cells = [c for name in SELECTED for c in _cells(REPO / "scenarios" / f"{name}.yaml")
             if "size=" not in c.id or c.id.endswith("[size=9]")]  # one matrix cell is enough here
    assert all("local" in default_backends(c) for c in cells)  # still promoted
    return cells


def _cells(path: object) -> list[ScenarioCell]:
    from pathlib import Path

    p = Path(str(path))
    if p.parent.name in ("objects", "configs", "golden", "files") or p.name == "scenario.schema.json":
        return []
    try:
        return load_cells(p, root=REPO)
    except Exception:  # data files and schema aside, a broken scenario fails its own sim test
        return []


@pytest.fixture
async def stack(haproxy_bin: str) -> AsyncIterator[LocalStack]:
    options = StackOptions(pods=2, replicas=1, haproxy_bin=haproxy_bin, namespace=NAMESPACE, config_name=CONFIG,
                           log_level="warning", webhook=True)
    async with LocalStack(options) as running:
        assert await running.settle(60.0), "the local installation did not come up"
        yield running


def options_for(stack: LocalStack) -> ClusterOptions:
    assert stack.kube_server is not None and stack.kubeconfig is not None
    return ClusterOptions(kubeconfig=str(stack.kubeconfig), namespace=NAMESPACE, config_name=CONFIG,
                          controller_urls=tuple(stack.debug_url(i) for i in range(len(stack.debug_ports))),
                          echo="local", dataplane="direct")


async def test_promoted_scenarios_pass_on_the_cluster_backend(stack: LocalStack) -> None:
    factory = ClusterFactory(options_for(stack))
    assert factory.unavailable_reason() is None
    rt = stack.kube.types.by_kind("haproxy-haptic.org/v1alpha1", "HAProxyTemplateConfig")
    assert rt is not None
    original = copy.deepcopy(stack.kube.get(rt, NAMESPACE, CONFIG)["spec"])  # as the API serves it (defaulted)
    results: dict[str, CellResult] = {}
    for cell in promoted():
        results[cell.id] = await run_cell(cell, factory.create(), "cluster")
    reports = "\n\n".join(r.report() for r in results.values() if r.status in ("failed", "error"))
    assert reports == ""
    passed = sorted(i for i, r in results.items() if r.status == "passed")
    assert {"first-deployment", "add-ingress", "webhook-rejects-hostile-ingress",
            "invalid-render-keeps-last-good"} <= set(passed)
    sizes = (3, 6, 9) if os.environ.get("HAPTIC_CLUSTER_PROMOTED") == "all" else (9,)
    assert [i for i in passed if i.startswith("within-slots-runtime-only")] == [
        f"within-slots-runtime-only[size={n}]" for n in sizes]
    unavailable = {i: r.message for i, r in results.items() if r.status == "unavailable"}
    assert "dataplane_5xx" in unavailable["dataplane-5xx"] and "fake Dataplane API" in unavailable["dataplane-5xx"]
    assert "2 controller replica(s)" in unavailable["leader-failover"]  # this installation runs one
    assert "credentials" in unavailable["credentials-rotation"]
    # the installation is left as it was found: its own config back, no scenario object left
    assert stack.kube.get(rt, NAMESPACE, CONFIG)["spec"] == original
    ingresses = stack.kube.types.by_kind("networking.k8s.io/v1", "Ingress")
    assert ingresses is not None and stack.kube.list(ingresses, None).items == []
    assert await stack.settle(60.0)


async def test_a_failing_expectation_fails_on_the_cluster_backend(stack: LocalStack) -> None:
    """The backend reads the real state: a config line that is not deployed is a failure, with a diff."""
    cell = next(c for c in promoted() if c.id == "add-ingress")
    steps = cell.scenario.steps
    expect = steps[2].expect.model_copy(update={"traffic": None, "events": None})  # type: ignore[attr-defined]
    wrong = expect.config.model_copy(update={"contains": ["server SRV_1 10.9.9.9:8080"]})
    steps[2] = steps[2].model_copy(update={"expect": expect.model_copy(update={"config": wrong})})
    backend = ClusterBackend(options_for(stack))
    result = await run_cell(cell, backend, "cluster")
    assert result.status == "failed", result.report()
    assert "10.9.9.9" in result.report() and "server SRV_1 10.2.0.1:8080" in result.report()
    await asyncio.sleep(0)


CONTROLLER_LABELS = {"app.kubernetes.io/name": "haptic-controller"}


async def kubelet(stack: LocalStack) -> None:
    """What a kubelet and the controller's Deployment do for the stack's controller processes: each runs
    as a Pod named after its identity; a deleted Pod's process is stopped (SIGTERM, then SIGKILL) and a
    replacement starts under the same name (a StatefulSet would keep names too)."""
    rt = stack.kube.types.by_kind("v1", "Pod")
    assert rt is not None

    def pod(index: int) -> dict[str, object]:
        return {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": f"haptic-controller-{index}", "namespace": NAMESPACE,
                             "labels": dict(CONTROLLER_LABELS)},
                "spec": {"containers": [{"name": "controller", "image": "haptic:local"}]},
                "status": {"phase": "Running", "podIP": "127.0.0.1"}}

    for index in range(len(stack.controllers)):
        stack.apply(pod(index))
    while True:
        await asyncio.sleep(0.1)
        for index in range(len(stack.controllers)):
            try:
                stack.kube.get(rt, NAMESPACE, f"haptic-controller-{index}")
            except NotFound:
                await stack.stop_controller(index)
                await stack.start_controller(index)
                stack.apply(pod(index))


@pytest.fixture
async def two_replicas(haproxy_bin: str) -> AsyncIterator[LocalStack]:
    options = StackOptions(pods=2, replicas=2, haproxy_bin=haproxy_bin, namespace=NAMESPACE, config_name=CONFIG,
                           log_level="warning", webhook=True)
    async with LocalStack(options) as running:
        assert await running.settle(60.0), "the local installation did not come up"
        task = asyncio.create_task(kubelet(running))
        try:
            yield running
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


async def test_leader_failover_deletes_the_leaders_pod(two_replicas: LocalStack) -> None:
    """On a cluster a leader loss is its Pod deleted; the follower takes over and keeps deploying."""
    cell = next(c for c in promoted() if c.id == "leader-failover")
    result = await run_cell(cell, ClusterBackend(options_for(two_replicas)), "cluster")
    assert result.status == "passed", result.report()
    killed = [line for line in result.trace_lines if '"replica.killed"' in line]
    # the leader (replica 0: the one that led once the scenario's config ran) lost its Pod
    assert len(killed) == 1 and '"replica":0' in killed[0]
    assert '"pod":"haptic-controller-0"' in killed[0] or '"pod":"haptic-controller-1"' in killed[0]
