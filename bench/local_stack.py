"""The local tier, wall clock: how long the stack takes to start, the controller to serve its first
Ingress, an EndpointSlice change to reach traffic (runtime update, no reload), and a new Ingress to be
served while the controller runs (render, haproxy -c, a push with its reload). Prints figures.

The traffic probes run in worker processes (one per pod, each its own event loop, requests every 10 ms):
in this process they would share one event loop with what is measured — the fake Dataplane APIs, the
fake kube API and the echo backends — and their polling delayed the very requests whose effect they wait
for. A worker stamps the moment both its pod's answers match with ``time.perf_counter`` (the system-wide
monotonic clock), so the figure is change → traffic moved, nothing subtracted."""

from __future__ import annotations

import asyncio
import multiprocessing
import statistics
import sys
import time
from concurrent.futures import Executor, ProcessPoolExecutor

from simulator.local import LocalStack, StackOptions, objects

HOST = "bench.local"
ROUNDS = 12
NEW_INGRESSES = 5


async def _served_by(address: str, host: str) -> str | None:
    """One request through haproxy (a fresh connection): the echo backend that answered 200, else None.
    Raw HTTP/1.1 on a socket: an HTTP client per probe every 10 ms costs more CPU than what is measured."""
    hostname, _, port = address.rpartition(":")
    try:
        reader, writer = await asyncio.open_connection(hostname, int(port or 80))
    except OSError:
        return None
    try:
        writer.write(f"GET / HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
        head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").lower().split("\r\n")
    except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
        return None
    finally:
        writer.close()
    if not head[0].startswith("http/1.1 200"):
        return None
    return next((line.split(":", 1)[1].strip() for line in head if line.startswith("x-echo-server:")), None)


def _converged_at(address: str, host: str, names: list[str], within: float) -> float | None:
    """In a worker process: probes ``address`` every 10 ms until it routes to exactly ``names`` (2 requests
    per name, each answered by one of them, each of them seen); the ``perf_counter`` of that, None on timeout."""

    async def run() -> float | None:
        deadline = time.perf_counter() + within
        while time.perf_counter() < deadline:
            seen = [await _served_by(address, host) for _ in range(len(names) * 2)]
            served = {name for name in seen if name is not None}
            if len(served) == len(set(seen)) and sorted(served) == sorted(names):
                return time.perf_counter()
            await asyncio.sleep(0.01)
        return None

    return asyncio.run(run())


async def until(stack: LocalStack, probes: Executor, names: list[str], host: str = HOST,
                within: float = 60.0) -> float:
    """When both pods route to exactly ``names`` (the later of the two, ``perf_counter``)."""
    loop = asyncio.get_running_loop()
    done = await asyncio.gather(*(loop.run_in_executor(probes, _converged_at, stack.pod_address(index), host, names,
                                                       within) for index in range(len(stack.pods))))
    if any(at is None for at in done):
        sys.exit(f"bench: traffic for {host} did not converge to {names} within {within} s")
    return max(at for at in done if at is not None)


async def main() -> None:
    probes = ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn"))
    for warm in [probes.submit(time.sleep, 0.5) for _ in range(2)]:
        warm.result()  # both workers are up before anything is timed
    t0 = time.perf_counter()
    stack = LocalStack(StackOptions(pods=2, start_controller=False, reload_delay=0.2))
    async with stack:
        t_stack = time.perf_counter() - t0
        echoes = [await stack.add_echo() for _ in range(3)]
        stack.apply(objects.namespace("bench"))
        stack.apply(objects.service("web", "bench"))
        stack.set_endpoints("web", "bench", echoes[:1])
        stack.apply(objects.ingress("web", "bench", HOST, "web"))
        t1 = time.perf_counter()
        await stack.start_controller()
        t_first = await until(stack, probes, [echoes[0].name]) - t1
        reloads = [p.counters()["reloads"] for p in stack.pods]
        scale = []
        for round_ in range(ROUNDS):
            # spaced beyond minDeploymentInterval (2 s), which deliberately holds back a deployment right after one
            await asyncio.sleep(2.2)
            chosen = echoes[: 1 + (round_ + 1) % 3]
            t2 = time.perf_counter()
            stack.set_endpoints("web", "bench", chosen)
            scale.append(await until(stack, probes, [e.name for e in chosen]) - t2)
        extra_reloads = sum(p.counters()["reloads"] for p in stack.pods) - sum(reloads)
        served = []
        for round_ in range(NEW_INGRESSES):
            await asyncio.sleep(2.2)
            host = f"new-{round_}.bench.local"
            t3 = time.perf_counter()
            stack.apply(objects.ingress(f"new-{round_}", "bench", host, "web"))
            served.append(await until(stack, probes, [e.name for e in chosen], host=host) - t3)
    probes.shutdown()
    print(f"local stack start (fake API + 2 haproxy pods): {t_stack * 1000:.0f} ms")
    print(f"controller start -> Ingress traffic on both pods: {t_first:.2f} s (process start, sync, leader, "
          "render, haproxy -c, first push with reload)")
    print(f"EndpointSlice change -> traffic on both pods: median {statistics.median(scale) * 1000:.0f} ms, "
          f"max {max(scale) * 1000:.0f} ms over {ROUNDS} changes 2.2 s apart (target median < 100 ms, max < 250 ms); "
          f"reloads during scaling: {extra_reloads}")
    print(f"new Ingress -> served on both pods: median {statistics.median(served) * 1000:.0f} ms, "
          f"max {max(served) * 1000:.0f} ms over {NEW_INGRESSES} Ingresses 2.2 s apart (target < 1 s; render, "
          "haproxy -c, push, the fake Dataplane API's reload_delay 0.2 s, reload)")


if __name__ == "__main__":
    asyncio.run(main())
