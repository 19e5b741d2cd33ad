"""Debug server over HTTP on 127.0.0.1: requests/s and latency of /metrics and /debug/vars (prints figures).

One httpx client, sequential requests, a populated metrics registry and a ~100 KiB rendered config
in the vars (redaction scrubs every answer), as a controller under inspection would have.
"""

from __future__ import annotations

import asyncio
import statistics
import time

import httpx

from haptic.controller.metrics import BuildInfo, ControllerMetrics
from haptic.controller.observe.debug_providers import DebugProviders
from haptic.controller.observe.event_ring import EventRing
from haptic.live.debug_server import DebugServer

N = 300


async def _main() -> None:
    metrics = ControllerMetrics(BuildInfo("bench", "2.6"))
    for i in range(200):
        metrics.record_reconciliation(i / 100)
        metrics.record_event_published(f"type.{i % 40}")
    ring = EventRing()
    for i in range(1000):
        ring.add(f"t{i}", "reconciliation.triggered", f"#{i}", {"n": i}, f"c{i % 10}")
    rendered = "\n".join(f"backend b{i}\n  server s{i} 10.0.{i // 250}.{i % 250}:80" for i in range(3000))
    providers = DebugProviders(
        vars={"rendered": lambda: {"config": rendered}, "config": lambda: {"version": "1", "password": "x" * 16}},
        events=ring.last,
        metrics=lambda: metrics.registry,
        secrets=lambda: ["s3cr3t-value"],
    )
    server = DebugServer(providers)
    await server.start()
    try:
        async with httpx.AsyncClient(base_url=server.url) as client:
            for path in ("/healthz", "/metrics", "/debug/vars/rendered", "/debug/events?limit=100"):
                latencies = []
                size = 0
                for _ in range(N):
                    started = time.perf_counter()
                    r = await client.get(path)
                    latencies.append(time.perf_counter() - started)
                    size = len(r.content)
                latencies.sort()
                total = sum(latencies)
                print(f"  {path:26s} {N / total:7.0f} req/s  p50 {statistics.median(latencies) * 1000:6.2f} ms"
                      f"  p99 {latencies[int(N * 0.99) - 1] * 1000:6.2f} ms  ({size} bytes)")
    finally:
        await server.stop()


if __name__ == "__main__":
    asyncio.run(_main())
