"""The local backend's pure parts: config adaptation, endpoint promotion maps, opt-in, factories."""

from __future__ import annotations

from pathlib import Path

import pytest

from simulator.local.echo import EchoServer
from simulator.local.pod import POD_LABELS
from simulator.scenario.backends import get_factory
from simulator.scenario.loader import load_cells
from simulator.scenario.local_backend import AddressMap, adapt_config, slice_pairs
from simulator.scenario.pytest_plugin import default_backends

CONFIG = {
    "apiVersion": "haproxy-haptic.org/v1alpha1",
    "kind": "HAProxyTemplateConfig",
    "metadata": {"name": "c", "namespace": "haptic"},
    "spec": {"podSelector": {"matchLabels": {"app": "haproxy"}},
             "dataplane": {"port": 5555, "minDeploymentInterval": "2s"},
             "credentialsSecretRef": {"name": "creds"}},
}


def test_adapt_config_points_at_the_stack_without_touching_the_input() -> None:
    adapted = adapt_config(CONFIG, dataplane_port=40123, secret_name="creds")
    assert adapted["spec"]["podSelector"] == {"matchLabels": POD_LABELS}
    assert adapted["spec"]["dataplane"] == {"port": 40123, "minDeploymentInterval": "2s"}
    assert adapted["spec"]["credentialsSecretRef"] == {"name": "creds"}
    assert CONFIG["spec"]["dataplane"]["port"] == 5555  # type: ignore[index]


def test_address_map_translates_back_without_touching_longer_addresses() -> None:
    addresses = AddressMap()
    addresses.add("10.1.0.1", 8080, EchoServer("10.1.0.1", "127.9.9.1", 40000))
    addresses.add("10.1.0.2", 8080, EchoServer("10.1.0.2", "127.9.9.11", 40000))
    text = "server SRV_1 127.9.9.1:40000\nserver SRV_2 127.9.9.11:40000\nserver SRV_3 127.9.9.1:400001\n"
    assert addresses.to_scenario(text) == \
        "server SRV_1 10.1.0.1:8080\nserver SRV_2 10.1.0.2:8080\nserver SRV_3 127.9.9.1:400001\n"


def test_slice_pairs_names_every_address_port_pair() -> None:
    endpoint_slice = {"ports": [{"port": 8080}],
                      "endpoints": [{"addresses": ["10.1.0.1"]}, {"addresses": ["10.1.0.2"]}]}
    assert slice_pairs(endpoint_slice) == [("10.1.0.1", 8080), ("10.1.0.2", 8080)]
    assert slice_pairs({"endpoints": [{"addresses": ["10.3.0.1"]}]}) == [("10.3.0.1", 80)]


def _cells(tmp_path: Path, extra: str) -> list[object]:
    (tmp_path / "config.yaml").write_text(
        "apiVersion: haproxy-haptic.org/v1alpha1\nkind: HAProxyTemplateConfig\n"
        "metadata: {name: c, namespace: haptic}\nspec:\n  haproxyConfig: {template: 'global\\n'}\n")
    path = tmp_path / "s.yaml"
    path.write_text("name: s\ndescription: d\nsetup: {config: {file: config.yaml}}\n"
                    "steps: [{advance: 1s}]\n" + extra)
    return list(load_cells(path, root=tmp_path))


def test_only_an_explicit_backends_list_naming_local_opts_in(tmp_path: Path) -> None:
    assert [default_backends(c) for c in _cells(tmp_path, "")] == [["sim"]]  # type: ignore[arg-type]
    assert [default_backends(c) for c in _cells(tmp_path, "backends: [sim]\n")] == [["sim"]]  # type: ignore[arg-type]
    opted = _cells(tmp_path, "backends: [sim, local]\n")
    assert [default_backends(c) for c in opted] == [["sim", "local"]]  # type: ignore[arg-type]


def test_local_is_registered_and_kind_names_what_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    local = get_factory("local")
    assert local.name == "local"
    assert local.unavailable_reason() is None or "haproxy" in str(local.unavailable_reason())
    for name in ("KUBECONFIG", "HAPTIC_CLUSTER_KUBECONFIG", "HAPTIC_CLUSTER_SERVER"):
        monkeypatch.delenv(name, raising=False)
    reason = get_factory("kind").unavailable_reason()
    assert reason is not None and "HAPTIC_CLUSTER_KUBECONFIG" in reason and "make e2e" in reason
