"""The HTTP server on its own event loop in a thread, for synchronous clients (kubectl, the official
client) in tests and benchmarks."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import Future
from types import TracebackType
from typing import Any, TypeVar

from .http_app import KubeHTTPServer
from .store import FakeKubeAPI

T = TypeVar("T")


class BackgroundServer:
    """``with BackgroundServer() as server: server.url`` — the fake API served from a thread.

    The store belongs to the server's loop: touch it only through ``call``."""

    def __init__(self, api_factory: Callable[[], FakeKubeAPI] = FakeKubeAPI, host: str = "127.0.0.1",
                 port: int = 0, **server_options: Any) -> None:
        self._factory = api_factory
        self._host = host
        self._port = port
        self._options = server_options
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name="fake-kube-api", daemon=True)
        self._ready: Future[KubeHTTPServer] = Future()
        self.server: KubeHTTPServer | None = None

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)

        async def start() -> None:
            try:
                server = KubeHTTPServer(self._factory(), self._host, self._port, **self._options)
                await server.start()
                self._ready.set_result(server)
            except BaseException as exc:  # the caller's thread re-raises it
                self._ready.set_exception(exc)

        self._loop.run_until_complete(start())
        self._loop.run_forever()

    def start(self) -> BackgroundServer:
        self._thread.start()
        self.server = self._ready.result(timeout=30)
        return self

    @property
    def url(self) -> str:
        assert self.server is not None, "server not started"
        return self.server.url

    @property
    def api(self) -> FakeKubeAPI:
        assert self.server is not None, "server not started"
        return self.server.api

    def call(self, func: Callable[[FakeKubeAPI], T]) -> T:
        """Runs ``func(api)`` on the server's loop and returns its result."""

        async def run() -> T:
            return func(self.api)

        return asyncio.run_coroutine_threadsafe(run(), self._loop).result(timeout=30)

    def stop(self) -> None:
        if self.server is not None and self._loop.is_running():
            asyncio.run_coroutine_threadsafe(self.server.stop(), self._loop).result(timeout=30)
        if self._loop.is_running():
            self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=30)
        self._loop.close()

    def __enter__(self) -> BackgroundServer:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()
