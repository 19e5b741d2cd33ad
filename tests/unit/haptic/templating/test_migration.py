"""The migration report on real-world-shaped Ingress manifests (tests/fixtures/migration)."""

from __future__ import annotations

from typing import Any

import pytest

from haptic.commands.migrate_report import ingresses_from_files
from haptic.templating.migration import migration_report, report_table
from tests.support.paths import REPO

FIXTURES = REPO / "tests" / "fixtures" / "migration"
N = "nginx.ingress.kubernetes.io/"


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    return migration_report(ingresses_from_files([FIXTURES]))


def by_name(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f"{i['namespace']}/{i['name']}": i for i in report["ingresses"]}


def support(item: dict[str, Any]) -> dict[str, str]:
    return {a["annotation"].removeprefix(N).removeprefix("haproxy.org/"): a["support"] for a in item["annotations"]}


def test_every_ingress_of_every_file_and_list_is_reported(report: dict[str, Any]) -> None:
    names = set(by_name(report))
    assert {"argocd/argocd-server", "shop/checkout", "shop/checkout-canary", "default/plain"} <= names
    assert report["total"]["ingresses"] == len(names)


def test_annotations_are_classified_from_the_library_tables(report: dict[str, Any]) -> None:
    items = by_name(report)
    assert support(items["shop/api"]) == {"use-regex": "differences", "rewrite-target": "supported",
                                          "enable-cors": "supported", "cors-allow-origin": "differences",
                                          "limit-rps": "differences"}
    legacy = support(items["legacy/legacy"])
    assert legacy["configuration-snippet"] == "refused"
    assert legacy["proxy-buffer-size"] == "ignored"
    assert support(items["argocd/argocd-server"])["ssl-passthrough"] == "differences"
    assert items["default/plain"]["annotations"] == [] and not items["default/plain"]["routesDifferently"]


def test_routing_differences_name_their_annotations(report: dict[str, Any]) -> None:
    items = by_name(report)
    assert not items["argocd/argocd-server"]["routesDifferently"]  # ssl-passthrough is routed by SNI as there
    assert items["shop/api"]["because"] == [f"{N}use-regex"]
    assert items["legacy/legacy"]["because"] == [f"{N}configuration-snippet"]
    assert not items["registry/registry"]["routesDifferently"]  # timeouts and an unlimited body differ in no route
    assert not items["shop/storefront"]["routesDifferently"]


def test_hostile_values_make_the_ingress_excluded_and_invalid_values_refused(report: dict[str, Any]) -> None:
    hostile = by_name(report)["legacy/hostile"]
    assert hostile["excluded"] == [f"annotation {N}upstream-vhost contains control characters"]
    assert hostile["annotations"][0]["invalid"] and hostile["annotations"][0]["support"] == "refused"
    assert report["total"]["excluded"] == 1


def test_totals_add_up(report: dict[str, Any]) -> None:
    total = report["total"]
    per_level = sum(total["annotations"].values())
    assert per_level == sum(len(i["annotations"]) for i in report["ingresses"])
    assert total["routingDifferently"] == sum(1 for i in report["ingresses"] if i["routesDifferently"])
    top = report["annotations"][0]
    assert top["ingresses"] == max(a["ingresses"] for a in report["annotations"])


def test_haproxytech_annotations_are_reported_under_their_library(report: dict[str, Any]) -> None:
    items = by_name(report)
    web = items["web/haproxy-web"]
    assert {a["library"] for a in web["annotations"]} == {"haproxytech"}
    assert support(web)["backend-config-snippet"] == "refused"
    assert support(web)["timeout-server"] == "supported"
    only_nginx = by_name(migration_report(ingresses_from_files([FIXTURES]), "nginx"))
    assert only_nginx["web/haproxy-web"]["annotations"] == []


def test_table_lists_each_ingress_details_and_totals(report: dict[str, Any]) -> None:
    text = report_table(report)
    lines = text.splitlines()
    assert lines[0].split() == ["INGRESS", "CLASS", "SUPPORTED", "DIFFERENCES", "IGNORED", "REFUSED", "ROUTES",
                                "DIFFERENTLY"]
    row = next(line for line in lines if line.startswith("shop/api "))
    assert row.split()[-2:] == ["yes", "(use-regex)"]
    assert any("legacy/hostile: not routed at all" in line for line in lines)
    assert lines[-1].startswith(f"Total: {report['total']['ingresses']} Ingresses")
