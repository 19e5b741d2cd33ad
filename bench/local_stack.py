"""The local tier, wall clock: how long the stack takes to start, the controller to serve its first
Ingress, an EndpointSlice change to reach traffic (runtime update, no reload), and a new Ingress to be
served while the controller runs (render, haproxy -c, a push with its reload). Prints figures."""

from __future__ import annotations

import asyncio
import statistics
import sys
import time

from simulator.local import LocalStack, StackOptions, TrafficReport, objects
from simulator.local.traffic import wait_for_traffic

HOST = "bench.local"
ROUNDS = 12
NEW_INGRESSES = 5


async def until(stack: LocalStack, names: list[str], within: float = 60.0, host: str = HOST) -> float:
    """Seconds until both pods route to exactly ``names``: both probed at once, every 10 ms (the
    stack's own 250 ms probe interval would be most of what is measured)."""
    started = time.perf_counter()

    def accept(report: TrafficReport) -> bool:
        return report.flowed and report.servers == sorted(names)

    reports = await asyncio.gather(*(
        wait_for_traffic(stack.pod_address(index), host, accept, count=len(names) * 2, within=within, interval=0.01)
        for index in range(len(stack.pods))))
    for report in reports:
        if not accept(report):
            sys.exit(f"bench: traffic did not converge: {report.summary()}")
    return time.perf_counter() - started


async def main() -> None:
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
        await until(stack, [echoes[0].name])
        t_first = time.perf_counter() - t1
        reloads = [p.counters()["reloads"] for p in stack.pods]
        scale = []
        for round_ in range(ROUNDS):
            # spaced beyond minDeploymentInterval (2 s), which deliberately holds back a deployment right after one
            await asyncio.sleep(2.2)
            chosen = echoes[: 1 + (round_ + 1) % 3]
            t2 = time.perf_counter()
            stack.set_endpoints("web", "bench", chosen)
            await until(stack, [e.name for e in chosen])
            scale.append(time.perf_counter() - t2)
        extra_reloads = sum(p.counters()["reloads"] for p in stack.pods) - sum(reloads)
        served = []
        for round_ in range(NEW_INGRESSES):
            await asyncio.sleep(2.2)
            host = f"new-{round_}.bench.local"
            t3 = time.perf_counter()
            stack.apply(objects.ingress(f"new-{round_}", "bench", host, "web"))
            await until(stack, [e.name for e in chosen], host=host)
            served.append(time.perf_counter() - t3)
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
