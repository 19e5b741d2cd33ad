"""HTTP content in reconciliation: the proposal gate around a render, and the refresh timer.

``HttpContentGate.render`` runs one render-and-validate attempt with the store's proposal view: URLs
the render asked for and the store lacks are fetched and the render repeated; pending content the
render used is promoted when the result validates. When it does not (or the render fails), the
attempt is repeated with accepted content only: if that validates, the pending content was the
culprit and is rejected (``http.resource.rejected``), otherwise it stays pending and the failure
stands as any other.

``HttpContentRefresher`` (leader-only) re-fetches URLs whose ``delay`` is due, triggers a
reconciliation when some content changed, and evicts URLs no render asked for in twice the drift
prevention interval. A failed refresh keeps the last good content (logged, ``http.resource.rejected``).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import replace

from haptic.controller.component import IterationComponent
from haptic.controller.context import IterationContext
from haptic.controller.events import (
    HttpResourceAccepted,
    HttpResourceRejected,
    HttpResourceUpdated,
    ReconciliationTriggered,
    TriggerReason,
)
from haptic.core import Event, EventBus
from haptic.httpstore.store import Change, HttpStore
from haptic.templating.engine import RenderInputs, TemplateSet
from haptic.templating.errors import TemplateRenderError, TemplatingError
from haptic.templating.http_fetch import HttpFetchPending
from haptic.validation.render_check import CheckedRender

#: how many times one reconciliation fetches URLs a render asked for (a URL may depend on fetched content)
MAX_FETCH_ROUNDS = 4
DEFAULT_EVICT_AFTER = 120.0


_HTTP_NAME = re.compile(r"\bhttp\b")


def templates_use_http(templates: TemplateSet) -> bool:
    """Whether any template names ``http`` (the iteration builds a store only then)."""
    sources = [templates.haproxy_config.source, *templates.snippets.values()]
    sources += [t.source for group in (templates.maps, templates.files, templates.certificates) for t in group.values()]
    return any(_HTTP_NAME.search(source) for source in sources)


def change_event(change: Change) -> Event | None:
    if change.kind == "updated":
        return HttpResourceUpdated(url=change.url, content_checksum=change.checksum, content_size=change.size)
    if change.kind == "accepted":
        return HttpResourceAccepted(url=change.url, content_checksum=change.checksum, content_size=change.size)
    if change.kind in ("rejected", "failed"):
        return HttpResourceRejected(url=change.url, reason=change.reason, content_checksum=change.checksum)
    return None


class HttpContentGate:
    def __init__(self, store: HttpStore | None, report: Callable[[list[Change]], None]) -> None:
        self.store = store
        self._report = report

    def report_to(self, report: Callable[[list[Change]], None]) -> None:
        self._report = report

    async def render(self, inputs: RenderInputs,
                     attempt: Callable[[RenderInputs], Awaitable[CheckedRender]]) -> CheckedRender:
        store = self.store
        if store is None:
            return await attempt(inputs)
        for _ in range(MAX_FETCH_ROUNDS):
            view = store.view(proposal=True)
            try:
                checked = await attempt(replace(inputs, http=view))
            except HttpFetchPending as exc:
                self._report(await store.fetch_missing(exc.requests))
                continue
            except TemplatingError as exc:
                if not view.used_pending:
                    raise
                return await self._without_pending(inputs, attempt, view.used_pending, f"render failed: {exc}",
                                                   failure=exc)
            if not view.used_pending:
                return checked
            if checked.valid:
                self._report(store.promote(view.used_pending))
                return checked
            return await self._without_pending(inputs, attempt, view.used_pending,
                                               "the configuration rendered with it failed validation",
                                               failed=checked)
        raise TemplateRenderError(f"http.fetch: URLs still unfetched after {MAX_FETCH_ROUNDS} rounds")

    async def _without_pending(self, inputs: RenderInputs, attempt: Callable[[RenderInputs], Awaitable[CheckedRender]],
                               used: dict[str, str], reason: str, *, failed: CheckedRender | None = None,
                               failure: TemplatingError | None = None) -> CheckedRender:
        assert self.store is not None
        try:
            checked = await attempt(replace(inputs, http=self.store.view(proposal=False)))
        except TemplatingError:
            checked = None
        if checked is not None and checked.valid:
            self._report(self.store.reject(used, reason))
            return checked
        # Not proven to be the pending content's fault: it stays pending, the failure stands.
        if failure is not None:
            raise failure
        assert failed is not None
        return failed


class HttpContentRefresher(IterationComponent):
    name = "http-store"
    leader_only = True

    def __init__(self, bus: EventBus, ctx: IterationContext) -> None:
        super().__init__(bus, ctx)
        drift = ctx.spec.dataplane.drift_prevention_interval.total_seconds()
        self.evict_after = 2 * drift if drift > 0 else DEFAULT_EVICT_AFTER
        self.refreshing = False

    async def on_start(self) -> None:
        if self.ctx.http is not None:
            self.spawn(self._loop(self.ctx.http), "refresh")

    def report(self, changes: list[Change]) -> None:
        for change in changes:
            if change.kind == "failed":
                self.logger.warning("http.fetch %s failed, keeping its last good content: %s", change.url,
                                    change.reason)
            elif change.kind == "rejected":
                self.logger.warning("http.fetch %s: new content %s rejected (%s); keeping the accepted content",
                                    change.url, change.checksum, change.reason)
            elif change.kind in ("updated", "accepted"):
                self.logger.info("http.fetch %s: content %s %s (%d bytes)", change.url, change.checksum,
                                 change.kind, change.size)
            event = change_event(change)
            if event is not None:
                self.publish(event)

    async def _loop(self, store: HttpStore) -> None:
        next_eviction = self.clock.monotonic() + self.evict_after
        while True:
            store.schedule_changed.clear()
            due = store.next_due()
            wake = next_eviction if due is None else min(due, next_eviction)
            delay = max(0.0, wake - self.clock.monotonic())
            try:
                async with self.clock.timeout(delay):
                    await store.schedule_changed.wait()
                continue
            except TimeoutError:
                pass
            now = self.clock.monotonic()
            if now >= next_eviction:
                self.report(store.evict_unused(self.evict_after))
                next_eviction = now + self.evict_after
            if due is not None and due <= now:
                self.refreshing = True
                try:
                    changes = await store.refresh_due()
                finally:
                    self.refreshing = False
                self.report(changes)
                if any(c.kind == "updated" for c in changes):
                    self.publish(ReconciliationTriggered(reason=TriggerReason.HTTP_CONTENT_CHANGED))
