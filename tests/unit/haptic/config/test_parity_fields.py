"""Fields of the original's HAProxyTemplateConfig: each either acts or is refused, naming the field.

A config written for the original must never be accepted and then silently behave differently.
"""

from __future__ import annotations

from typing import Any

import pytest

from haptic.config.errors import ConfigError
from haptic.config.models import load_config


def _problems(cr: dict[str, Any]) -> dict[str, str]:
    with pytest.raises(ConfigError) as caught:
        load_config(cr)
    return {p.path: p.message for p in caught.value.problems}


def test_engine_jinja2_is_accepted_and_is_the_default(cr: dict[str, Any]) -> None:
    assert load_config(cr).spec.templating_settings.engine == "jinja2"
    cr["spec"]["templatingSettings"] = {"engine": "jinja2", "extraContext": {"a": 1}}
    loaded = load_config(cr)
    assert loaded.spec.templating_settings.engine == "jinja2"
    assert loaded.to_json()["spec"]["templatingSettings"]["engine"] == "jinja2"


def test_engine_scriggo_is_refused_with_the_reason(cr: dict[str, Any]) -> None:
    cr["spec"]["templatingSettings"] = {"engine": "scriggo"}
    problems = _problems(cr)
    message = problems["spec.templatingSettings.engine"]
    assert "scriggo" in message and "Jinja2" in message and "not supported" in message


def test_unknown_engine_is_refused(cr: dict[str, Any]) -> None:
    cr["spec"]["templatingSettings"] = {"engine": "handlebars"}
    assert "unknown template engine 'handlebars'" in _problems(cr)["spec.templatingSettings.engine"]


def test_namespace_selector_is_a_label_selector(cr: dict[str, Any]) -> None:
    cr["spec"]["watchedResources"]["ingresses"]["namespaceSelector"] = "team=a,env in (prod)"
    assert load_config(cr).spec.watched_resources["ingresses"].namespace_selector == "team=a,env in (prod)"
    cr["spec"]["watchedResources"]["ingresses"]["namespaceSelector"] = "team==="
    message = _problems(cr)["spec.watchedResources.ingresses.namespaceSelector"]
    assert "invalid namespace selector" in message


def test_empty_namespace_selector_means_none(cr: dict[str, Any]) -> None:
    cr["spec"]["watchedResources"]["ingresses"]["namespaceSelector"] = ""
    assert load_config(cr).spec.watched_resources["ingresses"].namespace_selector == ""


def test_on_demand_store_is_refused_as_not_supported_yet(cr: dict[str, Any]) -> None:
    cr["spec"]["watchedResources"]["ingresses"]["store"] = "on-demand"
    message = _problems(cr)["spec.watchedResources.ingresses.store"]
    assert "store 'on-demand' is not supported yet" in message


def test_full_store_is_accepted(cr: dict[str, Any]) -> None:
    cr["spec"]["watchedResources"]["ingresses"]["store"] = "full"
    assert load_config(cr).spec.watched_resources["ingresses"].store == "full"


def _test_with(**extra: Any) -> dict[str, Any]:
    return {"fixtures": {}, "assertions": [{"type": "haproxy_valid"}], **extra}


def test_http_resources_in_a_validation_test_load_and_a_url_given_twice_is_refused(cr: dict[str, Any]) -> None:
    mock = {"url": "http://blocklist.example/ips", "content": "10.0.0.1\n"}
    cr["spec"]["validationTests"] = {"fetch": _test_with(httpResources=[mock])}
    assert load_config(cr).spec.validation_tests["fetch"].http_resources[0].content == "10.0.0.1\n"
    cr["spec"]["validationTests"] = {"fetch": _test_with(httpResources=[mock, mock])}
    message = _problems(cr)["spec.validationTests.fetch.httpResources"]
    assert "given twice: http://blocklist.example/ips" in message


def test_a_validation_test_without_http_resources_loads(cr: dict[str, Any]) -> None:
    cr["spec"]["validationTests"] = {"plain": _test_with(httpResources=[])}
    assert load_config(cr).spec.validation_tests["plain"].http_resources == []


def test_every_refusal_is_reported_together(cr: dict[str, Any]) -> None:
    cr["spec"]["templatingSettings"] = {"engine": "scriggo"}
    cr["spec"]["watchedResources"]["ingresses"]["store"] = "on-demand"
    assert set(_problems(cr)) == {"spec.templatingSettings.engine", "spec.watchedResources.ingresses.store"}
