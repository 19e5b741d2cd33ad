"""Renders off the event loop: the loop keeps running, a hard deadline gives a stuck render up, the inputs
are snapshots the watchers cannot change underneath."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from haptic.k8s.store import ResourceStore
from haptic.templating.engine import RenderInputs, TemplateEngine, TemplateFile, TemplateSet
from haptic.templating.errors import RenderTimeout
from haptic.validation.render_runner import InlineRenderRunner, ThreadRenderRunner, snapshot_inputs

TEMPLATE = "{% for o in resources.things.list() %}{{ o.metadata.name }} {% endfor %}"


def thing(name: str) -> dict[str, Any]:
    return {"kind": "Thing", "metadata": {"namespace": "ns", "name": name}}


class GatedStore:
    """A store whose ``list()`` blocks its thread until ``gate`` opens (a render stuck outside the sandbox)."""

    def __init__(self, gate: threading.Event, objects: list[dict[str, Any]]) -> None:
        self.gate = gate
        self.objects = objects
        self.entered = threading.Event()

    def list(self) -> list[dict[str, Any]]:
        self.entered.set()
        self.gate.wait(30)
        return list(self.objects)

    def fetch(self, *keys: str) -> list[dict[str, Any]]:
        return self.list()

    def get_single(self, *keys: str) -> Any:
        return None

    def __len__(self) -> int:
        return len(self.objects)


def engine(source: str = TEMPLATE, timeout: float | None = 30.0) -> TemplateEngine:
    return TemplateEngine(TemplateSet(TemplateFile(source)), render_timeout=timeout)


def test_the_loop_keeps_running_while_a_render_works() -> None:
    # The render waits for the loop: on the loop's own thread it could never finish.
    gate = threading.Event()
    store = GatedStore(gate, [thing("a"), thing("b")])

    async def main() -> tuple[str, int]:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            await asyncio.to_thread(store.entered.wait, 10)
            while ticks < 50:
                ticks += 1
                await asyncio.sleep(0)
            gate.set()

        tick_task = asyncio.create_task(ticker())
        result = await asyncio.wait_for(ThreadRenderRunner().render(engine(), RenderInputs(stores={"things": store})),
                                        10)
        await tick_task
        return result.config, ticks

    config, ticks = asyncio.run(main())
    assert config == "a b "
    assert ticks == 50


def test_a_stuck_render_is_given_up_at_the_deadline_and_blocks_the_next_until_it_returns() -> None:
    gate = threading.Event()
    store = GatedStore(gate, [thing("a")])
    runner = ThreadRenderRunner(deadline=0.05)
    inputs = RenderInputs(stores={"things": store})

    async def main() -> None:
        with pytest.raises(RenderTimeout, match=r"did not finish within 0\.05s; given up \(the last good"):
            await runner.render(engine(), inputs)
        assert runner.abandoned == 1
        with pytest.raises(RenderTimeout, match="still running"):
            await runner.render(engine(), inputs)
        gate.set()
        for _ in range(1000):  # the stuck thread returns; then renders start again
            try:
                result = await runner.render(engine(), inputs)
                break
            except RenderTimeout:
                await asyncio.sleep(0.01)
        assert result.config == "a "

    asyncio.run(main())
    gate.set()


def test_a_looping_template_is_stopped_by_the_engine_timeout_in_the_worker() -> None:
    looping = "{% for i in range(100000) %}{% for j in range(100000) %}{{ '' }}{% endfor %}{% endfor %}"

    async def main() -> None:
        with pytest.raises(RenderTimeout, match="render timeout exceeded"):
            await ThreadRenderRunner(grace=30).render(engine(looping, timeout=0.05), RenderInputs())

    asyncio.run(main())


def test_concurrent_renders_take_turns() -> None:
    runner = ThreadRenderRunner()
    store = ResourceStore("things", ["metadata.namespace", "metadata.name"])
    store.apply(thing("a"))
    shared = engine()

    async def main() -> list[str]:
        results = await asyncio.gather(*(runner.render(shared, RenderInputs(stores={"things": store}))
                                         for _ in range(4)))
        return [r.config for r in results]

    assert asyncio.run(main()) == ["a "] * 4


def test_inline_runner_renders_on_the_callers_thread() -> None:
    seen: list[str] = []

    class Recording(GatedStore):
        def list(self) -> list[dict[str, Any]]:
            seen.append(threading.current_thread().name)
            return list(self.objects)

    store = Recording(threading.Event(), [thing("x")])
    result = asyncio.run(InlineRenderRunner().render(engine(), RenderInputs(stores={"things": store})))
    assert result.config == "x " and seen == [threading.main_thread().name]


def test_snapshots_do_not_see_later_writes() -> None:
    store = ResourceStore("things", ["metadata.namespace", "metadata.name"])
    store.apply(thing("a"))
    store.apply(thing("b"))
    store.list()  # warm the sorted cache the snapshot shares
    snap = snapshot_inputs(RenderInputs(stores={"things": store})).stores["things"]
    store.apply(thing("c"))
    store.remove(thing("a"))
    assert [o["metadata"]["name"] for o in snap.list()] == ["a", "b"]
    assert [o["metadata"]["name"] for o in snap.fetch("ns")] == ["a", "b"]
    assert snap.get_single("ns", "c") is None
    assert [o["metadata"]["name"] for o in store.list()] == ["b", "c"]


def test_an_overlay_snapshot_keeps_the_proposed_change_over_a_frozen_base() -> None:
    from haptic.k8s.store_overlay import OverlayStore

    base = ResourceStore("things", ["metadata.namespace", "metadata.name"])
    base.apply(thing("a"))
    snap = OverlayStore(base, put=thing("p")).snapshot()
    base.apply(thing("later"))
    assert [o["metadata"]["name"] for o in snap.list()] == ["a", "p"]
    assert snap.proposed is not None and snap.base is not base
