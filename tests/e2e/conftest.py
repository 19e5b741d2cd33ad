"""End-to-end tier: a Kind cluster with real HAProxy and dataplaneapi.

Every test here is skipped, with the reason printed, where `kind` or a running Docker engine is
missing (this is the case on the project's CI machines, which have no container engine).
"""

from __future__ import annotations

import shutil
import subprocess

import pytest


def _kind_unavailable_reason() -> str | None:
    if shutil.which("kind") is None:
        return "the 'kind' binary is not installed; the e2e tier needs Kind and a Docker engine"
    if shutil.which("docker") is None:
        return "the 'docker' client is not installed; the e2e tier needs a Docker engine"
    probe = subprocess.run(["docker", "info"], capture_output=True, text=True, check=False)
    if probe.returncode != 0:
        return "no Docker engine is running (docker info failed); the e2e tier needs one for Kind"
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    reason = _kind_unavailable_reason()
    if reason is None:
        return
    for item in items:
        if "tests/e2e" in str(item.path):
            item.add_marker(pytest.mark.skip(reason=reason))
