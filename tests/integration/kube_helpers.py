"""Shared pieces of the fake Kubernetes API integration tests."""

from __future__ import annotations

import asyncio
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from simulator.kube import BackgroundServer, write_kubeconfig

WIDGET_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {
        "group": "example.com",
        "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "shortNames": ["wd"]},
        "versions": [{"name": "v1", "served": True, "storage": True, "subresources": {"status": {}},
                      "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}],
    },
}


def wait_until(predicate: Callable[[], bool], timeout: float = 20.0, what: str = "condition") -> None:
    """Polls until ``predicate`` holds; fails with ``what`` after ``timeout`` seconds (not a timing assertion)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


async def async_wait_until(predicate: Callable[[], bool], limit: float = 20.0, what: str = "condition") -> None:
    deadline = time.monotonic() + limit
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


class Kubectl:
    def __init__(self, binary: str, server: BackgroundServer, tmp: Path) -> None:
        self.binary = binary
        self.server = server
        self.kubeconfig = write_kubeconfig(tmp / "kubeconfig", server.url)
        self.cache = tmp / "cache"
        self.env = {**os.environ, "KUBECONFIG": str(self.kubeconfig), "HOME": str(tmp)}

    def args(self, *args: str) -> list[str]:
        return [self.binary, "--cache-dir", str(self.cache), "--request-timeout", "20s", *args]

    def __call__(self, *args: str, check: bool = True, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(self.args(*args), capture_output=True, text=True, env=self.env, input=stdin,
                                timeout=60)
        if check and result.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({result.returncode}): {result.stderr}")
        return result

    def stored(self, api_version: str, plural: str, namespace: str | None, name: str) -> Any:
        def read(api: Any) -> Any:
            return api.get(api.resolve(api_version, plural), namespace, name)

        return self.server.call(read)
