"""``StartupHeap``: no full collection while an iteration starts, the collector as it was afterwards, nothing left
frozen (virtual time; the thresholds are the collector's, per process)."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator

import pytest

from haptic.controller.events import DeploymentCompleted, LeaderObserved, ReconciliationFailed
from haptic.controller.loop.startup_heap import STARTUP_WINDOW, StartupHeap
from haptic.core import Event, EventBus, SequentialIds, VirtualClock

pytestmark = pytest.mark.looptime


@pytest.fixture(autouse=True)
def collector() -> Iterator[tuple[int, int, int]]:
    before = gc.get_threshold()
    yield before
    gc.set_threshold(*before)


def heap() -> StartupHeap:
    return StartupHeap(EventBus(VirtualClock(), SequentialIds()), VirtualClock())


async def test_a_deployment_ends_the_hold(collector: tuple[int, int, int]) -> None:
    h = heap()
    h.hold()
    young, middle, oldest = gc.get_threshold()
    assert (young, middle) == collector[:2] and oldest > 1_000_000  # young generations still collected
    await h.handle(DeploymentCompleted(total=2, succeeded=2, failed=0))
    assert not h.holding and gc.get_threshold() == collector and gc.get_freeze_count() == 0


async def test_a_cycle_made_after_the_startup_is_collected() -> None:
    h = heap()
    h.hold()
    h.release()
    cycle: list[object] = []
    cycle.append(cycle)
    del cycle
    assert gc.collect() >= 1  # nothing frozen keeps it


@pytest.mark.parametrize("event", [ReconciliationFailed(error="x", phase="validate"),
                                   LeaderObserved(leader_identity="other", is_self=False)])
async def test_a_failed_first_reconciliation_or_another_leader_ends_it(event: Event,
                                                                       collector: tuple[int, int, int]) -> None:
    h = heap()
    h.hold()
    await h.handle(LeaderObserved(leader_identity="me", is_self=True))  # this replica leads: it deploys next
    assert h.holding and gc.get_threshold() != collector
    await h.handle(event)
    assert not h.holding and gc.get_threshold() == collector


async def test_the_window_bounds_a_startup_that_never_deploys(collector: tuple[int, int, int]) -> None:
    h = heap()
    h.hold()
    await asyncio.sleep(STARTUP_WINDOW - 1)
    assert h.holding
    await asyncio.sleep(2)
    assert not h.holding and gc.get_threshold() == collector


async def test_replicas_of_one_process_share_the_collector(collector: tuple[int, int, int]) -> None:
    first, second = heap(), heap()
    first.hold()
    second.hold()
    first.release()
    assert gc.get_threshold() != collector  # the second still starts
    second.release()
    assert gc.get_threshold() == collector


async def test_an_iteration_ended_during_its_startup_restores_the_collector(collector: tuple[int, int, int]) -> None:
    h = heap()
    h.hold()
    h.release()
    assert gc.get_threshold() == collector
    h.release()  # twice: nothing more
    assert gc.get_threshold() == collector
