"""The validationTests runner: fixtures (with _global), extraContext, currentConfig, rendering errors."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from haptic.config.models import load_config
from haptic.templating.engine import compile_templates
from haptic.validation.haproxy_check import HAProxyValidator
from haptic.validation.process import ProcessResult
from haptic.validation.setup import FixtureError, build_stores, merge_fixtures
from haptic.validation.testrunner import ValidationTestRunner, report_data, report_summary


class OkRunner:
    def run(self, argv: Sequence[str], *, cwd: str, time_limit: float) -> ProcessResult:
        return ProcessResult(0, "", "")


def pod(name: str) -> dict[str, Any]:
    return {"kind": "Pod", "metadata": {"namespace": "ns", "name": name}}


def thing(name: str, color: str) -> dict[str, Any]:
    return {"kind": "Thing", "metadata": {"namespace": "ns", "name": name}, "spec": {"color": color}}


def spec(tests: dict[str, Any], template: str | None = None) -> Any:
    return load_config(
        {
            "credentialsSecretRef": {"name": "creds"},
            "podSelector": {"matchLabels": {"app": "haproxy"}},
            "templatingSettings": {"extraContext": {"greeting": "hello", "keep": "yes"}},
            "watchedResources": {
                "things": {
                    "apiVersion": "v1",
                    "resources": "things",
                    "indexBy": ["metadata.namespace", "metadata.name"],
                }
            },
            "haproxyConfig": {
                "template": template
                or (
                    "{{ extraContext.greeting }} {{ extraContext.keep }}\n"
                    "{% for t in resources.things.list() %}thing {{ t.metadata.name }} {{ t.spec.color }}\n{% endfor %}"
                    "pods {{ controller.haproxy_pods.count() }}\n"
                    "{% if currentConfig %}current {{ currentConfig.backends | list | join(',') }}\n{% endif %}"
                    "{% if extraContext.boom %}{{ fail('boom requested') }}{% endif %}"
                )
            },
            "validationTests": tests,
        }
    ).spec


def runner_for(tests: dict[str, Any], template: str | None = None) -> ValidationTestRunner:
    config_spec = spec(tests, template)
    return ValidationTestRunner(
        config_spec, compile_templates(config_spec), HAProxyValidator("haproxy", runner=OkRunner())
    )


def test_global_fixtures_merge_into_every_test_and_test_objects_win() -> None:
    runner = runner_for(
        {
            "_global": {
                "fixtures": {"things": [thing("a", "red"), thing("b", "blue")], "haproxy-pods": [pod("p1")]},
                "assertions": [{"type": "contains", "pattern": "thing a red"}],
            },
            "override": {
                "fixtures": {"things": [thing("a", "green"), thing("c", "black")]},
                "extraContext": {"greeting": "hi"},
                "currentConfig": "backend old\n    server SRV_1 1.2.3.4:80\n",
                "assertions": [
                    {"type": "match_order", "patterns": ["^hi yes$", "thing a green", "thing b blue", "thing c black"]},
                    {"type": "contains", "pattern": "^pods 1$"},
                    {"type": "contains", "pattern": "^current old$"},
                    {"type": "jsonpath", "jsonpath": "{.resources.things[0].spec.color}", "expected": "green"},
                    {"type": "jsonpath", "jsonpath": "controller.haproxy_pods[0].metadata.name", "expected": "p1"},
                    {"type": "jsonpath", "jsonpath": "currentConfig.backends.old.servers.SRV_1.port", "expected": "80"},
                    {"type": "deterministic"},
                    {"type": "haproxy_valid"},
                ],
            },
        }
    )
    report = runner.run()
    assert [r.name for r in report.results] == ["_global", "override"]
    assert report.passed, report_summary(report)
    assert report.counts == (2, 0)


def test_a_render_error_fails_the_test_unless_an_assertion_targets_it() -> None:
    runner = runner_for(
        {
            "expected-error": {
                "fixtures": {},
                "extraContext": {"boom": True},
                "assertions": [{"type": "contains", "target": "rendering_error", "pattern": "boom requested"}],
            },
            "unexpected-error": {
                "fixtures": {},
                "extraContext": {"boom": True},
                "assertions": [{"type": "not_contains", "pattern": "x"}],
            },
        }
    )
    report = runner.run()
    by_name = {r.name: r for r in report.results}
    assert by_name["expected-error"].passed
    failed = by_name["unexpected-error"]
    assert not failed.passed and failed.rendering_error is not None and "boom requested" in failed.rendering_error
    assert not report.passed
    summary = report_summary(report)
    assert "✗ unexpected-error" in summary and "rendering error: template 'haproxy.cfg' line 5" in summary
    data = report_data(report)
    assert data["summary"] == {"total": 2, "passed": 1, "failed": 1}


def test_unknown_fixture_type_fails_the_test_with_the_field() -> None:
    bad = {"fixtures": {"widgets": [thing("a", "x")]}, "assertions": [{"type": "deterministic"}]}
    runner = runner_for({"bad": bad})
    result = runner.run().results[0]
    assert not result.passed
    assert result.rendering_error is not None and "fixtures.widgets: not a watched resource" in result.rendering_error


def test_run_only_one_test_and_unknown_test_name() -> None:
    tests = {
        "a": {"fixtures": {}, "assertions": [{"type": "deterministic"}]},
        "b": {"fixtures": {}, "assertions": [{"type": "deterministic"}]},
    }
    runner = runner_for(tests)
    assert [r.name for r in runner.run("b").results] == ["b"]
    with pytest.raises(KeyError, match="no validation test named 'c'"):
        runner.run("c")


def test_fixture_helpers() -> None:
    merged = merge_fixtures({"things": [thing("a", "1"), thing("b", "1")]}, {"things": [thing("a", "2")], "x": []})
    assert [t["spec"]["color"] for t in merged["things"]] == ["2", "1"] and merged["x"] == []
    config_spec = spec({})
    with pytest.raises(FixtureError, match=r"fixtures.things\[0\]: metadata.name is required"):
        build_stores(config_spec, {"things": [{"metadata": {"namespace": "ns"}}]})
    with pytest.raises(FixtureError, match=r"fixtures.things\[0\]: not a Kubernetes object"):
        build_stores(config_spec, {"things": ["text"]})


def test_http_resources_answer_http_fetch_merged_over_global() -> None:
    template = ("a={{ http.fetch('http://x.example/a') }} b={{ http.fetch('http://x.example/b') }}\n"
                "{% if extraContext.other %}{{ http.fetch('http://x.example/unmocked') }}{% endif %}")
    runner = runner_for(
        {
            "_global": {
                "fixtures": {},
                "httpResources": [{"url": "http://x.example/a", "content": "1"},
                                  {"url": "http://x.example/b", "content": "2"}],
                "assertions": [{"type": "contains", "pattern": "^a=1 b=2$"}],
            },
            "own": {
                "fixtures": {},
                "httpResources": [{"url": "http://x.example/b", "content": "two"}],
                "assertions": [{"type": "contains", "pattern": "^a=1 b=two$"}],
            },
            "unmocked": {
                "fixtures": {},
                "extraContext": {"other": True},
                "assertions": [{"type": "contains", "target": "rendering_error",
                                "pattern": "no httpResources fixture"}],
            },
        },
        template,
    )
    report = runner.run()
    assert report.passed, report_summary(report)
    assert report.counts == (3, 0)
