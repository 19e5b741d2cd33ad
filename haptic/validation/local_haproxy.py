"""The local HAProxy (the controller image's ``haproxy``): its version and capabilities.

Detected once per process through the command-runner port (``haproxy -vv``), as the original does at
startup: discovery admits only pods whose Dataplane reports the same major.minor, and templates see
the capabilities. A binary that cannot run fails the iteration (retried), like the original's fatal check.
"""

from __future__ import annotations

import tempfile
from typing import Any

from haptic.templating.capabilities import capabilities_from_version_output
from haptic.validation.process import AsyncCommandRunner

DETECT_TIME_LIMIT = 10.0

__all__ = ["detect_local_haproxy", "local_major_minor"]


async def detect_local_haproxy(binary: str, runner: AsyncCommandRunner) -> dict[str, Any]:
    """The capabilities of ``binary`` (``haproxy_version``, ``version_major``, ``version_minor``, ...)."""
    result = await runner.run([binary, "-vv"], cwd=tempfile.gettempdir(), time_limit=DETECT_TIME_LIMIT)
    if result.returncode != 0:
        raise RuntimeError(f"{binary} -vv failed (exit {result.returncode}): "
                           f"{(result.stderr or result.stdout).strip()[:200]}")
    return capabilities_from_version_output(result.stdout + result.stderr)


def local_major_minor(capabilities: dict[str, Any]) -> tuple[int, int] | None:
    major, minor = capabilities.get("version_major"), capabilities.get("version_minor")
    return (major, minor) if isinstance(major, int) and isinstance(minor, int) else None
