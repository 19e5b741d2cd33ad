"""Prints throughput figures of the fake Kubernetes API (HTTP list, HTTP watch fan-out, in-process writes)."""

from __future__ import annotations

import asyncio
import gc
import http.client
import json
import time
from typing import Any

import aiohttp

from haptic.k8s.api import ResourceRef, WatchOptions
from simulator.kube import BackgroundServer, FakeKubeAPI, InProcessKubeClient

CM = ResourceRef("v1", "configmaps")


def configmap(i: int) -> dict[str, Any]:
    return {"metadata": {"name": f"cm-{i:05d}", "labels": {"app": "bench", "shard": str(i % 10)}},
            "data": {"key": f"value-{i}", "other": "x" * 32}}


def bench_http_list(count: int = 10_000) -> None:
    def fill() -> FakeKubeAPI:
        api = FakeKubeAPI()
        rt = api.resolve("v1", "configmaps")
        for i in range(count):
            api.create(rt, "default", configmap(i))
        return api

    with BackgroundServer(fill) as server:
        host, port = server.url.removeprefix("http://").split(":")
        for label in ("cold", "warm", "warm"):
            conn = http.client.HTTPConnection(host, int(port))
            start = time.perf_counter()
            conn.request("GET", "/api/v1/namespaces/default/configmaps")
            body = conn.getresponse().read()
            items = json.loads(body)["items"]
            elapsed = time.perf_counter() - start
            conn.close()
            assert len(items) == count
            print(f"http list {count} objects ({label}, incl. client JSON decode, {len(body) / 1e6:.1f} MB): "
                  f"{elapsed * 1000:.0f} ms")


async def _watcher(session: aiohttp.ClientSession, url: str, want: int, done: list[float]) -> None:
    got = 0
    async with session.get(url) as response:
        async for _line in response.content:
            got += 1
            if got == want:
                done.append(time.perf_counter())
                return


async def bench_http_watch(events: int = 10_000, watchers: int = 5) -> None:
    with BackgroundServer() as server:
        rv = server.call(lambda api: api.resource_version)
        url = f"{server.url}/api/v1/namespaces/default/configmaps?watch=true&resourceVersion={rv}"
        done: list[float] = []
        async with aiohttp.ClientSession() as session:
            tasks = [asyncio.create_task(_watcher(session, url, events, done)) for _ in range(watchers)]
            for _ in range(3000):
                if server.call(lambda api: api.watcher_count()) >= watchers:
                    break
                await asyncio.sleep(0.01)

            def write_batch(api: FakeKubeAPI, first: int, size: int) -> None:
                rt = api.resolve("v1", "configmaps")
                for i in range(first, first + size):
                    api.create(rt, "default", configmap(i))

            start = time.perf_counter()
            batch = 500
            for first in range(0, events, batch):
                await asyncio.to_thread(server.call, lambda api, f=first: write_batch(api, f, batch))
            await asyncio.gather(*tasks)
        elapsed = max(done) - start
        print(f"http watch: {events} events to {watchers} concurrent watchers (writes included): "
              f"{elapsed * 1000:.0f} ms")


async def bench_in_process(writes: int = 50_000, watchers: int = 3) -> None:
    api = FakeKubeAPI(history_limit=writes + 10)
    kube = InProcessKubeClient(api)
    rv = (await kube.list(CM)).resource_version

    async def consume() -> int:
        seen = 0
        async for _ in kube.watch(CM, None, WatchOptions(resource_version=rv)):
            seen += 1
            if seen == writes:
                return seen
        return seen

    tasks = [asyncio.create_task(consume()) for _ in range(watchers)]
    await asyncio.sleep(0)
    bodies = [configmap(i) for i in range(writes)]
    start, start_cpu = time.perf_counter(), time.process_time()
    for body in bodies:
        await kube.create(CM, body, "default")
    written, written_cpu = time.perf_counter(), time.process_time()
    counts = await asyncio.gather(*tasks)
    drained, drained_cpu = time.perf_counter(), time.process_time()
    assert counts == [writes] * watchers
    # CPU time is printed beside wall time: on a shared machine the wall clock includes other load.
    print(f"in-process: {writes} writes with {watchers} watchers: "
          f"{writes / (written - start):,.0f} writes/s wall ({writes / (written_cpu - start_cpu):,.0f} per CPU s) "
          f"for the writes; {writes / (drained - start):,.0f} writes/s wall "
          f"({writes / (drained_cpu - start_cpu):,.0f} per CPU s) including delivery to every watcher")


def main() -> None:
    bench_http_list()
    asyncio.run(bench_http_watch())
    print("-- default garbage-collector thresholds", gc.get_threshold())
    asyncio.run(bench_in_process())
    # Every write allocates a few dicts that live long (the store, the history, the watch queues), so the
    # cyclic collector's young-generation passes dominate; a larger first threshold is the usual tuning.
    gc.set_threshold(100_000, 20, 100)
    print("-- tuned garbage-collector thresholds", gc.get_threshold())
    asyncio.run(bench_in_process())


if __name__ == "__main__":
    main()
