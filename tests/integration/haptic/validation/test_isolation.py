"""Per-object isolation with the real ``haproxy -c``: which objects' lines it rejects, and the render without them."""

from __future__ import annotations

import asyncio
import shutil
from typing import Any

import pytest

from haptic.k8s.store import ResourceStore
from haptic.templating.engine import RenderInputs, TemplateEngine, TemplateFile, TemplateSet
from haptic.templating.notices import REJECTED_BY_HAPROXY
from haptic.validation.haproxy_check import HAProxyValidator
from haptic.validation.isolation import Isolation, content_fingerprint, culprit_field, isolate_rejected
from haptic.validation.process import BlockingAsyncRunner
from haptic.validation.render_check import render_and_validate

pytestmark = pytest.mark.skipif(shutil.which("haproxy") is None, reason="needs the haproxy binary")

# One backend per app; its timeout from an annotation, its server port ten times its Port's.
TEMPLATE = """\
defaults
    mode http
    timeout connect 5s
    timeout client 5s
    timeout server 5s
frontend main
    bind 127.0.0.1:18080
    default_backend be_default
backend be_default
{% for app in resources.apps.list() %}
backend be_{{ app.metadata.name }}
    timeout server {{ app.metadata.annotations.timeout | default("5s") }}
{% for backend in resources.ports.fetch(app.metadata.name) %}
    server s1 127.0.0.1:{{ backend.spec.port * 10 }}
{% endfor %}
{% endfor %}
"""


def app(name: str, timeout: str = "5s", version: int = 1) -> dict[str, Any]:
    return {"kind": "App", "metadata": {"namespace": "ns", "name": name, "resourceVersion": str(version),
                                        "annotations": {"timeout": timeout}}}


def port(name: str, number: int, version: int = 1) -> dict[str, Any]:
    return {"kind": "Port", "metadata": {"namespace": "ns", "name": name, "resourceVersion": str(version),
                                         "labels": {"app": name}}, "spec": {"port": number}}


def stores(apps: list[dict[str, Any]], ports: list[dict[str, Any]]) -> dict[str, ResourceStore]:
    app_store = ResourceStore("apps", ["metadata.namespace", "metadata.name"])
    port_store = ResourceStore("ports", ["metadata.labels.app"])
    for obj in apps:
        app_store.apply(obj)
    for obj in ports:
        port_store.apply(obj)
    return {"apps": app_store, "ports": port_store}


def isolate(inputs: RenderInputs, candidates: list[dict[str, Any]], **kwargs: Any) -> Isolation | None:
    engine = TemplateEngine(TemplateSet(TemplateFile(TEMPLATE)))
    validator = HAProxyValidator()
    runner = BlockingAsyncRunner()

    async def run() -> Isolation | None:
        failed = await render_and_validate(engine, inputs, validator, runner=runner)
        assert not failed.valid
        return await isolate_rejected(engine, inputs, validator, runner=runner, failed=failed,
                                      candidates=candidates, **kwargs)

    return asyncio.run(run())


def test_the_object_whose_value_haproxy_rejects_is_guessed_with_one_extra_check() -> None:
    apps = [app("a"), app("b", "999999999d"), app("c")]
    outcome = isolate(RenderInputs(stores=stores(apps, [])), apps)
    assert outcome is not None
    assert [c.ref.name for c in outcome.culprits] == ["b"]
    assert outcome.attempts == 1
    (culprit,) = outcome.culprits
    assert culprit.field == "metadata.annotations[timeout]"
    assert "timer overflow" in culprit.message and "it is left out" in culprit.message
    assert culprit.notice().reason == REJECTED_BY_HAPROXY and culprit.notice().excluded
    assert "be_a" in outcome.checked.render.config and "be_c" in outcome.checked.render.config
    assert "be_b" not in outcome.checked.render.config


def test_a_culprit_whose_value_is_not_in_the_line_is_found_by_search() -> None:
    # Port 9999 renders "127.0.0.1:99990": no value of the object is in the line, the prefix search finds it.
    apps = [app(n) for n in "abcdefgh"]
    ports = [port(n, 800 + i) for i, n in enumerate("abcdefgh")]
    ports[5] = port("f", 9999, version=2)
    outcome = isolate(RenderInputs(stores=stores(apps, ports)), ports)
    assert outcome is not None and outcome.checked.valid
    assert [c.ref.name for c in outcome.culprits] == ["f"]
    assert "127.0.0.1:8040" in outcome.checked.render.config and "99990" not in outcome.checked.render.config
    # one render without every candidate, a binary search over 8 (3), one render without the culprit only
    assert outcome.attempts == 5


def test_two_culprits_are_both_left_out() -> None:
    apps = [app("a", "99999999999s"), app("b"), app("c"), app("d", "999999999d")]
    outcome = isolate(RenderInputs(stores=stores(apps, [])), apps)
    assert outcome is not None
    assert sorted(c.ref.name for c in outcome.culprits) == ["a", "d"]
    assert "be_b" in outcome.checked.render.config and "be_c" in outcome.checked.render.config


def test_a_held_back_change_renders_the_previous_version() -> None:
    good = app("b", "7s")
    bad = app("b", "999999999d", version=2)
    apps = [app("a"), bad]
    key = ("App", "ns", "b")
    outcome = isolate(RenderInputs(stores=stores(apps, [])), [bad], last_good={key: good})
    assert outcome is not None
    (culprit,) = outcome.culprits
    assert culprit.held_back and "last valid version stays deployed" in culprit.message
    assert "timeout server 7s" in outcome.checked.render.config


def test_a_previous_version_under_other_index_keys_is_found_there() -> None:
    # The bad change also moved the Port to another app's label: the previous version is still a's.
    good = port("a", 801)
    moved = port("a", 9999, version=2)
    moved["metadata"]["labels"] = {"app": "b"}
    apps = [app("a"), app("b")]
    outcome = isolate(RenderInputs(stores=stores(apps, [moved])), [moved],
                      last_good={("Port", "ns", "a"): good})
    assert outcome is not None
    config = outcome.checked.render.config
    assert config.index("127.0.0.1:8010") < config.index("backend be_b")


def test_an_unchanged_object_whose_value_is_rejected_is_guessed_and_left_out() -> None:
    # The bad Port was unused (it validated); a new App uses it: the Port's value is in the rejected line.
    bad_port = port("b", 9999)
    bad_port["spec"]["port"] = 7000  # renders 70000: the value 7000 is not in the line, "70000" is
    bad_port["metadata"]["annotations"] = {"note": "70000"}
    apps = [app("a"), app("b", version=2)]
    outcome = isolate(RenderInputs(stores=stores(apps, [bad_port])), [apps[1]], others=[*apps, bad_port])
    assert outcome is not None and outcome.attempts == 1
    (culprit,) = outcome.culprits
    assert (culprit.ref.kind, culprit.ref.name, culprit.held_back) == ("Port", "b", False)
    assert culprit.field == "metadata.annotations[note]"
    assert "backend be_b" in outcome.checked.render.config


def test_no_isolation_when_the_failure_is_not_the_candidates() -> None:
    apps = [app("a", "999999999d"), app("b")]
    # only b changed: leaving it out does not help, the fault is in what last validated
    assert isolate(RenderInputs(stores=stores(apps, [])), [apps[1]]) is None


def test_the_attempt_budget_is_kept() -> None:
    apps = [app(n) for n in "abcdefgh"]
    ports = [port(n, 800 + i) for i, n in enumerate("abcdefgh")]
    ports[6] = port("g", 9999, version=2)
    assert isolate(RenderInputs(stores=stores(apps, ports)), ports, max_attempts=2) is None


def test_field_and_fingerprint_helpers() -> None:
    obj = port("a", 70000)
    from haptic.validation.haproxy_check import ConfigProblem

    problem = ConfigProblem("'server be/s1' : invalid port '70000'", "haproxy.cfg", 9, "server s1 127.0.0.1:70000")
    assert culprit_field(obj, [problem]) == "spec.port"
    status_only = {**obj, "status": {"x": 1}, "metadata": {**obj["metadata"], "resourceVersion": "9"}}
    assert content_fingerprint(status_only) == content_fingerprint(obj)
    assert content_fingerprint(port("a", 1)) != content_fingerprint(obj)
