"""``HttpStore``: what ``http.fetch`` returns, per URL, as two versions.

*accepted* is content a render that validated used; *pending* is newer content fetched since, not
yet proven. A proposal render (``view(proposal=True)``) sees pending content where there is some;
``promote`` makes it accepted once that render validated, ``reject`` drops it when it did not (the
accepted version stays, and because the conditional request carries the rejected answer's ETag, the
same rejected content is not proposed again). A first fetch is pending too: content is never used
for a deployment before a render with it validated.

A failed fetch changes nothing but ``error``: the last good content stays what templates read. A URL
with no content at all renders as ``""`` (non-critical) or fails the render (``critical``).

URLs no render asked for during ``idle`` seconds are evicted (the original: twice the drift interval).
Pure: the caller hands the httpx client and the clock; nothing here logs or publishes.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field

import httpx

from haptic.core import Clock
from haptic.httpstore.fetcher import Fetched, fetch
from haptic.templating.http_fetch import FetchRequest, Lookup, display_url


def checksum(content: str) -> str:
    return hashlib.sha256(content.encode()).hexdigest()[:16]


@dataclass
class Entry:
    request: FetchRequest
    accepted: str | None = None
    pending: str | None = None
    #: validators of the latest answer (accepted, pending or rejected): a 304 means "no newer content"
    etag: str = ""
    last_modified: str = ""
    error: str = ""
    next_refresh: float | None = None
    last_used: float = 0.0


@dataclass(frozen=True)
class Change:
    """Something that happened to one URL's content (the caller logs and publishes it)."""

    url: str
    kind: str  # "updated" (new pending content), "accepted", "rejected", "failed", "evicted"
    checksum: str = ""
    size: int = 0
    reason: str = ""


class StoreView:
    """The ``HttpSource`` of one render; remembers which URLs it served pending content for."""

    def __init__(self, store: HttpStore, *, proposal: bool, now: float) -> None:
        self._store = store
        self._proposal = proposal
        self._now = now
        self.used_pending: dict[str, str] = {}

    def lookup(self, request: FetchRequest) -> Lookup:
        entry = self._store.entries.get(request.url)
        if entry is None:
            return Lookup(pending=True)
        entry.last_used = self._now
        if entry.request != request:
            self._store.update_request(entry, request, self._now)
        if self._proposal and entry.pending is not None:
            self.used_pending[request.url] = entry.pending
            return Lookup(content=entry.pending)
        if entry.accepted is not None:
            return Lookup(content=entry.accepted)
        return Lookup(error=entry.error or "no content validated yet")


@dataclass
class HttpStore:
    client: httpx.AsyncClient
    clock: Clock
    entries: dict[str, Entry] = field(default_factory=dict)
    #: set whenever the refresh schedule changes (a new URL, another delay)
    schedule_changed: asyncio.Event = field(default_factory=asyncio.Event)

    def view(self, *, proposal: bool) -> StoreView:
        return StoreView(self, proposal=proposal, now=self.clock.monotonic())

    def lookup(self, request: FetchRequest) -> Lookup:
        """Accepted content only, never a fetch (webhook dry-runs): a URL not fetched yet has no content."""
        entry = self.entries.get(request.url)
        if entry is None:
            return Lookup(error="not fetched by the controller yet")
        if entry.accepted is not None:
            return Lookup(content=entry.accepted)
        return Lookup(error=entry.error or "no content validated yet")

    def secrets(self) -> tuple[str, ...]:
        """Every credential the store holds, for redaction."""
        return tuple(s for e in self.entries.values() if e.request.auth is not None for s in e.request.auth.secrets())

    def update_request(self, entry: Entry, request: FetchRequest, now: float) -> None:
        entry.request = request
        entry.next_refresh = now + request.options.delay if request.options.delay else None
        self.schedule_changed.set()

    async def fetch_missing(self, requests: Iterable[FetchRequest]) -> list[Change]:
        """First fetches (concurrently): content becomes pending; a failure leaves an entry with ``error``."""
        wanted = [r for r in requests if r.url not in self.entries]
        results = await asyncio.gather(*(fetch(self.client, r, self.clock) for r in wanted))
        now = self.clock.monotonic()
        changes = []
        for request, result in zip(wanted, results, strict=True):
            entry = Entry(request, last_used=now)
            self.entries[request.url] = entry
            entry.next_refresh = now + request.options.delay if request.options.delay else None
            change = self._apply(entry, result)
            if change.kind != "unchanged":
                changes.append(change)
        self.schedule_changed.set()
        return changes

    def _apply(self, entry: Entry, result: Fetched) -> Change:
        url = display_url(entry.request.url)
        if not result.ok:
            entry.error = result.error
            return Change(url, "failed", reason=result.error)
        entry.error = ""
        if result.not_modified or result.content is None:
            return Change(url, "unchanged")
        entry.etag, entry.last_modified = result.etag, result.last_modified
        content = result.content
        if content == entry.accepted:
            entry.pending = None
            return Change(url, "unchanged")
        if content == entry.pending:
            return Change(url, "unchanged")
        entry.pending = content
        return Change(url, "updated", checksum(content), len(content.encode()))

    def next_due(self) -> float | None:
        dues = [e.next_refresh for e in self.entries.values() if e.next_refresh is not None]
        return min(dues) if dues else None

    async def refresh_due(self) -> list[Change]:
        """Conditional re-fetches of every URL whose refresh is due."""
        now = self.clock.monotonic()
        due = [e for _, e in sorted(self.entries.items())
               if e.next_refresh is not None and e.next_refresh <= now]
        results = await asyncio.gather(*(fetch(self.client, e.request, self.clock, etag=e.etag,
                                               last_modified=e.last_modified) for e in due))
        after = self.clock.monotonic()
        changes = []
        for entry, result in zip(due, results, strict=True):
            delay = entry.request.options.delay
            entry.next_refresh = after + delay if delay else None
            change = self._apply(entry, result)
            if change.kind != "unchanged":
                changes.append(change)
        return changes

    def promote(self, used: dict[str, str]) -> list[Change]:
        """The pending versions a validated render used become accepted."""
        changes = []
        for url, content in sorted(used.items()):
            entry = self.entries.get(url)
            if entry is None or entry.pending != content:
                continue
            entry.accepted, entry.pending = content, None
            changes.append(Change(display_url(url), "accepted", checksum(content), len(content.encode())))
        return changes

    def reject(self, used: dict[str, str], reason: str) -> list[Change]:
        """Drops the pending versions a render that failed used; accepted content stays."""
        changes = []
        for url, content in sorted(used.items()):
            entry = self.entries.get(url)
            if entry is None or entry.pending != content:
                continue
            entry.pending = None
            changes.append(Change(display_url(url), "rejected", checksum(content), len(content.encode()), reason))
        return changes

    def evict_unused(self, idle: float) -> list[Change]:
        now = self.clock.monotonic()
        gone = sorted(url for url, e in self.entries.items() if now - e.last_used > idle)
        for url in gone:
            del self.entries[url]
        if gone:
            self.schedule_changed.set()
        return [Change(display_url(url), "evicted") for url in gone]

    def pending_urls(self) -> list[str]:
        return sorted(display_url(u) for u, e in self.entries.items() if e.pending is not None)

    def snapshot(self) -> dict[str, dict[str, object]]:
        """URL -> state, for debug output (no content, no credentials)."""
        return {
            display_url(url): {
                "accepted": checksum(e.accepted) if e.accepted is not None else None,
                "pending": checksum(e.pending) if e.pending is not None else None,
                "error": e.error, "delay_s": e.request.options.delay, "auth": repr(e.request.auth),
            }
            for url, e in sorted(self.entries.items())
        }


__all__ = ["Change", "Entry", "HttpStore", "StoreView", "checksum"]
