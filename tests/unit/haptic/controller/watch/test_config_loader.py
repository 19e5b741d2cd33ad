"""The config loader expands the template libraries a HAProxyTemplateConfig names before loading it."""

from __future__ import annotations

from haptic.controller.watch.config_loader import validate_config_object
from simulator.cluster_objects import ingress_library_config


def test_library_config_is_expanded_before_loading() -> None:
    obj = ingress_library_config(expanded=False)
    assert "template" not in obj["spec"].get("haproxyConfig", {}), "the example relies on the library template"
    config, errors = validate_config_object(obj, "haptic/haproxy-config")
    assert errors == []
    assert config is not None
    assert sorted(config.spec.watched_resources) == ["endpoints", "ingresses", "secrets", "services"]
    assert "ingress-backends" in config.spec.template_snippets
    assert config.spec.templating_settings.extra_context["serverSlots"] == 10


def test_unknown_library_is_a_named_error() -> None:
    obj = ingress_library_config(expanded=False)
    obj["metadata"]["annotations"]["haproxy-haptic.org/template-libraries"] = "ingress,no-such-library"
    config, errors = validate_config_object(obj, "haptic/haproxy-config")
    assert config is None
    assert len(errors) == 1 and "haptic/haproxy-config" in errors[0] and "no-such-library" in errors[0]
