"""HttpStore and its fetcher against an httpx.MockTransport server, on virtual time (looptime)."""

from __future__ import annotations

import httpx
import pytest

from haptic.core import VirtualClock
from haptic.httpstore.fetcher import fetch, make_client
from haptic.httpstore.store import HttpStore
from haptic.templating.http_fetch import FetchRequest

pytestmark = pytest.mark.looptime

URL = "http://lists.example/blocked.txt"


class Source:
    """A scripted HTTP server: content with an ETag, 304 on a matching If-None-Match, injectable failures."""

    def __init__(self, content: str = "10.0.0.0/8\n") -> None:
        self.content = content
        self.version = 1
        self.fail: list[int] = []  # statuses of the next answers
        self.requests: list[httpx.Request] = []

    def handler(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if self.fail:
            return httpx.Response(self.fail.pop(0))
        etag = f'"v{self.version}"'
        if request.headers.get("If-None-Match") == etag:
            return httpx.Response(304)
        return httpx.Response(200, text=self.content, headers={"ETag": etag})

    def change(self, content: str) -> None:
        self.content = content
        self.version += 1


def store_for(source: Source) -> HttpStore:
    return HttpStore(make_client(httpx.MockTransport(source.handler)), VirtualClock())


def request(**options: object) -> FetchRequest:
    return FetchRequest.parse(URL, options or None)


async def test_first_fetch_is_pending_until_promoted() -> None:
    source = Source()
    store = store_for(source)
    assert store.view(proposal=True).lookup(request()).pending
    changes = await store.fetch_missing([request()])
    assert [c.kind for c in changes] == ["updated"]
    proposal = store.view(proposal=True)
    assert proposal.lookup(request()).content == "10.0.0.0/8\n"
    # Not validated yet: a plain view has no content (and says why).
    assert store.view(proposal=False).lookup(request()).content is None
    assert [c.kind for c in store.promote(proposal.used_pending)] == ["accepted"]
    assert store.view(proposal=False).lookup(request()).content == "10.0.0.0/8\n"


async def test_refresh_sends_the_etag_and_a_304_changes_nothing() -> None:
    source = Source()
    store = store_for(source)
    await store.fetch_missing([request(delay="60s")])
    store.promote({URL: source.content})
    assert store.next_due() == pytest.approx(60.0)
    assert await store.refresh_due() == []  # not due yet: nothing fetched
    assert len(source.requests) == 1
    clock = store.clock
    await clock.sleep(60)
    assert await store.refresh_due() == []
    assert source.requests[-1].headers["If-None-Match"] == '"v1"'
    assert store.next_due() == pytest.approx(120.0)


async def test_failed_refresh_keeps_the_accepted_content() -> None:
    source = Source()
    store = store_for(source)
    await store.fetch_missing([request(delay="10s", retries=1)])
    store.promote({URL: source.content})
    source.change("192.168.0.0/16\n")
    source.fail = [503, 503]
    await store.clock.sleep(10)
    changes = await store.refresh_due()
    assert [(c.kind, c.reason) for c in changes] == [("failed", f"GET {URL}: HTTP 503 (after 2 attempts)")]
    assert store.view(proposal=True).lookup(request(delay="10s", retries=1)).content == "10.0.0.0/8\n"


async def test_rejected_content_is_not_proposed_again_but_newer_content_is() -> None:
    source = Source()
    store = store_for(source)
    await store.fetch_missing([request(delay="10s")])
    store.promote({URL: source.content})
    source.change("bad\n")
    await store.clock.sleep(10)
    assert [c.kind for c in await store.refresh_due()] == ["updated"]
    view = store.view(proposal=True)
    assert view.lookup(request(delay="10s")).content == "bad\n"
    assert [c.kind for c in store.reject(view.used_pending, "failed validation")] == ["rejected"]
    assert store.view(proposal=True).lookup(request(delay="10s")).content == "10.0.0.0/8\n"
    await store.clock.sleep(10)
    assert await store.refresh_due() == []  # the same (rejected) answer: 304
    source.change("good\n")
    await store.clock.sleep(10)
    assert [c.kind for c in await store.refresh_due()] == ["updated"]


async def test_retries_back_off_exponentially_on_the_clock() -> None:
    source = Source()
    source.fail = [500, 502, 503]
    clock = VirtualClock()
    async with make_client(httpx.MockTransport(source.handler)) as client:
        start = clock.monotonic()
        result = await fetch(client, request(retries=3), clock)
        assert result.content == "10.0.0.0/8\n"
        assert clock.monotonic() - start == pytest.approx(1 + 2 + 4)


async def test_a_client_error_is_not_retried() -> None:
    source = Source()
    source.fail = [404]
    async with make_client(httpx.MockTransport(source.handler)) as client:
        result = await fetch(client, request(retries=3), VirtualClock())
    assert result.error == f"GET {URL}: HTTP 404"
    assert len(source.requests) == 1


async def test_an_answer_larger_than_max_size_is_refused() -> None:
    source = Source("x" * 2000)
    async with make_client(httpx.MockTransport(source.handler)) as client:
        result = await fetch(client, request(maxSize=1000), VirtualClock())
    assert result.error == f"GET {URL}: the answer is larger than 1000 bytes"


async def test_auth_reaches_the_server_and_never_the_error() -> None:
    source = Source()
    source.fail = [401]
    basic = FetchRequest.parse(URL, None, {"type": "basic", "username": "u", "password": "s3cret-pw"})
    bearer = FetchRequest.parse(URL, None, {"type": "bearer", "token": "tok-123456"})
    header = FetchRequest.parse(URL, None, {"type": "header", "headers": {"X-Api-Key": "key-987654"}})
    async with make_client(httpx.MockTransport(source.handler)) as client:
        failed = await fetch(client, basic, VirtualClock())
        await fetch(client, bearer, VirtualClock())
        await fetch(client, header, VirtualClock())
    assert source.requests[0].headers["Authorization"].startswith("Basic ")
    assert source.requests[1].headers["Authorization"] == "Bearer tok-123456"
    assert source.requests[2].headers["X-Api-Key"] == "key-987654"
    assert "s3cret-pw" not in failed.error and "s3cret-pw" not in repr(basic)
    assert "tok-123456" not in repr(bearer) and "key-987654" not in repr(header)


async def test_a_slow_server_times_out_on_virtual_time() -> None:
    clock = VirtualClock()

    async def slow(request: httpx.Request) -> httpx.Response:
        await clock.sleep(100)
        return httpx.Response(200, text="late")

    async with make_client(httpx.MockTransport(slow)) as client:
        result = await fetch(client, request(timeout="5s", retries=0), clock)
    assert result.error == f"GET {URL}: no answer within 5s (after 1 attempts)"


async def test_unused_urls_are_evicted() -> None:
    store = store_for(Source())
    await store.fetch_missing([request()])
    await store.clock.sleep(50)
    store.view(proposal=False).lookup(request())  # used at t=50
    await store.clock.sleep(100)
    assert store.evict_unused(120.0) == []
    await store.clock.sleep(30)
    assert [c.kind for c in store.evict_unused(120.0)] == ["evicted"]
    assert store.entries == {}


async def test_the_store_itself_reads_accepted_content_only_and_never_asks_for_a_fetch() -> None:
    source = Source()
    store = store_for(source)
    assert store.lookup(request()).error == "not fetched by the controller yet"
    await store.fetch_missing([request()])
    assert store.lookup(request()).content is None  # pending only
    store.promote({URL: source.content})
    assert store.lookup(request()).content == "10.0.0.0/8\n"
    assert len(source.requests) == 1
