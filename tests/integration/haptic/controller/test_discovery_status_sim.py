"""Discovery's version check against the local haproxy, and Ingress status only where we serve."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from simulator.cluster_objects import ingress
from tests.integration.haptic.controller.conftest import add_app, backend, web_cluster

pytestmark = pytest.mark.looptime


async def test_pod_with_another_haproxy_version_is_skipped_then_admitted_after_upgrade(
        make_harness: Any, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="haptic")
    h = await web_cluster(make_harness, pods=1)
    major_minor = h.dataplane_version.lstrip("v").split()[0].rsplit(".", 1)[0]
    h.add_pod("haproxy-old", api_version="v9.9.1 old")
    await h.settle()
    add_app(h, "api", "api.example", ["10.2.0.1"])  # another discovery pass meanwhile
    await h.settle()
    assert [e.pod_name for e in h.events("haproxy.pods.discovered")[-1].endpoints] == ["haproxy-0"]
    assert backend("web") not in h.deployed_config("haproxy-old")
    skipped = [r.getMessage() for r in caplog.records if "skipping pod haproxy-old" in r.getMessage()]
    assert len(skipped) == 1, skipped
    assert "9.9.1" in skipped[0] and f"local haproxy is {major_minor}" in skipped[0]
    # The sidecar is upgraded in place (no pod event): the periodic re-check admits it.
    h.pod("haproxy-old").dataplane.options.api_version = h.dataplane_version
    await h.advance(61)
    await h.settle()
    assert [e.pod_name for e in h.events("haproxy.pods.discovered")[-1].endpoints] == ["haproxy-0", "haproxy-old"]
    assert h.deployed_config("haproxy-old") == h.deployed_config("haproxy-0")


async def test_ingress_status_only_for_served_ingresses(make_harness: Any) -> None:
    h = await web_cluster(make_harness)
    other = ingress("other-class", "other.example", "web")
    other["spec"]["ingressClassName"] = "nginx"
    h.apply(other)
    h.apply(ingress("evil", "evil.example", "web", path="/\n    http-request deny"))
    add_app(h, "api", "api.example", ["10.2.0.1"])
    await h.settle()
    expected = [{"ip": "10.0.0.10"}, {"ip": "10.0.0.11"}]
    for name in ("web", "api"):
        ing = h.get("networking.k8s.io/v1", "Ingress", name, "default")
        assert ing["status"]["loadBalancer"]["ingress"] == expected
    other_class = h.get("networking.k8s.io/v1", "Ingress", "other-class", "default")
    assert not (other_class.get("status") or {}).get("loadBalancer", {}).get("ingress")
    # Ours but left out: the address with the reason as the port's error (the Ingress status's error field).
    evil = h.get("networking.k8s.io/v1", "Ingress", "evil", "default")
    error = {"port": 8080, "protocol": "TCP", "error": "haproxy-haptic.org/UnsafeInput"}
    assert evil["status"]["loadBalancer"]["ingress"] == [{**point, "ports": [error]} for point in expected]


def test_fake_dataplanes_report_the_local_haproxy_version(haproxy_bin: str, tmp_path: Any) -> None:
    from haptic.validation.capabilities import detect_capabilities
    from simulator.dataplane.local_version import FALLBACK_API_VERSION, local_api_version

    caps = detect_capabilities(haproxy_bin)
    assert local_api_version(haproxy_bin).startswith(f"v{caps['version_major']}.{caps['version_minor']}.")
    assert local_api_version(str(tmp_path / "no-haproxy-here")) == FALLBACK_API_VERSION
