"""A kubeconfig pointing at the fake API (plain HTTP, no credentials), for kubectl and the clients."""

from __future__ import annotations

from pathlib import Path

import yaml


def kubeconfig_text(url: str, name: str = "haptic-sim", namespace: str = "default") -> str:
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": name, "cluster": {"server": url}}],
        "users": [{"name": name, "user": {}}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": name, "namespace": namespace}}],
        "current-context": name,
        "preferences": {},
    }
    return yaml.safe_dump(config, sort_keys=False)


def write_kubeconfig(path: str | Path, url: str, name: str = "haptic-sim") -> Path:
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(kubeconfig_text(url, name))
    return target
