"""Where renders run: ``RenderRunner`` is the port, ``InlineRenderRunner`` and ``ThreadRenderRunner`` adapt it.

A render is CPU work of unbounded length (3,000 Ingresses, or a template that loops): on the event loop it
stalls the watchers, Lease renewals, probes and the webhook with it. The live controller renders in a
worker thread (``ThreadRenderRunner``, a daemon thread per render): the loop keeps running meanwhile. The
engine's render timeout stops a render cooperatively (checked every few calls and loop iterations); the runner adds a
hard deadline for what the sandbox cannot interrupt (a store or filter stuck in C or in I/O): past it the
attempt fails with a clear error and the caller keeps its last good config. A thread cannot be killed, so
an abandoned render keeps the worker until it returns, and the runner refuses new renders meanwhile
(they would share the engine's memos with it).

The inputs' stores are snapshotted on the loop before the render starts (``snapshot()`` where a store has
it): the watchers keep updating the live stores while the worker reads the copies.

The simulator renders inline: virtual time must stand still during a render, as during ``haproxy -c``.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Mapping
from concurrent.futures import Future
from dataclasses import replace
from typing import Any, Protocol

from haptic.templating.engine import DEFAULT_RENDER_TIMEOUT, RenderInputs, RenderResult, TemplateEngine
from haptic.templating.errors import RenderTimeout

__all__ = ["InlineRenderRunner", "RenderRunner", "ThreadRenderRunner", "snapshot_inputs"]

#: Added to the engine's render timeout before the runner gives a render up.
DEFAULT_GRACE = 2.0


class RenderRunner(Protocol):
    async def render(self, engine: TemplateEngine, inputs: RenderInputs) -> RenderResult: ...


class InlineRenderRunner:
    """Renders on the caller's thread (the simulator: no virtual time passes during a render)."""

    async def render(self, engine: TemplateEngine, inputs: RenderInputs) -> RenderResult:
        return engine.render(inputs)


def _snapshot(store: Any) -> Any:
    take = getattr(store, "snapshot", None)
    return take() if callable(take) else store


def snapshot_inputs(inputs: RenderInputs) -> RenderInputs:
    """``inputs`` with every store replaced by a snapshot (stores without ``snapshot()`` stay as they are)."""
    stores: Mapping[str, Any] = {name: _snapshot(store) for name, store in inputs.stores.items()}
    pods = None if inputs.haproxy_pods is None else _snapshot(inputs.haproxy_pods)
    return replace(inputs, stores=stores, haproxy_pods=pods)


class ThreadRenderRunner:
    """Renders in one worker thread of its own, with a hard deadline (``deadline``; default: the engine's
    render timeout plus ``grace``)."""

    def __init__(self, deadline: float | None = None, *, grace: float = DEFAULT_GRACE, name: str = "haptic-render"):
        self.deadline = deadline
        self.grace = grace
        self.name = name
        # The render given up at its deadline, while its thread still runs (it shares the engine's memos).
        self._abandoned: Future[RenderResult] | None = None
        self._lock: asyncio.Lock | None = None  # one render at a time: an engine is not thread-safe
        self.abandoned = 0

    def limit_for(self, engine: TemplateEngine) -> float:
        if self.deadline is not None:
            return self.deadline
        timeout = engine.render_timeout if engine.render_timeout is not None else DEFAULT_RENDER_TIMEOUT
        return timeout + self.grace

    async def render(self, engine: TemplateEngine, inputs: RenderInputs) -> RenderResult:
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            return await self._render(engine, inputs)

    async def _render(self, engine: TemplateEngine, inputs: RenderInputs) -> RenderResult:
        if self._abandoned is not None and not self._abandoned.done():
            raise RenderTimeout("a render given up after its deadline is still running (stuck outside the "
                                "template sandbox); no new render starts until it returns")
        limit = self.limit_for(engine)
        snapshot = snapshot_inputs(inputs)
        future: Future[RenderResult] = Future()
        context = contextvars.copy_context()

        def work() -> None:
            try:
                future.set_result(context.run(engine.render, snapshot))
            except BaseException as exc:  # handed to the awaiting task, which re-raises it
                future.set_exception(exc)

        # A daemon thread per render: one stuck past its deadline must not hold up the process's exit.
        threading.Thread(target=work, name=self.name, daemon=True).start()
        try:
            return await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(future)), limit)
        except TimeoutError:
            self.abandoned += 1
            self._abandoned = future
            raise RenderTimeout(f"render did not finish within {limit:g}s; given up (the last good "
                                "configuration stays deployed)") from None
