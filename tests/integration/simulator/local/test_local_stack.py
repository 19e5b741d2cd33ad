"""The local tier without the controller: HAProxy pods on their own loopback addresses, the fake API
over HTTP, echo backends and traffic; configs are rendered from the shipped ingress library and
pushed with the real synchronizer (tests/support/local_render.py)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from simulator.local import LocalStack, StackOptions, objects
from tests.support.local_render import render_and_sync

pytestmark = pytest.mark.haproxy
HOST = "web.local.test"


@pytest.fixture
async def stack(haproxy_bin: str, tmp_path: Path) -> AsyncIterator[LocalStack]:
    options = StackOptions(pods=2, haproxy_bin=haproxy_bin, workdir=tmp_path / "stack", start_controller=False,
                           reload_delay=0.05)
    async with LocalStack(options) as running:
        yield running


def app(stack: LocalStack, addresses: list[str]) -> dict[str, list[dict[str, object]]]:
    return {
        "ingresses": [objects.ingress("web", "demo", HOST, "web")],
        "services": [objects.service("web", "demo")],
        "endpoints": [objects.endpoint_slice("web", "demo", addresses, stack.echo_port)],
    }


async def test_traffic_reaches_echo_backends_through_each_pod(stack: LocalStack) -> None:
    echoes = [await stack.add_echo() for _ in range(2)]
    results = await render_and_sync(stack, app(stack, [e.host for e in echoes]))
    assert [r.ok for r in results] == [True, True], [r.errors for r in results]
    for index in range(2):
        report = await stack.probe(index, HOST, count=4)
        assert report.flowed, report.summary()
        assert report.servers == ["echo-1", "echo-2"]
    assert [e.hits for e in echoes] == [4, 4]
    unknown = await stack.probe(0, "nobody.test", count=1)
    assert unknown.statuses == {404: 1} and not unknown.flowed


async def test_pods_run_the_pushed_config_on_their_own_address(stack: LocalStack) -> None:
    echo = await stack.add_echo()
    await render_and_sync(stack, app(stack, [echo.host]))
    pod = stack.pods[1]
    assert f"bind *:{stack.http_port}" in pod.fake.raw()  # the API serves the config as pushed
    running = (pod.driver.workdir / "haproxy.cfg").read_text()
    assert f"bind {pod.ip}:{stack.http_port}" in running
    assert f"default-path origin {pod.driver.storage_root}" in running
    assert (Path(pod.storage.directory("maps")) / "path-prefix.map").read_text().strip().endswith("ing_demo_web_web_80")


async def test_scaling_endpoints_is_a_runtime_update_without_reload(stack: LocalStack) -> None:
    echoes = [await stack.add_echo() for _ in range(3)]
    await render_and_sync(stack, app(stack, [echoes[0].host]))
    reloads = [pod.counters()["reloads"] for pod in stack.pods]
    workers = [await pod.worker_pids() for pod in stack.pods]

    results = await render_and_sync(stack, app(stack, [e.host for e in echoes]))
    assert all(r.ok and not r.reload_triggered for r in results), [(r.mode, r.errors) for r in results]
    assert [pod.counters()["reloads"] for pod in stack.pods] == reloads
    assert [await pod.worker_pids() for pod in stack.pods] == workers
    assert all(pod.counters()["runtime_server_updates"] >= 2 for pod in stack.pods)
    report = await stack.probe(1, HOST, count=6)
    assert report.flowed and report.servers == ["echo-1", "echo-2", "echo-3"], report.summary()


async def kubectl(stack: LocalStack, kubectl_bin: str, *args: str) -> str:
    """kubectl as an asyncio subprocess: the fake API it talks to is served by this event loop."""
    process = await asyncio.create_subprocess_exec(
        kubectl_bin, "--request-timeout=10s", *args, env={**os.environ, "KUBECONFIG": str(stack.kubeconfig)},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await process.communicate()
    assert process.returncode == 0, err.decode()
    return out.decode()


async def test_kubectl_sees_the_stack_objects(stack: LocalStack, kubectl_bin: str) -> None:
    pods = await kubectl(stack, kubectl_bin, "get", "pods", "-n", "haptic", "--no-headers",
                         "-o", "custom-columns=NAME:.metadata.name,IP:.status.podIP")
    assert pods.split() == ["haproxy-0", stack.pods[0].ip, "haproxy-1", stack.pods[1].ip]
    config = await kubectl(stack, kubectl_bin, "get", "haproxytemplateconfigs", "-n", "haptic", "-o", "name")
    assert config.strip() == "haproxytemplateconfig.haproxy-haptic.org/haptic-config"


def alive(pid: int) -> bool:
    status = Path(f"/proc/{pid}/status")
    return status.exists() and "zombie" not in status.read_text().lower()


async def test_stop_leaves_no_haproxy_running(haproxy_bin: str, tmp_path: Path) -> None:
    stack = LocalStack(StackOptions(pods=1, haproxy_bin=haproxy_bin, workdir=tmp_path / "s", start_controller=False))
    await stack.start()
    master = stack.pods[0].driver.process
    assert master is not None
    workers = await stack.pods[0].worker_pids()
    await stack.stop()
    assert master.poll() is not None
    assert [pid for pid in workers if alive(pid)] == []
