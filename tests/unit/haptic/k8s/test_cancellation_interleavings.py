"""Cancellation that lands while a task reaps a helper task must not be swallowed.

The leader-killed-mid-deployment finding: the scenario runner crash-killed the leader; the elector's
``_pause`` had just woken (its sleeper won) and was reaping the ``_wake.wait()`` loser with
``task.cancel(); suppress(CancelledError): await task`` when the kill's cancellation arrived. The
suppress ate it, the elector renewed on, and the replica stayed "cancelling" forever. These tests
replay exactly that interleaving: the loser's own cancellation handler cancels the outer task.
"""

from __future__ import annotations

import asyncio

import pytest

from haptic.core import Component, EventBus, SequentialIds, VirtualClock, cancel_and_wait
from haptic.k8s.leaderelection import ElectionConfig, LeaderElector
from simulator.kube import FakeKubeAPI, InProcessKubeClient

pytestmark = pytest.mark.looptime


class _CancelOuterWhenReaped(asyncio.Event):
    """An Event whose ``wait()``, when cancelled, cancels ``outer``: the kill lands during the reaping."""

    def __init__(self) -> None:
        super().__init__()
        self.outer: asyncio.Task[None] | None = None

    async def wait(self) -> bool:  # type: ignore[override]
        try:
            return await super().wait()
        except asyncio.CancelledError:
            if self.outer is not None:
                self.outer.cancel()
            raise


async def test_elector_pause_propagates_a_cancellation_arriving_while_it_reaps_the_waker() -> None:
    clock = VirtualClock()
    elector = LeaderElector(InProcessKubeClient(FakeKubeAPI(now=clock.now)),
                            ElectionConfig(lease_name="l", namespace="default", identity="a"), clock)
    wake = _CancelOuterWhenReaped()
    elector._wake = wake
    outcome: list[str] = []

    async def pause_then_go_on() -> None:
        await elector._pause(1.0)  # the sleeper wins after 1 s; the waker is reaped
        outcome.append("pause returned")  # what the swallowed cancellation allowed
        await asyncio.sleep(3600)

    task = asyncio.create_task(pause_then_go_on())
    wake.outer = task
    done, _ = await asyncio.wait({task}, timeout=10)
    assert done == {task}, "the task outlived its cancellation"
    assert task.cancelled()
    assert outcome == []


async def test_component_stop_propagates_its_own_cancellation() -> None:
    """``Component.stop()`` awaited from a task that is cancelled meanwhile ends that task too."""
    bus = EventBus(VirtualClock(), SequentialIds())
    outer: asyncio.Task[None] | None = None
    stopped_on: list[str] = []

    class Slow(Component):
        name = "slow"

        async def on_stop(self) -> None:
            assert outer is not None
            outer.cancel()  # the kill arrives while the owner waits for this component to end
            stopped_on.append("slow")

    component = Slow(bus)
    await component.start()
    after_stop: list[str] = []

    async def owner() -> None:
        await component.stop()
        after_stop.append("went on")
        await asyncio.sleep(3600)

    outer = asyncio.create_task(owner())
    done, _ = await asyncio.wait({outer}, timeout=10)
    assert stopped_on == ["slow"]
    assert done == {outer} and outer.cancelled()
    assert after_stop == []


async def test_cancel_and_wait_absorbs_only_the_cancelled_tasks_own_cancellation() -> None:
    child = asyncio.create_task(asyncio.sleep(3600))
    await cancel_and_wait(child)  # our own task was not cancelled: returns normally
    assert child.cancelled()

    async def failing_on_cancel() -> None:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            raise ValueError("boom") from None

    failed = asyncio.create_task(failing_on_cancel())
    await asyncio.sleep(0)
    with pytest.raises(ValueError, match="boom"):
        await cancel_and_wait(failed)
