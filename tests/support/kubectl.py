"""The real ``kubectl`` against a fake API served by a ``BackgroundServer`` (own kubeconfig, cache and HOME;
the server's CA when it serves HTTPS, and a bearer token when given one)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

from simulator.kube import BackgroundServer, write_kubeconfig


class Kubectl:
    def __init__(self, binary: str, server: BackgroundServer, tmp: Path, token: str | None = None) -> None:
        self.binary = binary
        self.server = server
        tls = server.server.tls if server.server is not None else None
        self.kubeconfig = write_kubeconfig(tmp / "kubeconfig", server.url, token=token,
                                           ca_pem=tls.ca_pem if tls else None)
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
