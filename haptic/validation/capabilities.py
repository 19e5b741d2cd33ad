"""Detecting the local HAProxy's capabilities through the command-runner port."""

from __future__ import annotations

from typing import Any

from haptic.templating.capabilities import capabilities_from_version_output
from haptic.validation.process import CommandRunner, SubprocessRunner


def detect_capabilities(binary: str = "haproxy", runner: CommandRunner | None = None) -> dict[str, Any]:
    """Runs ``haproxy -vv``; raises ``RuntimeError`` when the binary cannot run."""
    result = (runner or SubprocessRunner()).run([binary, "-vv"], cwd=".", time_limit=10.0)
    if result.returncode != 0:
        raise RuntimeError(f"{binary} -vv failed: {(result.stderr or result.stdout).strip()[:200]}")
    return capabilities_from_version_output(result.stdout + result.stderr)
