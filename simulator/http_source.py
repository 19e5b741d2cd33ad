"""A fake HTTP server for templates' ``http.fetch``: scripted content per URL on virtual time, and faults.

Behaves as a plain static file server does: ``200`` with an ``ETag`` (a hash of the body) and
``Last-Modified``, ``304`` when ``If-None-Match`` matches the current ETag (RFC 9110 §13.1.2: an
``If-None-Match`` present makes ``If-Modified-Since`` ignored), ``404`` for an unknown URL. Content
can change at scripted times (seconds since ``start``). A fault makes it answer ``status`` to the
next requests instead. Reached in-process through ``httpx.ASGITransport`` (no sockets).
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from email.utils import formatdate
from typing import Any

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


@dataclass(frozen=True)
class Version:
    at: float
    content: str


@dataclass
class FakeHttpSource:
    #: the clock's monotonic seconds, and the wall time at monotonic 0 (for Last-Modified)
    now: Callable[[], float]
    wall_epoch: float
    #: monotonic time the scripted ``at`` times count from
    start: float = 0.0
    versions: dict[str, list[Version]] = field(default_factory=dict)
    fail_status: int = 0
    fail_url: str = ""
    requests: int = 0
    failed: int = 0

    def script(self, url: str, content: str, then: Sequence[tuple[float, str]] = ()) -> None:
        self.versions[url] = sorted([Version(0.0, content), *(Version(at, c) for at, c in then)],
                                    key=lambda v: v.at)

    def current(self, url: str) -> Version | None:
        elapsed = self.now() - self.start
        found = None
        for version in self.versions.get(url, []):
            if version.at <= elapsed:
                found = version
        return found

    def fail(self, status: int, url: str = "") -> None:
        self.fail_status, self.fail_url = status, url

    def clear(self) -> None:
        self.fail_status, self.fail_url = 0, ""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        self.requests += 1
        host = dict(scope["headers"]).get(b"host", b"").decode()
        url = f"{scope['scheme']}://{host}{scope['path']}"
        if scope.get("query_string"):
            url += "?" + scope["query_string"].decode()
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        if self.fail_status and (not self.fail_url or self.fail_url == url):
            self.failed += 1
            await _answer(send, self.fail_status, b"injected failure\n", {})
            return
        version = self.current(url)
        if version is None:
            await _answer(send, 404, b"not found\n", {})
            return
        body = version.content.encode()
        etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
        modified = formatdate(self.wall_epoch + self.start + version.at, usegmt=True)
        validators = {"ETag": etag, "Last-Modified": modified}
        if etag in [t.strip() for t in headers.get("if-none-match", "").split(",")]:
            await _answer(send, 304, b"", validators)
            return
        await _answer(send, 200, body, {**validators, "Content-Type": "text/plain; charset=utf-8"})


async def _answer(send: Send, status: int, body: bytes, headers: Mapping[str, str]) -> None:
    raw = [(k.lower().encode(), v.encode()) for k, v in headers.items()]
    if status != 304:
        raw.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})
