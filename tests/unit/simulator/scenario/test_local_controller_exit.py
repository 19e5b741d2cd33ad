"""When every controller replica exits on its own, ``settle`` on local says so with what the processes
printed last: the trace ends before the reason (seen once under load: exit code 1 during setup, with
nothing else to go on)."""

from __future__ import annotations

import collections
from types import SimpleNamespace
from typing import Any, cast

from simulator.scenario.local_backend import LocalBackend


async def test_settle_reports_the_exit_codes_and_the_last_output_lines() -> None:
    lines = collections.deque([f"time=t{i} level=info msg=starting" for i in range(8)])
    lines.append('time=t9 level=error msg="metrics server: [Errno 98] address already in use"')
    replica = SimpleNamespace(returncode=1, lines=lines, running=False, process=None, line_count=len(lines))
    backend = LocalBackend("haproxy")
    backend.stack = cast(Any, SimpleNamespace(controllers=[replica], pods=[]))
    result = await backend.settle(5.0)
    assert not result.converged
    assert "exit codes [1]" in result.pending and "address already in use" in result.pending
    assert "t3 " not in result.pending  # only the last lines
    exited = [r for r in backend.trace() if r.type == "local.controllers.exited"]
    assert exited and exited[0].data["last_output"][-1].endswith('address already in use"')
