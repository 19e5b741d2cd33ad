"""``WatchState.retrying`` covers a retry until its first answer, not just the backoff before it."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest

from haptic.core import VirtualClock
from haptic.k8s.api import ApiError, ObjectList, ResourceRef, Selectors, WatchEvent
from haptic.k8s.watch_loop import RECONNECT_GRACE, WatchState, list_and_watch

pytestmark = pytest.mark.looptime

REF = ResourceRef("v1", "services", True, "Service")


class SlowAfterOutage:
    """The first list fails; the second answers after 0.3 s; the watch then stays quiet."""

    def __init__(self, clock: VirtualClock) -> None:
        self.clock = clock
        self.lists = 0

    async def list(self, ref: ResourceRef, namespace: str | None = None, selectors: Selectors | None = None,
                   limit: int | None = None, continue_token: str | None = None) -> ObjectList:
        self.lists += 1
        if self.lists == 1:
            raise ApiError(503, "ServiceUnavailable", "outage")
        await self.clock.sleep(0.3)
        return ObjectList([], "7")

    async def watch(self, ref: ResourceRef, namespace: str | None = None,
                    options: Any = None) -> AsyncIterator[WatchEvent]:
        await asyncio.Event().wait()
        yield WatchEvent("ADDED", {})  # never reached


async def test_a_retry_counts_as_retrying_until_its_list_answered() -> None:
    clock = VirtualClock()
    state = WatchState()
    listed: list[int] = []
    task = asyncio.create_task(list_and_watch(SlowAfterOutage(clock), REF, None, Selectors(), clock,  # type: ignore[arg-type]
                                              logging.getLogger("test"), lambda items: listed.append(len(items)),
                                              lambda kind, obj: None, state))
    try:
        await clock.sleep(0.5)
        assert state.retry_at == 1.0 and state.retrying
        await clock.sleep(0.7)  # t=1.2: the backoff is over, the list is in flight
        assert state.retry_at is None and state.retrying and listed == []
        await clock.sleep(0.2)  # t=1.4: answered
        assert listed == [0] and not state.retrying
    finally:
        task.cancel()


async def test_an_unanswered_retry_stops_counting_after_the_grace() -> None:
    clock = VirtualClock()
    state = WatchState()

    class NeverAnswers(SlowAfterOutage):
        async def list(self, *args: Any, **kwargs: Any) -> ObjectList:
            self.lists += 1
            if self.lists == 1:
                raise ApiError(503, "ServiceUnavailable", "outage")
            await asyncio.Event().wait()
            raise AssertionError

    task = asyncio.create_task(list_and_watch(NeverAnswers(clock), REF, None, Selectors(), clock,  # type: ignore[arg-type]
                                              logging.getLogger("test"), lambda items: None, lambda k, o: None, state))
    try:
        await clock.sleep(1.0 + RECONNECT_GRACE / 2)
        assert state.retrying
        await clock.sleep(RECONNECT_GRACE)
        assert not state.retrying
    finally:
        task.cancel()
