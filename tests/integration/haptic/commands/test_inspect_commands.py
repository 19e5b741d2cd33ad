"""``haptic validate --verbose``, ``haptic benchmark``, ``haptic config view`` and ``haptic diff`` as a user
runs them: against files, and against the fake API served over HTTP."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from haptic.config.crds import all_crds
from haptic.controller.publish.content import encode_content
from simulator.cluster_objects import endpoint_slice, ingress, ingress_library_config, service
from simulator.kube import BackgroundServer, FakeKubeAPI
from tests.support.paths import REPO

EXAMPLE = REPO / "examples" / "ingress" / "haproxytemplateconfig.yaml"


def haptic(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "haptic.cli", *args], capture_output=True, text=True, cwd=REPO,
                          timeout=120)


def _example() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(EXAMPLE.read_text())
    return loaded


@pytest.mark.haproxy
def test_validate_verbose_shows_every_assertion_timings_and_a_preview_of_what_failed(
        haproxy_bin: str, tmp_path: Path) -> None:
    doc = _example()
    doc["spec"]["validationTests"]["server-slots"]["assertions"][0]["expected"] = 4
    path = tmp_path / "broken.yaml"
    path.write_text(yaml.safe_dump(doc))
    out = haptic("validate", "-f", str(path), "--haproxy-binary", haproxy_bin, "--verbose")
    assert out.returncode == 1
    lines = out.stdout.splitlines()
    assert any(line.startswith("✗ server-slots") and line.endswith(" ms)") for line in lines), out.stdout
    assert any(line.strip().startswith("✓ [haproxy_valid") for line in lines)  # passing assertions listed too
    assert "3 matches, expected 4" in out.stdout
    assert any(line.strip().startswith("| global") or line.strip().startswith("| backend") for line in lines)
    assert "render time per template (inclusive):" in out.stdout
    assert any(line.strip().endswith(" haproxy.cfg") and " ms  x" in line for line in lines)

    data = json.loads(haptic("validate", "-f", str(EXAMPLE), "--haproxy-binary", haproxy_bin, "--verbose",
                             "--test", "tls-termination", "-o", "json").stdout)
    test = data["tests"][0]
    assert test["durationMs"] > 0
    assert "haproxy.cfg" in {t["name"] for t in test["templates"]}


@pytest.mark.haproxy
def test_validate_verbose_never_previews_a_certificate(haproxy_bin: str, tmp_path: Path) -> None:
    doc = _example()
    test = doc["spec"]["validationTests"]["tls-termination"]
    certs = sorted(doc["spec"].get("sslCertificates") or {}) or ["none"]
    test["assertions"].append({"type": "contains", "target": f"cert:{certs[0]}", "pattern": "never-there"})
    path = tmp_path / "cert.yaml"
    path.write_text(yaml.safe_dump(doc))
    out = haptic("validate", "-f", str(path), "--haproxy-binary", haproxy_bin, "--verbose", "--test", "tls-termination")
    assert out.returncode == 1
    assert "PRIVATE KEY" not in out.stdout and "BEGIN CERTIFICATE" not in out.stdout


def test_benchmark_times_each_test_and_profiles_templates() -> None:
    out = haptic("benchmark", "-f", str(EXAMPLE), "--iterations", "3", "--profile-includes")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("compile: ")
    assert "_global" not in out.stdout.split("\n", 2)[2]  # merged into every test, not benchmarked alone
    data = json.loads(haptic("benchmark", "-f", str(EXAMPLE), "--test", "routing-maps", "--iterations", "4",
                             "--profile-includes", "-o", "json").stdout)
    [row] = data["tests"]
    assert row["test"] == "routing-maps" and row["iterations"] == 4
    assert 0 < row["minMs"] <= row["medianMs"] <= row["maxMs"]
    assert row["configBytes"] > 0
    # haproxy.cfg rendered once per iteration (the rows are ordered by time taken: a timing, not asserted)
    calls = {t["name"]: t["calls"] for t in row["templates"]}
    assert calls["haproxy.cfg"] == 4
    unknown = haptic("benchmark", "-f", str(EXAMPLE), "--test", "nope")
    assert unknown.returncode == 2 and "no validation test named nope" in unknown.stderr


def test_config_view_expands_the_libraries_of_a_file() -> None:
    out = haptic("config", "view", "-f", str(EXAMPLE))
    assert out.returncode == 0, out.stderr
    expanded = yaml.safe_load(out.stdout)
    assert "ingresses" in expanded["spec"]["watchedResources"]
    assert expanded["spec"]["haproxyConfig"]["template"]
    short = yaml.safe_load(EXAMPLE.read_text())
    assert "haproxyConfig" not in short["spec"]  # the library supplied it


def _fake_with_installation(published: str | None) -> FakeKubeAPI:
    kube = FakeKubeAPI()
    crd_type = kube.types.by_kind("apiextensions.k8s.io/v1", "CustomResourceDefinition")
    assert crd_type is not None
    for crd in all_crds().values():
        kube.create(crd_type, None, crd)
    kube.create(kube.types.resolve("v1", "namespaces"), None,
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "haptic"}})
    config = ingress_library_config()
    kube.create(kube.types.resolve("haproxy-haptic.org/v1alpha1", "haproxytemplateconfigs"), "haptic", config)
    kube.create(kube.types.resolve("v1", "services"), "default", service("web"))
    kube.create(kube.types.resolve("discovery.k8s.io/v1", "endpointslices"), "default",
                endpoint_slice("web", ["10.0.0.1"]))
    kube.create(kube.types.resolve("networking.k8s.io/v1", "ingresses"), "default",
                ingress("web", "web.example.test", "web"))
    if published is not None:
        content, compressed = encode_content(published, 64)
        kube.create(kube.types.resolve("haproxy-haptic.org/v1alpha1", "haproxycfgs"), "haptic", {
            "apiVersion": "haproxy-haptic.org/v1alpha1", "kind": "HAProxyCfg",
            "metadata": {"name": "haproxy-config-haproxycfg", "namespace": "haptic"},
            "spec": {"content": content, "compressed": compressed, "checksum": "0" * 16},
        })
    return kube


def test_config_view_prints_what_an_installation_published_decompressed() -> None:
    text = "global\n    daemon\n" + "".join(f"# line {i}\n" for i in range(50))
    with BackgroundServer(lambda: _fake_with_installation(text)) as server:
        out = haptic("config", "view", "--server", server.url, "-n", "haptic")
        assert out.returncode == 0, out.stderr
        assert out.stdout == text
        missing = haptic("config", "view", "--server", server.url, "-n", "haptic", "--crd-name", "other")
        assert missing.returncode == 1 and "no HAProxyCfg haptic/other-haproxycfg" in missing.stderr


def test_diff_against_the_installation_shows_the_change_and_what_it_costs(tmp_path: Path) -> None:
    with BackgroundServer(lambda: _fake_with_installation(None)) as server:
        # What is deployed today: the render of the installation's objects as they are.
        config_file = tmp_path / "config.yaml"
        config_file.write_text(yaml.safe_dump(ingress_library_config()))
        deployed = tmp_path / "deployed.cfg"
        same = haptic("diff", "--server", server.url, "-n", "haptic", "--deployed", str(tmp_path / "none.cfg"))
        assert same.returncode == 2 and "none.cfg" in same.stderr  # a missing file is trouble, not a diff

        rendered = haptic("diff", "--server", server.url, "-n", "haptic", "--deployed", "/dev/null")
        assert rendered.returncode == 1
        current = "".join(line[1:] for line in rendered.stdout.splitlines(keepends=True)
                          if line.startswith("+") and not line.startswith("+++"))
        deployed.write_text(current)
        unchanged = haptic("diff", "--server", server.url, "-n", "haptic", "--deployed", str(deployed))
        assert unchanged.returncode == 0, unchanged.stdout + unchanged.stderr
        assert "no change" in unchanged.stdout

        scaled = tmp_path / "scaled.yaml"
        scaled.write_text(yaml.safe_dump(endpoint_slice("web", ["10.0.0.1", "10.0.0.2"])))
        out = haptic("diff", "--server", server.url, "-n", "haptic", "--deployed", str(deployed), "--apply",
                     str(scaled))
        assert out.returncode == 1, out.stderr
        assert "10.0.0.2" in out.stdout and "no reload" in out.stdout

        new = tmp_path / "new.yaml"
        new.write_text(yaml.safe_dump_all([service("shop"), ingress("shop", "shop.example.test", "shop")]))
        out = haptic("diff", "--server", server.url, "-n", "haptic", "--deployed", str(deployed), "--apply",
                     str(new), "-f", str(config_file))
        assert out.returncode == 1, out.stderr
        assert "+backend ing_default_shop_shop_80" in out.stdout.replace("+ backend", "+backend")
        assert "a reload is needed" in out.stdout

        foreign = tmp_path / "foreign.yaml"
        foreign.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}))
        out = haptic("diff", "--server", server.url, "-n", "haptic", "--deployed", str(deployed), "--apply",
                     str(foreign))
        assert out.returncode == 2 and "ConfigMap /x: the config watches no v1 ConfigMap" in out.stderr


def test_diff_reads_the_published_files_and_shows_their_changes(tmp_path: Path) -> None:
    config_file = tmp_path / "config.yaml"
    config_file.write_text(yaml.safe_dump(ingress_library_config()))
    fixtures = tmp_path / "fixtures.yaml"
    fixtures.write_text(yaml.safe_dump({"services": [service("web")],
                                        "endpoints": [endpoint_slice("web", ["10.0.0.1"])],
                                        "ingresses": [ingress("web", "web.example.test", "web")]}))
    out = tmp_path / "out"
    rendered = haptic("render", "-f", str(config_file), "--fixtures", str(fixtures), "-o", str(out))
    assert rendered.returncode == 0, rendered.stderr
    maps = {p.name: p.read_text() for p in out.rglob("*.map")}
    assert "hosts.map" in maps

    def installation() -> FakeKubeAPI:
        kube = _fake_with_installation((out / "haproxy.cfg").read_text())
        for name, text in maps.items():
            kube.create(kube.types.resolve("haproxy-haptic.org/v1alpha1", "haproxymapfiles"), "haptic", {
                "apiVersion": "haproxy-haptic.org/v1alpha1", "kind": "HAProxyMapFile",
                "metadata": {"name": "haproxy-map-" + name.removesuffix(".map"), "namespace": "haptic",
                             "labels": {"haproxy-haptic.org/runtime-config": "haproxy-config-haproxycfg"}},
                "spec": {"mapName": name, "path": f"/etc/haproxy/maps/{name}", "entries": text,
                         "checksum": "sha256:x", "compressed": False},
            })
        return kube

    with BackgroundServer(installation) as server:
        same = haptic("diff", "--server", server.url, "-n", "haptic")
        assert same.returncode == 0, same.stdout + same.stderr
        new = tmp_path / "new.yaml"
        new.write_text(yaml.safe_dump_all([service("shop"), ingress("shop", "shop.example.test", "shop")]))
        changed = haptic("diff", "--server", server.url, "-n", "haptic", "--apply", str(new))
        assert changed.returncode == 1, changed.stderr
        assert "+++ rendered/maps/hosts.map" in changed.stdout
        assert any(line.startswith("+") and "shop.example.test" in line for line in changed.stdout.splitlines())
