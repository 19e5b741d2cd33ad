"""A kubeconfig pointing at the fake API (a bearer token and the CA of an HTTPS fake only when given), for
kubectl and the clients."""

from __future__ import annotations

import base64
from pathlib import Path

import yaml


def kubeconfig_text(url: str, name: str = "haptic-sim", namespace: str = "default", token: str | None = None,
                    ca_pem: bytes | None = None) -> str:
    cluster: dict[str, str] = {"server": url}
    if ca_pem:
        cluster["certificate-authority-data"] = base64.b64encode(ca_pem).decode()
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": name, "cluster": cluster}],
        "users": [{"name": name, "user": {"token": token} if token else {}}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": name, "namespace": namespace}}],
        "current-context": name,
        "preferences": {},
    }
    return yaml.safe_dump(config, sort_keys=False)


def write_kubeconfig(path: str | Path, url: str, name: str = "haptic-sim", token: str | None = None,
                     namespace: str = "default", ca_pem: bytes | None = None) -> Path:
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(kubeconfig_text(url, name, namespace, token, ca_pem))
    if token:
        target.chmod(0o600)  # it holds a credential
    return target
