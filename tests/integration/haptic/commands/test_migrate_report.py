"""``haptic migrate-report`` as a user runs it: from manifest files, and from a cluster through a kubeconfig
(the official kubernetes client against the fake API over HTTP)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml
from kubernetes import client, config

from simulator.kube import BackgroundServer, write_kubeconfig
from tests.support.paths import REPO

FIXTURES = REPO / "tests" / "fixtures" / "migration"


def haptic(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "haptic.cli", "migrate-report", *args], capture_output=True,
                          text=True, timeout=120, cwd=REPO)


def test_json_and_yaml_carry_the_same_report_and_the_table_its_totals() -> None:
    as_json = json.loads(haptic("-f", str(FIXTURES), "-o", "json").stdout)
    as_yaml = yaml.safe_load(haptic("-f", str(FIXTURES), "-o", "yaml").stdout)
    assert as_json == as_yaml
    table = haptic("-f", str(FIXTURES / "ingress-nginx-apps.yaml"))
    assert table.returncode == 0, table.stderr
    assert "legacy/legacy" in table.stdout and "yes (configuration-snippet)" in table.stdout
    assert "shop/checkout" not in table.stdout  # only the file given
    total = as_json["total"]
    assert total["ingresses"] == len(as_json["ingresses"]) and total["routingDifferently"] >= 4


def test_unreadable_input_is_a_clear_error() -> None:
    result = haptic("-f", "/nonexistent/ingresses.yaml")
    assert result.returncode == 2 and "cannot read the Ingresses" in result.stderr


def test_reads_the_ingresses_of_a_cluster_through_the_kubeconfig(tmp_path: Path) -> None:
    docs = [d for d in yaml.safe_load_all((FIXTURES / "ingress-nginx-apps.yaml").read_text()) if d]
    with BackgroundServer() as server:
        kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", server.url)
        api = config.new_client_from_config(config_file=str(kubeconfig))  # type: ignore[no-untyped-call]
        core, networking = client.CoreV1Api(api), client.NetworkingV1Api(api)
        for ns in sorted({d["metadata"]["namespace"] for d in docs} - {"default"}):
            core.create_namespace({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        for doc in docs:
            networking.create_namespaced_ingress(doc["metadata"]["namespace"], doc)
        api.close()
        everywhere = json.loads(haptic("--kubeconfig", str(kubeconfig), "-o", "json").stdout)
        shop = json.loads(haptic("--kubeconfig", str(kubeconfig), "-n", "shop", "-o", "json").stdout)
    from_files = json.loads(haptic("-f", str(FIXTURES / "ingress-nginx-apps.yaml"), "-o", "json").stdout)

    def summary(report: dict[str, Any]) -> list[tuple[str, str, dict[str, int], bool]]:
        return [(i["namespace"], i["name"], i["counts"], i["routesDifferently"]) for i in report["ingresses"]]

    assert summary(everywhere) == summary(from_files)
    assert {i["name"] for i in shop["ingresses"]} == {"api", "storefront"}
