"""http.fetch end to end over TCP: templates -> HttpStore -> a real HTTP server on 127.0.0.1.

The server is the standard library's ThreadingHTTPServer: conditional requests, Basic auth and a
chunked answer without Content-Length are judged by a real HTTP implementation, not by our fake.
"""

from __future__ import annotations

import base64
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from haptic.core import RealClock
from haptic.httpstore.fetcher import make_client
from haptic.httpstore.store import HttpStore
from haptic.templating.engine import RenderInputs, TemplateEngine, TemplateFile, TemplateSet
from haptic.templating.http_fetch import HttpFetchPending

PASSWORD = "list-password-123"


class Server:
    def __init__(self) -> None:
        self.content = b"10.0.0.0/8\n"
        self.etag = '"v1"'
        self.seen: list[dict[str, str]] = []
        self.failing = False
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                outer.seen.append({"path": self.path, **{k.lower(): v for k, v in self.headers.items()}})
                if outer.failing:
                    self._send(500, b"broken\n")
                    return
                if self.path == "/private":
                    expected = "Basic " + base64.b64encode(f"lists:{PASSWORD}".encode()).decode()
                    if self.headers.get("Authorization") != expected:
                        self._send(401, b"who are you\n")
                        return
                if self.path == "/endless":
                    self.send_response(200)
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    for _ in range(64):
                        chunk = b"x" * 1024
                        self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                    self.wfile.write(b"0\r\n\r\n")
                    return
                if self.headers.get("If-None-Match") == outer.etag:
                    self._send(304, b"")
                    return
                self._send(200, outer.content, {"ETag": outer.etag})

            def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
                self.send_response(status)
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()


@pytest.fixture
def server() -> Iterator[Server]:
    s = Server()
    yield s
    s.httpd.shutdown()
    s.httpd.server_close()


def engine(template: str) -> TemplateEngine:
    return TemplateEngine(TemplateSet(haproxy_config=TemplateFile(template)))


async def render_fetching(eng: TemplateEngine, store: HttpStore, extra: dict[str, Any]) -> str:
    """What the coordinator does: render, fetch what was missing, render again, promote what validated."""
    for _ in range(3):
        view = store.view(proposal=True)
        try:
            config = eng.render(RenderInputs(http=view, extra_context=extra)).config
        except HttpFetchPending as pending:
            await store.fetch_missing(pending.requests)
            continue
        store.promote(view.used_pending)
        return config
    raise AssertionError("still pending")


async def test_fetch_refresh_conditional_request_and_auth(server: Server) -> None:
    store = HttpStore(make_client(None), RealClock())
    template = (f"deny {{{{ http.fetch('{server.url}/list', {{'delay': '60s', 'retries': 0}}) | trim }}}}\n"
                f"private {{{{ http.fetch('{server.url}/private', {{'retries': 0}}, "
                f"{{'type': 'basic', 'username': 'lists', 'password': extraContext.pw}}) | trim }}}}\n")
    eng = TemplateEngine(TemplateSet(haproxy_config=TemplateFile(template)))
    try:
        # extraContext stands in for the Secret a template reads the password from
        config = await render_fetching(eng, store, {"pw": PASSWORD})
        assert config == "deny 10.0.0.0/8\nprivate 10.0.0.0/8\n"
        assert server.seen[0].get("user-agent", "").startswith("haptic-python/")

        # The next refresh sends the ETag: a 304 changes nothing.
        entry = store.entries[f"{server.url}/list"]
        entry.next_refresh = 0.0
        assert await store.refresh_due() == []
        assert server.seen[-1]["if-none-match"] == '"v1"'

        # New content: pending, seen by a proposal render, promoted.
        server.content, server.etag = b"192.168.0.0/16\n", '"v2"'
        entry.next_refresh = 0.0
        assert [c.kind for c in await store.refresh_due()] == ["updated"]
        assert store.view(proposal=False).lookup(entry.request).content == "10.0.0.0/8\n"
        view = store.view(proposal=True)
        assert eng.render(RenderInputs(http=view, extra_context={"pw": PASSWORD})).config.startswith(
            "deny 192.168.0.0/16\n")
        store.promote(view.used_pending)
        assert store.view(proposal=False).lookup(entry.request).content == "192.168.0.0/16\n"

        # The server fails: the refresh fails, the last good content stays.
        server.failing = True
        entry.next_refresh = 0.0
        changes = await store.refresh_due()
        assert [(c.kind, c.reason) for c in changes] == [
            ("failed", f"GET {server.url}/list: HTTP 500 (after 1 attempts)")]
        assert store.view(proposal=True).lookup(entry.request).content == "192.168.0.0/16\n"
        assert all(PASSWORD not in repr(e.request) for e in store.entries.values())
    finally:
        await store.client.aclose()


async def test_wrong_credentials_and_a_chunked_answer_over_the_size_limit(server: Server) -> None:
    store = HttpStore(make_client(None), RealClock())
    template = (f"{{{{ http.fetch('{server.url}/private', {{'retries': 0}}, "
                f"{{'type': 'basic', 'username': 'lists', 'password': 'wrong-password'}}) }}}}"
                f"[{{{{ http.fetch('{server.url}/endless', {{'retries': 0, 'maxSize': 10000}}) }}}}]")
    try:
        with pytest.raises(HttpFetchPending) as pending:
            engine(template).render(RenderInputs(http=store.view(proposal=True)))
        changes = await store.fetch_missing(pending.value.requests)
        reasons = sorted(c.reason for c in changes)
        assert reasons == [f"GET {server.url}/endless: the answer is larger than 10000 bytes",
                           f"GET {server.url}/private: HTTP 401"]
        # Not critical: both render as "".
        assert engine(template).render(RenderInputs(http=store.view(proposal=True))).config == "[]"
        assert "wrong-password" not in " ".join(reasons)
    finally:
        await store.client.aclose()
