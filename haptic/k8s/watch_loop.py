"""List-then-watch with resume, re-list on ``410 Gone`` and reconnect with backoff (shared by watchers).

The loop lists (paginated), hands the full list to ``on_list``, then watches strictly after the
list's resourceVersion and hands each change to ``on_event``. A watch that ends is resumed from the
last resourceVersion seen (bookmarks included); a 410 (as an error or an ``ERROR`` event) forces a
re-list; any other error waits with exponential backoff (1 s doubling to 30 s) on the injected clock.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from haptic.core import Clock
from haptic.k8s.api import JSON, ApiError, Gone, KubeAPI, ResourceRef, Selectors, WatchOptions

LIST_PAGE = 500
BACKOFF_INITIAL = 1.0
BACKOFF_MAX = 30.0
#: A watch ending sooner than this without delivering anything is treated like an error (no hot loop).
MIN_QUIET_WATCH = 1.0
#: How long after its backoff a retry counts as under way when nothing answers it (a quiet watch).
RECONNECT_GRACE = 1.0


@dataclass
class WatchState:
    """What a running ``list_and_watch`` is doing, for observers waiting for quiescence: ``retry_at``
    (the clock's monotonic time) while it waits to retry after an error, else None."""

    retry_at: float | None = None
    last_error: str = ""
    #: the backoff is over and the retry under way: until its first answer (a list, a watch event) or
    #: ``RECONNECT_GRACE`` later, what changed meanwhile may not have been seen yet
    reconnecting: bool = False

    @property
    def retrying(self) -> bool:
        return self.retry_at is not None or self.reconnecting


def resource_version_of(obj: JSON) -> str | None:
    metadata = obj.get("metadata")
    if isinstance(metadata, dict):
        rv = metadata.get("resourceVersion")
        return str(rv) if rv else None
    return None


async def list_all(
    kube: KubeAPI, ref: ResourceRef, namespace: str | None, selectors: Selectors
) -> tuple[list[JSON], str]:
    items: list[JSON] = []
    token: str | None = None
    while True:
        page = await kube.list(ref, namespace, selectors, limit=LIST_PAGE, continue_token=token)
        items.extend(page.items)
        token = page.continue_token
        if not token:
            return items, page.resource_version


async def list_and_watch(
    kube: KubeAPI,
    ref: ResourceRef,
    namespace: str | None,
    selectors: Selectors,
    clock: Clock,
    log: logging.Logger,
    on_list: Callable[[list[JSON]], Any],
    on_event: Callable[[str, JSON], Any],
    state: WatchState | None = None,
) -> None:
    """Runs until cancelled; ``state`` (when given) says while it waits to retry after an error."""
    rv: str | None = None
    backoff = BACKOFF_INITIAL
    state = state if state is not None else WatchState()
    grace: list[asyncio.TimerHandle] = []

    async def retry_later(error: str) -> None:
        nonlocal backoff
        state.retry_at, state.last_error = clock.monotonic() + backoff, error
        try:
            await clock.sleep(backoff)
        finally:
            state.retry_at = None
        state.reconnecting = True
        grace.append(clock.call_later(RECONNECT_GRACE, answered))
        backoff = min(backoff * 2, BACKOFF_MAX)

    def answered() -> None:
        state.reconnecting = False
        while grace:
            grace.pop().cancel()

    while True:
        try:
            if rv is None:
                items, rv = await list_all(kube, ref, namespace, selectors)
                on_list(items)
                answered()
            started = clock.monotonic()
            delivered = 0
            options = WatchOptions(resource_version=rv, allow_bookmarks=True, selectors=selectors)
            async for event in kube.watch(ref, namespace, options):
                answered()
                if event.type == "ERROR":
                    raise ApiError.from_status(event.object)
                new_rv = resource_version_of(event.object)
                if new_rv:
                    rv = new_rv
                if event.type == "BOOKMARK":
                    continue
                delivered += 1
                on_event(event.type, event.object)
            backoff = BACKOFF_INITIAL
            if not delivered and clock.monotonic() - started < MIN_QUIET_WATCH:
                await clock.sleep(MIN_QUIET_WATCH)
        except Gone:
            log.info("watch of %s: resourceVersion %s expired, re-listing", ref, rv)
            rv = None
        except ApiError as exc:
            log.warning("watch of %s failed (%s), retrying in %.0fs", ref, exc, backoff)
            await retry_later(str(exc))
        except (OSError, RuntimeError, ValueError) as exc:
            log.warning("watch of %s failed (%r), retrying in %.0fs", ref, exc, backoff)
            await retry_later(repr(exc))
