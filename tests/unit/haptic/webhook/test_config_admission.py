"""The webhook's review of the controller's own HAProxyTemplateConfig: routing, verdicts, registration,
and the check itself (schema, templates, render + haproxy -c, tests) against a stub haproxy."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from haptic.config.models import HAProxyTemplateConfigSpec
from haptic.validation.process import ProcessResult
from haptic.webhook.admission import AdmissionValidator, ConfigVerdict
from haptic.webhook.config_check import review_config
from haptic.webhook.configuration import build_webhook_configuration
from haptic.webhook.proposal_check import DryRunCheck
from tests.support.admission import review

CONFIG_GVR = {"group": "haproxy-haptic.org", "version": "v1alpha1", "resource": "haproxytemplateconfigs"}
CONFIG_GVK = {"group": "haproxy-haptic.org", "version": "v1alpha1", "kind": "HAProxyTemplateConfig"}
SPEC: dict[str, Any] = {
    "credentialsSecretRef": {"name": "creds"},
    "podSelector": {"matchLabels": {"app": "haproxy"}},
    "watchedResources": {"things": {"apiVersion": "v1", "resources": "things", "indexBy": ["metadata.name"],
                                    "enableValidationWebhook": True}},
    "haproxyConfig": {"template": "global\n{% for t in resources.things.list() %}# {{ t.metadata.name }}\n"
                                  "{% endfor %}"},
}


def config(name: str = "haproxy-config", namespace: str = "haptic", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "haproxy-haptic.org/v1alpha1", "kind": "HAProxyTemplateConfig",
            "metadata": {"name": name, "namespace": namespace}, "spec": {**SPEC, **spec}}


def validator(seen: list[Mapping[str, Any]], problems: tuple[str, ...] = ()) -> AdmissionValidator:
    spec = HAProxyTemplateConfigSpec.model_validate(SPEC)

    async def unused(stores: Any) -> Any:
        raise AssertionError("objects are not reviewed here")

    v = AdmissionValidator.from_spec(spec, spec.make_stores(), unused)

    async def check(obj: Mapping[str, Any]) -> ConfigVerdict:
        seen.append(obj)
        return ConfigVerdict(problems, ("a warning",))

    v.config_check, v.config_target = check, ("haptic", "haproxy-config")
    return v


async def test_the_controllers_own_config_is_reviewed_and_denied_with_the_problems() -> None:
    seen: list[Mapping[str, Any]] = []
    decision = await validator(seen, ("validationTest t: failed",)).review(
        review("UPDATE", config(), config(), gvr=CONFIG_GVR, gvk=CONFIG_GVK))
    assert not decision.allowed and len(seen) == 1
    assert "would not be adopted: validationTest t: failed" in decision.message
    assert decision.warnings == ("a warning",)


async def test_other_configs_deletes_and_status_updates_are_allowed_unchecked() -> None:
    seen: list[Mapping[str, Any]] = []
    v = validator(seen, ("bad",))
    for body in (review("CREATE", config(name="other"), gvr=CONFIG_GVR, gvk=CONFIG_GVK),
                 review("CREATE", config(namespace="elsewhere"), gvr=CONFIG_GVR, gvk=CONFIG_GVK),
                 review("DELETE", None, config(), gvr=CONFIG_GVR, gvk=CONFIG_GVK),
                 review("UPDATE", config(), config(), gvr=CONFIG_GVR, gvk=CONFIG_GVK, sub_resource="status")):
        assert (await v.review(body)).allowed
    assert seen == []


def test_the_config_webhook_is_registered_for_its_namespace_and_fails_open() -> None:
    body = build_webhook_configuration([], "", url="https://127.0.0.1:9443/validate", config_namespace="haptic")
    (hook,) = body["webhooks"]
    assert hook["name"] == "haproxytemplateconfigs.haproxy-haptic.org.validate.haproxy-haptic.org"
    assert hook["failurePolicy"] == "Ignore"
    assert hook["namespaceSelector"] == {"matchLabels": {"kubernetes.io/metadata.name": "haptic"}}
    assert hook["rules"][0]["resources"] == ["haproxytemplateconfigs"]
    assert build_webhook_configuration([], "", url="https://127.0.0.1:9443/validate")["webhooks"] == []


class StubHAProxy:
    """haproxy -c that refuses any config containing ``refuse-me``."""

    def __init__(self) -> None:
        self.calls = 0

    async def run(self, argv: Sequence[str], *, cwd: str, time_limit: float) -> ProcessResult:
        self.calls += 1
        path = Path(cwd) / argv[list(argv).index("-f") + 1]
        text = path.read_text()
        if "refuse-me" in text:
            return ProcessResult(1, "", f"[ALERT] (1) : config : parsing [{path}:2] : unknown keyword 'refuse-me'\n")
        return ProcessResult(0, "", "")


async def _review(obj: dict[str, Any], failing_tests: list[str] | None = None,
                  running: dict[str, Any] | None = None) -> ConfigVerdict:
    stub = StubHAProxy()

    def make(spec: HAProxyTemplateConfigSpec) -> DryRunCheck:
        return DryRunCheck.from_spec(spec, "haproxy", runner=stub)

    async def tests(spec: HAProxyTemplateConfigSpec) -> list[str]:
        return list(failing_tests or [])

    spec = HAProxyTemplateConfigSpec.model_validate(running or SPEC)
    return await review_config(obj, spec.make_stores(), make, tests, make(spec))


async def test_the_check_stops_at_the_first_failing_stage() -> None:
    assert (await _review(config(watchedResources={}))).problems[0].startswith("HAProxyTemplateConfig")
    broken = await _review(config(haproxyConfig={"template": "{% for %}"}))
    assert broken.problems[0].startswith("templates: ")
    failing = await _review(config(haproxyConfig={"template": "{{ fail('no') }}"}))
    assert failing.problems[0].startswith("rendering failed: ")
    refused = await _review(config(haproxyConfig={"template": "global\n    refuse-me\n"}))
    assert refused.problems[0].startswith("haproxy -c: ") and "refuse-me" in refused.problems[0]
    tests = await _review(config(), ["validationTest x: failed"])
    assert tests.problems == ("validationTest x: failed",)
    assert (await _review(config())).problems == ()


async def test_a_haproxy_error_the_running_config_has_too_is_only_a_warning() -> None:
    both = {"template": "global\n    refuse-me\n"}
    verdict = await _review(config(haproxyConfig={"template": "global\n    refuse-me\n# v2\n"}),
                            running={**SPEC, "haproxyConfig": both})
    assert verdict.problems == ()
    assert any("rejects the running configuration's render too" in w for w in verdict.warnings)
