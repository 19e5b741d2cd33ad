"""Shared fixtures: locating the external binaries the suites drive for real."""

from __future__ import annotations

import os
import shutil

import pytest


def _find(binary: str) -> str | None:
    return shutil.which(binary) or shutil.which(binary, path="/usr/sbin:/usr/local/sbin")


@pytest.fixture(scope="session")
def haproxy_bin() -> str:
    """The real haproxy binary. In CI its absence is a failure, never a skip."""
    path = _find("haproxy")
    if path is None:
        message = "haproxy binary not found (install Debian's 'haproxy' package; make test does it as root)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return path


@pytest.fixture(scope="session")
def kubectl_bin() -> str:
    """The real kubectl binary. In CI its absence is a failure, never a skip."""
    path = _find("kubectl")
    if path is None:
        message = "kubectl not found (install Debian's 'kubernetes-client' package; make test does it as root)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return path
