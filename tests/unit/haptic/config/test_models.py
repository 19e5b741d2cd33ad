from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest

from haptic.config.models import (
    HAProxyTemplateConfig,
    HAProxyTemplateConfigSpec,
    WatchedResource,
    load_config,
)


def test_defaults_follow_the_original_code(spec: dict[str, Any]) -> None:
    s = load_config(spec).spec
    le = s.controller.leader_election
    assert (le.enabled, le.lease_name) == (True, "haptic-leader")
    assert (le.lease_duration, le.renew_deadline, le.retry_period) == (
        timedelta(seconds=15),
        timedelta(seconds=10),
        timedelta(seconds=2),
    )
    assert s.controller.config_publishing.compression_threshold == 1_048_576
    dp = s.dataplane
    assert dp.port == 5555
    assert dp.min_deployment_interval == timedelta(seconds=2)
    assert dp.drift_prevention_interval == timedelta(seconds=60)
    assert dp.deployment_timeout == timedelta(seconds=30)
    assert (dp.maps_dir, dp.ssl_certs_dir, dp.general_storage_dir, dp.config_file) == (
        "/etc/haproxy/maps",
        "/etc/haproxy/ssl",
        "/etc/haproxy/general",
        "/etc/haproxy/haproxy.cfg",
    )
    assert (dp.max_parallel, dp.raw_push_threshold) == (0, 100)
    assert s.logging.level == ""
    assert s.templating_settings.extra_context == {}
    wr = s.watched_resources["ingresses"]
    assert (wr.store, wr.enable_validation_webhook, wr.label_selector, wr.field_selector) == (
        "full",
        False,
        None,
        None,
    )
    assert s.template_snippets == {} and s.maps == {} and s.validation_tests == {}


def test_zero_thresholds_mean_the_default_as_in_the_code(spec: dict[str, Any]) -> None:
    spec["controller"] = {"configPublishing": {"compressionThreshold": 0}}
    spec["dataplane"] = {"rawPushThreshold": 0}
    s = load_config(spec).spec
    assert s.controller.config_publishing.compression_threshold == 1_048_576
    assert s.dataplane.raw_push_threshold == 100


def test_camel_case_aliases_and_snake_case_names_both_populate() -> None:
    by_alias = WatchedResource.model_validate({"apiVersion": "v1", "resources": "services", "indexBy": ["a"]})
    by_name = WatchedResource(api_version="v1", resources="services", index_by=["a"])
    assert by_alias == by_name
    assert by_alias.model_dump(by_alias=True)["apiVersion"] == "v1"
    assert "indexBy" in by_alias.model_dump(by_alias=True)


def test_round_trip_through_json_keeps_everything(cr: dict[str, Any]) -> None:
    cr["spec"]["dataplane"] = {"minDeploymentInterval": "1m30s", "deploymentTimeout": "500ms", "maxParallel": 4}
    cr["spec"]["templatingSettings"] = {"extraContext": {"debug": True, "nested": {"a": [1, 2]}}}
    cr["spec"]["watchedResourcesIgnoreFields"] = ["metadata.managedFields"]
    cr["spec"]["maps"] = {
        "host.map": {
            "template": "{{ x }}",
            "postProcessing": [{"type": "regex_replace", "params": {"pattern": "^ +", "replace": ""}}],
        }
    }
    cr["spec"]["validationTests"] = {
        "basic": {
            "fixtures": {"ingresses": [{"metadata": {"name": "a"}}]},
            "assertions": [{"type": "match_count", "pattern": "backend", "expected": 2}],
        }
    }
    first = load_config(cr)
    wire = json.loads(json.dumps(first.to_json()))
    assert wire["spec"]["dataplane"]["minDeploymentInterval"] == "1m30s"
    assert wire["spec"]["dataplane"]["deploymentTimeout"] == "500ms"
    assert wire["spec"]["maps"]["host.map"]["postProcessing"][0]["params"]["pattern"] == "^ +"
    assert wire["spec"]["validationTests"]["basic"]["assertions"][0]["expected"] == "2"
    assert "pod_selector" not in wire["spec"] and "podSelector" in wire["spec"]
    second = load_config(wire)
    assert second == first
    assert second.spec.dataplane.min_deployment_interval == timedelta(seconds=90)


def test_full_object_and_bare_spec_load_the_same_spec(cr: dict[str, Any]) -> None:
    full = load_config(cr)
    bare = load_config(cr["spec"])
    assert full.spec == bare.spec
    assert full.metadata.name == "haproxy-config" and full.metadata.key == "haptic/haproxy-config"
    assert isinstance(bare, HAProxyTemplateConfig) and isinstance(bare.spec, HAProxyTemplateConfigSpec)


def test_log_level_is_case_insensitive(spec: dict[str, Any]) -> None:
    spec["logging"] = {"level": "debug"}
    assert load_config(spec).spec.logging.level == "DEBUG"


def test_durations_accept_seconds_as_numbers(spec: dict[str, Any]) -> None:
    spec["dataplane"] = {"minDeploymentInterval": 0.25, "driftPreventionInterval": 120}
    dp = load_config(spec).spec.dataplane
    assert dp.min_deployment_interval == timedelta(milliseconds=250)
    assert dp.drift_prevention_interval == timedelta(minutes=2)


def test_status_round_trips(cr: dict[str, Any]) -> None:
    cr["status"] = {
        "observedGeneration": 3,
        "lastValidated": "2026-01-02T03:04:05Z",
        "validationStatus": "Invalid",
        "validationMessage": "1 validation error(s)",
        "validationErrors": ["spec.x: bad"],
    }
    obj = load_config(cr)
    assert obj.status is not None and obj.status.validation_status == "Invalid"
    wire = obj.to_json()["status"]
    assert wire["lastValidated"] == "2026-01-02T03:04:05Z"
    assert wire["validationErrors"] == ["spec.x: bad"]


@pytest.mark.parametrize("status", ["valid", "Broken"])
def test_status_model_rejects_unknown_validation_status(cr: dict[str, Any], status: str) -> None:
    cr["status"] = {"validationStatus": status}
    with pytest.raises(ValueError, match=r"status\.validationStatus"):
        HAProxyTemplateConfig.model_validate(cr)


def test_unreadable_status_does_not_reject_a_good_spec(cr: dict[str, Any]) -> None:
    cr["status"] = {"validationStatus": "Broken", "somethingElse": 1}
    loaded = load_config(cr)
    assert loaded.status is None
    assert loaded.spec == load_config(cr["spec"]).spec


def test_make_stores_builds_indexed_filtered_stores(spec: dict[str, Any]) -> None:
    spec["watchedResources"]["ingresses"]["fieldSelector"] = "spec.ingressClassName=haproxy"
    spec["watchedResourcesIgnoreFields"] = ["metadata.managedFields"]
    stores = load_config(spec).spec.make_stores()
    assert list(stores) == ["haproxy-pods", "ingresses"]
    ing = stores["ingresses"]
    assert ing.index_by == ("metadata.namespace", "metadata.name")
    obj = {"metadata": {"name": "a", "namespace": "d", "managedFields": [1]}, "spec": {"ingressClassName": "haproxy"}}
    assert ing.apply(obj)
    assert not ing.apply({"metadata": {"name": "b", "namespace": "d"}, "spec": {"ingressClassName": "nginx"}})
    assert ing.get_single("d", "a") == {
        "metadata": {"name": "a", "namespace": "d"},
        "spec": {"ingressClassName": "haproxy"},
    }
    pods = stores["haproxy-pods"]
    pods.apply({"metadata": {"name": "haproxy-0", "namespace": "haptic", "managedFields": []}})
    assert pods.fetch("haptic")[0]["metadata"] == {"name": "haproxy-0", "namespace": "haptic"}


def test_pod_selector_as_label_selector_string(spec: dict[str, Any]) -> None:
    spec["podSelector"] = {"matchLabels": {"tier": "edge", "app": "haproxy"}}
    assert load_config(spec).spec.pod_selector.label_selector == "app=haproxy,tier=edge"
