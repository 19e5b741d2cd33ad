"""Admission logic: overlays, basic checks, hostile objects, fail-open, timeouts, bounded messages.

The proposal check here renders the real templates (a small config, or the Ingress example) with the
real engine; checks that need ``haproxy -c`` are in tests/integration/haptic/webhook/test_admission_haproxy.py.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Mapping
from typing import Any

import pytest

from haptic.config.models import HAProxyTemplateConfigSpec
from haptic.controller.events import WebhookValidationDenied, WebhookValidationRequest
from haptic.controller.loop.webhook_binding import decision_events, publishing_observer
from haptic.core import Event
from haptic.k8s.store import ResourceStore
from haptic.templating.context import StoreLike
from haptic.templating.engine import RenderInputs, TemplateEngine, TemplateSet
from haptic.templating.errors import TemplatingError
from haptic.webhook.admission import (
    MAX_MESSAGE,
    AdmissionHandler,
    AdmissionReviewError,
    AdmissionValidator,
    ProposalOutcome,
    parse_review,
    webhook_resources,
)
from tests.support.admission import ingress, ingress_example, review

SMALL_SPEC: dict[str, Any] = {
    "credentialsSecretRef": {"name": "creds"},
    "podSelector": {"matchLabels": {"app": "haproxy"}},
    "watchedResources": {
        "ingresses": {
            "apiVersion": "networking.k8s.io/v1",
            "resources": "ingresses",
            "indexBy": ["metadata.namespace", "metadata.name"],
            "enableValidationWebhook": True,
        },
        "services": {"apiVersion": "v1", "resources": "services", "indexBy": ["metadata.namespace"]},
    },
    "haproxyConfig": {
        "template": (
            "{% for ing in resources.ingresses.list() %}"
            "{% if (ing.metadata.annotations or {}).get('example.test/fail') %}"
            "{{ fail('ingress ' ~ ing.metadata.name ~ ' asks to fail') }}{% endif %}"
            "backend {{ ing.metadata.namespace }}_{{ ing.metadata.name }}\n"
            "{% endfor %}"
        )
    },
}


class RenderingCheck:
    """Renders the real templates with the stores it is given and reports like a validator would.

    ``duplicate`` names a backend whose second occurrence is a problem (a stand-in for ``haproxy -c``
    that the unit tests can reason about); every call records what the stores held.
    """

    def __init__(self, spec: HAProxyTemplateConfigSpec) -> None:
        self.engine = TemplateEngine(TemplateSet.from_spec(spec))
        self.spec = spec
        self.seen: list[dict[str, list[str]]] = []
        self.configs: list[str] = []

    async def __call__(self, stores: Mapping[str, StoreLike]) -> ProposalOutcome:
        self.seen.append(
            {
                name: [f"{o['metadata'].get('namespace', '')}/{o['metadata']['name']}" for o in store.list()]
                for name, store in stores.items()
            }
        )
        try:
            result = self.engine.render(
                RenderInputs(stores=stores, extra_context=self.spec.templating_settings.extra_context)
            )
        except TemplatingError as exc:
            return ProposalOutcome((f"rendering failed: {exc}",))
        self.configs.append(result.config)
        lines = [line for line in result.config.splitlines() if line.startswith("backend ")]
        problems = tuple(f"duplicate {line}" for line in sorted(set(lines)) if lines.count(line) > 1)
        return ProposalOutcome(problems, result.warnings)


def small() -> tuple[AdmissionValidator, dict[str, ResourceStore], RenderingCheck]:
    spec = HAProxyTemplateConfigSpec.model_validate(SMALL_SPEC)
    stores = spec.make_stores()
    stores["ingresses"].apply(ingress("web"))
    check = RenderingCheck(spec)
    return AdmissionValidator.from_spec(spec, stores, check), stores, check


async def test_create_is_allowed_and_the_check_sees_the_overlay_not_the_live_store() -> None:
    validator, stores, check = small()
    before = copy.deepcopy(stores["ingresses"].list())
    decision = await validator.review(review("CREATE", ingress("api", service="api")))
    assert decision.allowed and decision.result == "allowed"
    assert decision.response() == {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "response": {"uid": "req-1", "allowed": True},
    }
    assert check.seen[-1]["ingresses"] == ["shop/api", "shop/web"]
    assert "backend shop_api" in check.configs[-1]
    assert stores["ingresses"].list() == before


async def test_update_replaces_the_stored_object() -> None:
    validator, stores, check = small()
    old = ingress("web")
    new = ingress("web", host="other.example.test")
    decision = await validator.review(review("UPDATE", new, old))
    assert decision.allowed
    assert check.seen[-1]["ingresses"] == ["shop/web"]
    assert stores["ingresses"].get("shop", "web") == old


async def test_delete_overlay_removes_the_object_without_touching_the_store() -> None:
    validator, stores, check = small()
    stores["ingresses"].apply(ingress("api"))
    decision = await validator.review(review("DELETE", None, ingress("web")))
    assert decision.allowed
    assert check.seen[-1]["ingresses"] == ["shop/api"]
    assert "backend shop_web" not in check.configs[-1]
    assert [o["metadata"]["name"] for o in stores["ingresses"].list()] == ["api", "web"]


async def test_render_error_denies_naming_object_and_template() -> None:
    validator, _, _ = small()
    bad = ingress("boom", annotations={"example.test/fail": "yes"})
    decision = await validator.review(review("CREATE", bad, uid="u-7"))
    assert not decision.allowed and decision.result == "denied"
    assert decision.message.startswith("Ingress shop/boom: ")
    assert "rendering failed" in decision.message and "asks to fail" in decision.message
    body = decision.response()["response"]
    assert body["uid"] == "u-7" and body["status"]["code"] == 403 and body["status"]["reason"] == "Forbidden"


async def test_problem_reported_by_the_check_denies() -> None:
    validator, stores, _ = small()
    stores["ingresses"].apply(ingress("x_web", namespace="shop"))
    clash = ingress("web", namespace="shop_x")  # renders "backend shop_x_web", as shop/x_web does
    decision = await validator.review(review("CREATE", clash))
    assert not decision.allowed
    assert "the configuration would be invalid: duplicate backend shop_x_web" in decision.message


async def test_unregistered_gvr_subresource_and_disabled_resource_are_allowed_unchecked() -> None:
    validator, _, check = small()
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"namespace": "a", "name": "d"}}
    apps = {"group": "apps", "version": "v1", "resource": "deployments"}
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"namespace": "a", "name": "s"}}
    core_gvr, core_gvk = {"version": "v1", "resource": "services"}, {"version": "v1", "kind": "Service"}
    beta = {"group": "networking.k8s.io", "version": "v1beta1", "resource": "ingresses"}
    for body in (
        review("CREATE", deployment, gvr=apps, gvk={"group": "apps", "version": "v1", "kind": "Deployment"}),
        review("CREATE", service, gvr=core_gvr, gvk=core_gvk),
        review("UPDATE", ingress("web"), ingress("web"), sub_resource="status"),
        review("CREATE", ingress("web"), gvr=beta),
    ):
        decision = await validator.review(body)
        assert decision.allowed, body
    assert check.seen == []


async def test_name_or_generate_name_is_required() -> None:
    validator, _, check = small()
    nameless = ingress("x")
    del nameless["metadata"]["name"]
    decision = await validator.review(review("CREATE", nameless))
    assert not decision.allowed and decision.response()["response"]["status"]["code"] == 400
    assert "metadata.name or metadata.generateName is required" in decision.message
    generated = ingress("x")
    del generated["metadata"]["name"]
    generated["metadata"]["generateName"] = "gen-"
    decision = await validator.review(review("CREATE", generated))
    assert decision.allowed
    odd = {**ingress("x"), "metadata": "not an object"}
    decision = await validator.review(review("CREATE", odd))
    assert not decision.allowed and "metadata.name or metadata.generateName is required" in decision.message
    assert check.seen[-1]["ingresses"] == ["shop/gen-xxxxx", "shop/web"]


async def test_control_characters_in_our_annotations_are_denied_with_the_field_named() -> None:
    validator, _, check = small()
    hostile = ingress("evil", annotations={"haproxy-haptic.org/timeout-server": "5s\n    bind :6666"})
    decision = await validator.review(review("CREATE", hostile))
    assert not decision.allowed
    assert "metadata.annotations[haproxy-haptic.org/timeout-server]" in decision.message
    assert check.seen == []
    # Other controllers' multi-line annotations are theirs to interpret.
    theirs = ingress("fine", annotations={"nginx.ingress.kubernetes.io/configuration-snippet": "a;\nb;"})
    assert (await validator.review(review("CREATE", theirs))).allowed


async def test_timeout_answers_with_an_error_decision() -> None:
    spec = HAProxyTemplateConfigSpec.model_validate(SMALL_SPEC)
    started = asyncio.Event()

    async def slow(stores: Mapping[str, StoreLike]) -> ProposalOutcome:
        started.set()
        await asyncio.sleep(3600)
        return ProposalOutcome()

    validator = AdmissionValidator.from_spec(spec, spec.make_stores(), slow, timeout=0.01)
    decision = await validator.review(review("CREATE", ingress("web")))
    assert started.is_set()
    assert not decision.allowed and decision.result == "error"
    assert "did not finish within 0.01s" in decision.message


async def test_a_failing_check_answers_instead_of_raising() -> None:
    spec = HAProxyTemplateConfigSpec.model_validate(SMALL_SPEC)

    async def broken(stores: Mapping[str, StoreLike]) -> ProposalOutcome:
        raise RuntimeError("kaput")

    validator = AdmissionValidator.from_spec(spec, spec.make_stores(), broken)
    decision = await validator.review(review("CREATE", ingress("web")))
    assert decision.result == "error" and "RuntimeError: kaput" in decision.message
    assert decision.response()["response"]["status"]["code"] == 500


async def test_messages_are_bounded() -> None:
    spec = HAProxyTemplateConfigSpec.model_validate(SMALL_SPEC)

    async def verbose(stores: Mapping[str, StoreLike]) -> ProposalOutcome:
        return ProposalOutcome(tuple(f"problem {i} " + "x" * 500 for i in range(50)), ("w " * 1000,) * 40)

    validator = AdmissionValidator.from_spec(spec, spec.make_stores(), verbose)
    decision = await validator.review(review("CREATE", ingress("web")))
    assert not decision.allowed
    assert len(decision.message) <= MAX_MESSAGE and decision.message.endswith("(truncated)")
    assert decision.message.startswith("Ingress shop/web: the configuration would be invalid: problem 0")


async def test_hostile_ingress_skipped_by_the_library_is_denied_with_the_field_named() -> None:
    config = ingress_example()
    stores = config.spec.make_stores()
    check = RenderingCheck(config.spec)
    validator = AdmissionValidator.from_spec(config.spec, stores, check)
    hostile = ingress("evil", host="evil.example.test", path="/x\n    http-request deny")
    decision = await validator.review(review("CREATE", hostile))
    assert not decision.allowed
    assert "unsafe fields" in decision.message
    assert "rules[0].http.paths[0].path" in decision.message
    fine = await validator.review(review("CREATE", ingress("ok")))
    assert fine.allowed, fine.message
    # An Ingress of another class is not ours to render, so not ours to refuse.
    other = await validator.review(review("CREATE", ingress("other", path="/x y", ingress_class="nginx")))
    assert other.allowed, other.message


async def test_template_warnings_about_the_object_become_admission_warnings() -> None:
    config = ingress_example()
    validator = AdmissionValidator.from_spec(config.spec, config.spec.make_stores(), RenderingCheck(config.spec))
    tls = ingress("secure")
    tls["spec"]["tls"] = [{"hosts": ["shop.example.test"], "secretName": "missing-tls"}]
    decision = await validator.review(review("CREATE", tls))
    assert decision.allowed
    warnings = decision.response()["response"]["warnings"]
    assert any("shop/secure" in w and "missing-tls" in w for w in warnings)
    # Warnings about another object whose name merely starts the same are not this object's.
    validator.stores["ingresses"].apply({**tls, "metadata": {"namespace": "shop", "name": "secure-2"}})
    plain = await validator.review(review("CREATE", ingress("secure")))
    assert plain.allowed and "warnings" not in plain.response()["response"]


async def test_malformed_reviews_name_the_field() -> None:
    body = review("CREATE", ingress("web"))
    del body["request"]["uid"]
    with pytest.raises(AdmissionReviewError, match=r"request\.uid"):
        parse_review(body)
    with pytest.raises(AdmissionReviewError, match="apiVersion"):
        parse_review({**review("CREATE", ingress("web")), "apiVersion": "admission.k8s.io/v1beta1"})
    with pytest.raises(AdmissionReviewError, match="operation"):
        parse_review(review("PATCH", ingress("web")))


async def test_handler_fails_open_without_validator_and_tells_observers() -> None:
    seen = []
    published: list[Event] = []
    handler = AdmissionHandler(observers=[seen.append, publishing_observer(published.append)])
    decision = await handler.review(review("CREATE", ingress("web"), uid="u-open"))
    assert decision.allowed and decision.uid == "u-open"
    validator, _, _ = small()
    handler.validator = validator
    denied = await handler.review(review("CREATE", ingress("b", annotations={"example.test/fail": "1"})))
    assert not denied.allowed
    assert [d.uid for d in seen] == ["u-open", "req-1"]
    assert [e.type for e in published] == [
        "webhook.validation.request", "webhook.validation.allowed",
        "webhook.validation.request", "webhook.validation.denied",
    ]


def test_decision_events_and_registered_resources() -> None:
    spec = HAProxyTemplateConfigSpec.model_validate(SMALL_SPEC)
    assert [str(g) for g in webhook_resources(spec.watched_resources)] == ["networking.k8s.io/v1/ingresses"]
    validator = AdmissionValidator.from_spec(spec, spec.make_stores(), RenderingCheck(spec))
    assert validator.targets(validator.registered()[0]) == ["ingresses"]
    decision = asyncio.run(validator.review(review("CREATE", ingress("b", annotations={"example.test/fail": "1"}))))
    request, outcome = decision_events(decision)
    assert isinstance(request, WebhookValidationRequest) and request.operation == "CREATE"
    assert isinstance(outcome, WebhookValidationDenied)
    assert (outcome.kind, outcome.namespace, outcome.name) == ("Ingress", "shop", "b")
    assert outcome.reason == decision.message
