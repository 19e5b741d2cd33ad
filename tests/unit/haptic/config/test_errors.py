"""Bad input: every case is a ConfigError naming the object and the field path."""

from __future__ import annotations

from typing import Any

import pytest

from haptic.config.errors import ConfigError
from haptic.config.models import load_config

OBJ = "HAProxyTemplateConfig haptic/haproxy-config"


def _error(obj: dict[str, Any]) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        load_config(obj)
    return info.value


def test_missing_required_field(cr: dict[str, Any]) -> None:
    del cr["spec"]["haproxyConfig"]
    err = _error(cr)
    assert err.object_name == OBJ
    assert err.path == "spec.haproxyConfig"
    assert str(err).startswith(f"{OBJ}: spec.haproxyConfig: Field required")


def test_missing_required_nested_field(cr: dict[str, Any]) -> None:
    del cr["spec"]["watchedResources"]["ingresses"]["apiVersion"]
    assert _error(cr).path == "spec.watchedResources.ingresses.apiVersion"


@pytest.mark.parametrize(
    ("where", "path"),
    [
        ("indexBy", "spec.watchedResources.ingresses.indexBy[1]"),
        ("fieldSelector", "spec.watchedResources.ingresses.fieldSelector"),
        ("ignoreFields", "spec.watchedResourcesIgnoreFields[0]"),
    ],
)
def test_bad_jsonpath(cr: dict[str, Any], where: str, path: str) -> None:
    ingresses = cr["spec"]["watchedResources"]["ingresses"]
    if where == "indexBy":
        ingresses["indexBy"] = ["metadata.namespace", "metadata.labels['unterminated]"]
    elif where == "fieldSelector":
        ingresses["fieldSelector"] = "spec.rules[x].host=haproxy"
    else:
        cr["spec"]["watchedResourcesIgnoreFields"] = ["metadata..managedFields["]
    err = _error(cr)
    assert err.object_name == OBJ
    assert err.path == path
    assert "JSONPath" in str(err)


def test_first_error_is_named_for_the_documented_example(cr: dict[str, Any]) -> None:
    cr["spec"]["watchedResources"]["ingresses"]["indexBy"] = ["metadata[0"]
    err = _error(cr)
    assert str(err).startswith(f"{OBJ}: spec.watchedResources.ingresses.indexBy[0]: invalid JSONPath 'metadata[0'")


def test_ignore_field_with_recursive_descent_is_rejected(cr: dict[str, Any]) -> None:
    cr["spec"]["watchedResourcesIgnoreFields"] = ["..managedFields"]
    assert _error(cr).path == "spec.watchedResourcesIgnoreFields[0]"


def test_field_selector_without_operator(cr: dict[str, Any]) -> None:
    cr["spec"]["watchedResources"]["ingresses"]["fieldSelector"] = "spec.ingressClassName"
    err = _error(cr)
    assert err.path == "spec.watchedResources.ingresses.fieldSelector"
    assert "path=value" in str(err)


def test_bad_label_selector(cr: dict[str, Any]) -> None:
    cr["spec"]["watchedResources"]["ingresses"]["labelSelector"] = "app in (a,"
    assert _error(cr).path == "spec.watchedResources.ingresses.labelSelector"


@pytest.mark.parametrize("selector", [{}, {"matchLabels": {}}, {"matchLabels": {"app": ""}}])
def test_empty_pod_selector(cr: dict[str, Any], selector: dict[str, Any]) -> None:
    cr["spec"]["podSelector"] = selector
    assert _error(cr).path.startswith("spec.podSelector")


@pytest.mark.parametrize("value", ["2x", "1m30", "-5s", "", "ten seconds", True])
def test_bad_duration(cr: dict[str, Any], value: Any) -> None:
    cr["spec"]["dataplane"] = {"driftPreventionInterval": value}
    err = _error(cr)
    assert err.path == "spec.dataplane.driftPreventionInterval"


def test_bad_duration_in_leader_election(cr: dict[str, Any]) -> None:
    cr["spec"]["controller"] = {"leaderElection": {"leaseDuration": "15 s"}}
    assert _error(cr).path == "spec.controller.leaderElection.leaseDuration"


def test_unknown_post_processing_type(cr: dict[str, Any]) -> None:
    cr["spec"]["maps"] = {
        "hosts.map": {"template": "x", "postProcessing": [{"type": "sed", "params": {"pattern": "a", "replace": "b"}}]}
    }
    err = _error(cr)
    assert err.path == "spec.maps['hosts.map'].postProcessing[0].type"
    assert "regex_replace" in str(err)


def test_post_processing_with_bad_regex(cr: dict[str, Any]) -> None:
    cr["spec"]["haproxyConfig"]["postProcessing"] = [
        {"type": "regex_replace", "params": {"pattern": "(", "replace": ""}}
    ]
    assert _error(cr).path == "spec.haproxyConfig.postProcessing[0].params.pattern"


@pytest.mark.parametrize("port", [0, 65536, -1])
def test_port_out_of_range(cr: dict[str, Any], port: int) -> None:
    cr["spec"]["dataplane"] = {"port": port}
    err = _error(cr)
    assert err.path == "spec.dataplane.port"


def test_unknown_field_is_rejected(cr: dict[str, Any]) -> None:
    cr["spec"]["dataplane"] = {"prot": 5555}
    assert _error(cr).path == "spec.dataplane.prot"


def test_reserved_watched_resource_name(cr: dict[str, Any]) -> None:
    cr["spec"]["watchedResources"]["haproxy-pods"] = cr["spec"]["watchedResources"]["ingresses"]
    assert _error(cr).path == "spec.watchedResources"


def test_empty_index_by(cr: dict[str, Any]) -> None:
    cr["spec"]["watchedResources"]["ingresses"]["indexBy"] = []
    assert _error(cr).path == "spec.watchedResources.ingresses.indexBy"


def test_unknown_log_level(cr: dict[str, Any]) -> None:
    cr["spec"]["logging"] = {"level": "verbose"}
    assert _error(cr).path == "spec.logging.level"


def test_assertion_missing_its_pattern(cr: dict[str, Any]) -> None:
    cr["spec"]["validationTests"] = {"t": {"fixtures": {}, "assertions": [{"type": "contains"}]}}
    err = _error(cr)
    assert err.path == "spec.validationTests.t.assertions[0]"
    assert "pattern" in str(err)


def test_every_problem_is_listed(cr: dict[str, Any]) -> None:
    cr["spec"]["dataplane"] = {"port": 0, "maxParallel": -1}
    del cr["spec"]["podSelector"]
    err = _error(cr)
    assert {p.path for p in err.problems} == {"spec.podSelector", "spec.dataplane.port", "spec.dataplane.maxParallel"}
    assert "(+2 more)" in str(err)


def test_bare_spec_errors_use_the_given_name(spec: dict[str, Any]) -> None:
    spec["dataplane"] = {"port": 99999}
    with pytest.raises(ConfigError) as info:
        load_config(spec, name="config.yaml")
    assert str(info.value).startswith("config.yaml: spec.dataplane.port:")


def test_object_without_namespace_is_named_by_name(cr: dict[str, Any]) -> None:
    del cr["metadata"]["namespace"]
    del cr["spec"]["haproxyConfig"]
    assert _error(cr).object_name == "HAProxyTemplateConfig haproxy-config"


def test_wrong_kind_is_rejected(cr: dict[str, Any]) -> None:
    cr["kind"] = "ConfigMap"
    assert _error(cr).path == "kind"


def test_not_a_mapping() -> None:
    with pytest.raises(ConfigError, match="expected a mapping"):
        load_config(["not", "a", "mapping"])  # type: ignore[arg-type]


def test_full_object_without_spec_says_spec_is_missing(cr: dict[str, Any]) -> None:
    del cr["spec"]
    err = _error(cr)
    assert [p.path for p in err.problems] == ["spec"]


@pytest.mark.parametrize(("pattern", "why"), [
    ("(?<=server )x", "lookaround"),
    ("(a)\\1", "backreferences"),
])
def test_post_processing_regex_re2_cannot_run_is_refused_at_load(cr: dict[str, Any], pattern: str, why: str) -> None:
    # Python's re accepts these (and may backtrack for minutes); the renderer runs RE2, so load refuses them.
    cr["spec"]["haproxyConfig"]["postProcessing"] = [
        {"type": "regex_replace", "params": {"pattern": pattern, "replace": ""}}
    ]
    err = _error(cr)
    assert err.path == "spec.haproxyConfig.postProcessing[0].params.pattern"
    assert why in str(err) and "linear-time" in str(err)


def test_validation_test_pattern_re2_cannot_run_is_refused_at_load(cr: dict[str, Any]) -> None:
    cr["spec"]["validationTests"] = {"t": {"fixtures": {}, "assertions": [
        {"type": "match_order", "patterns": ["global", "b(?!1)"]}]}}
    err = _error(cr)
    assert err.path == "spec.validationTests.t.assertions[0]"
    assert "patterns[1]: pattern 'b(?!1)': lookaround" in str(err)
