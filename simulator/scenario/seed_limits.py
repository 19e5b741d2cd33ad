"""Per-seed limits for exploration: a seed that runs away is a failure with its replay command, not a hang.

Each seed runs in a child process of its own (forked: the loaded modules are shared, startup is cheap)
with three limits: the run's virtual (backend) time, checked inside the run; its wall time, enforced by
the parent, which kills the child; its memory, an address-space limit set in the child, so a leak ends
with a ``MemoryError`` (or the child dies) instead of taking the machine.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import resource
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection

from .runner import CellResult, Failure

DEFAULT_VIRTUAL = 3600.0
DEFAULT_WALL = 300.0
DEFAULT_MEMORY_MB = 2048


@dataclass(frozen=True)
class SeedLimits:
    virtual_seconds: float = DEFAULT_VIRTUAL
    wall_seconds: float = DEFAULT_WALL
    memory_mb: int = DEFAULT_MEMORY_MB


def _failed(template: CellResult, message: str) -> CellResult:
    result = CellResult(id=template.id, backend=template.backend, source=template.source, seed=template.seed,
                        status="error", message=message)
    result.failures.append(Failure(None, 1, "limit", "limit", message, category="error"))
    return result


def _child(run: Callable[[], CellResult], memory_mb: int, conn: Connection) -> None:
    limit = memory_mb * 1024 * 1024
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    try:
        result = run()
    except MemoryError:
        conn.send(("memory", None))
        return
    conn.send(("done", result))


def run_limited(run: Callable[[], CellResult], template: CellResult, limits: SeedLimits) -> CellResult:
    """``run()`` in a forked child within ``limits``; ``template`` names the cell and seed for a failure."""
    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    child = context.Process(target=_child, args=(run, limits.memory_mb, send), daemon=True)
    child.start()
    send.close()
    try:
        if not receive.poll(limits.wall_seconds):
            return _failed(template, f"the seed ran past its wall-time limit of {limits.wall_seconds:g}s "
                                     "and was killed")
        try:
            kind, result = receive.recv()
        except EOFError:
            child.join(5)
            return _failed(template, f"the seed's process died (exit code {child.exitcode}); memory limit "
                                     f"{limits.memory_mb} MiB")
        if kind == "memory":
            return _failed(template, f"the seed ran out of its memory limit of {limits.memory_mb} MiB")
        assert isinstance(result, CellResult)
        return result
    finally:
        if child.is_alive():
            child.kill()
        child.join(5)
        receive.close()


__all__ = ["SeedLimits", "run_limited"]
