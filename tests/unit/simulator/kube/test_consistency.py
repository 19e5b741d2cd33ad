"""Random write sequences: a watcher that replays events from a list's version always ends with exactly
the state a fresh list shows (per selector), and resourceVersions only grow."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest

from haptic.k8s.api import ApiError, ResourceRef, Selectors, WatchOptions
from simulator.kube import FakeKubeAPI, InProcessKubeClient

CM = ResourceRef("v1", "configmaps")


async def random_writes(kube: InProcessKubeClient, rng: random.Random, count: int) -> None:
    for _ in range(count):
        name = f"cm{rng.randrange(8)}"
        namespace = rng.choice(["default", "kube-system"])
        op = rng.random()
        try:
            if op < 0.35:
                labels = {"app": rng.choice(["a", "b"])} if rng.random() < 0.8 else {}
                await kube.create(CM, {"metadata": {"name": name, "labels": labels}}, namespace)
            elif op < 0.6:
                await kube.patch(CM, name, {"metadata": {"labels": {"app": rng.choice(["a", "b", None])}}},
                                 namespace=namespace)
            elif op < 0.75:
                await kube.patch(CM, name, {"data": {"v": str(rng.random())}}, namespace=namespace)
            elif op < 0.85:
                await kube.patch(CM, name, {"metadata": {"finalizers": rng.choice([["x/y"], None])}},
                                 namespace=namespace)
            else:
                await kube.delete(CM, name, namespace)
        except ApiError as err:
            assert err.code in (404, 409), err


@pytest.mark.looptime
@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("selector", [None, "app=a", "app!=a", "app"])
async def test_watch_replay_matches_list(seed: int, selector: str | None) -> None:
    rng = random.Random(seed)
    kube = InProcessKubeClient(FakeKubeAPI(seed=seed))
    await random_writes(kube, rng, 30)
    start = await kube.list(CM, None, Selectors(selector))
    state: dict[tuple[str, str], Any] = {(o["metadata"]["namespace"], o["metadata"]["name"]): o for o in start.items}
    options = WatchOptions(resource_version=start.resource_version, selectors=Selectors(selector),
                           allow_bookmarks=False, timeout_seconds=1)
    last = int(start.resource_version)
    seen = 0

    async def replay() -> None:
        nonlocal last, seen
        async for event in kube.watch(CM, None, options):
            meta = event.object["metadata"]
            rv = int(meta["resourceVersion"])
            assert rv > last
            last, seen = rv, seen + 1
            key = (meta["namespace"], meta["name"])
            if event.type == "DELETED":
                assert key in state
                del state[key]
            else:
                assert (key in state) == (event.type == "MODIFIED"), event
                state[key] = event.object

    consumer = asyncio.ensure_future(replay())
    await asyncio.sleep(0)
    await random_writes(kube, rng, 200)
    final = await kube.list(CM, None, Selectors(selector))
    await consumer
    assert seen > 0
    assert state == {(o["metadata"]["namespace"], o["metadata"]["name"]): o for o in final.items}
