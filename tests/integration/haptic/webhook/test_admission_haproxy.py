"""The dry-run check with the real ``haproxy -c`` and the Ingress example's templates and validationTests."""

from __future__ import annotations

from typing import Any

import pytest

from haptic.config.models import HAProxyTemplateConfig, ValidationTest
from haptic.k8s.store import ResourceStore
from haptic.webhook.admission import AdmissionValidator
from haptic.webhook.proposal_check import DryRunCheck
from tests.support.admission import ingress, ingress_example, review

pytestmark = pytest.mark.haproxy


def _live_stores(config: HAProxyTemplateConfig) -> dict[str, ResourceStore]:
    """Stores holding the example's _global fixtures (services, endpoint slices, one Ingress)."""
    stores = config.spec.make_stores()
    fixtures: dict[str, list[dict[str, Any]]] = config.spec.validation_tests["_global"].fixtures
    for name, objects in fixtures.items():
        for obj in objects:
            stores[name].apply(obj)
    return stores


def _validator(config: HAProxyTemplateConfig, haproxy_bin: str) -> tuple[AdmissionValidator, DryRunCheck]:
    check = DryRunCheck.from_spec(config.spec, haproxy_bin)
    return AdmissionValidator.from_spec(config.spec, _live_stores(config), check), check


async def test_valid_ingress_is_allowed_after_render_haproxy_and_tests(haproxy_bin: str) -> None:
    validator, check = _validator(ingress_example(), haproxy_bin)
    decision = await validator.review(review("CREATE", ingress("api", host="api.example.test", service="api",
                                                               port=9000)))
    assert decision.allowed, decision.message
    assert await check.test_problems() == []


async def test_haproxy_rejects_what_the_templates_let_through(haproxy_bin: str) -> None:
    validator, _ = _validator(ingress_example(), haproxy_bin)
    # A well-formed duration that HAProxy's timers cannot hold (maximum ~24.8 days).
    huge = ingress("slow", annotations={"haproxy-haptic.org/timeout-server": "999999999d"})
    decision = await validator.review(review("CREATE", huge))
    assert not decision.allowed and decision.result == "denied"
    assert decision.message.startswith("Ingress shop/slow: the configuration would be invalid: haproxy -c:")
    assert "timer overflow" in decision.message and "haproxy.cfg:" in decision.message
    update = await validator.review(review("UPDATE", huge, ingress("web")))
    assert not update.allowed


async def test_failing_validation_test_denies_every_change(haproxy_bin: str) -> None:
    config = ingress_example()
    config.spec.validation_tests["always-broken"] = ValidationTest.model_validate(
        {
            "description": "expects a section the templates never render",
            "fixtures": {},
            "assertions": [{"type": "contains", "description": "has a peers section", "pattern": "^peers "}],
        }
    )
    validator, _ = _validator(config, haproxy_bin)
    decision = await validator.review(review("CREATE", ingress("api", service="api", port=9000)))
    assert not decision.allowed
    assert "validationTest always-broken: has a peers section" in decision.message
    assert "validationTest routing-maps" not in decision.message


async def test_hostile_ingress_is_denied_before_reaching_haproxy(haproxy_bin: str) -> None:
    validator, _ = _validator(ingress_example(), haproxy_bin)
    hostile = ingress("evil", host="evil.example.test\n    bind :6666")
    decision = await validator.review(review("CREATE", hostile))
    assert not decision.allowed
    assert "unsafe fields" in decision.message and "rules[0].host" in decision.message


async def test_delete_of_an_ingress_renders_without_it(haproxy_bin: str) -> None:
    validator, _ = _validator(ingress_example(), haproxy_bin)
    decision = await validator.review(review("DELETE", None, ingress("web")))
    assert decision.allowed, decision.message


async def test_new_fault_is_denied_while_an_older_object_has_the_same_fault(haproxy_bin: str) -> None:
    config = ingress_example()
    stores = _live_stores(config)
    huge = {"haproxy-haptic.org/timeout-server": "999999999d"}
    # Already stored (created before the webhook, or while it failed open): the live render fails too.
    stores["ingresses"].apply(ingress("old-slow", host="old.example.test", annotations=huge))
    validator = AdmissionValidator.from_spec(config.spec, stores, DryRunCheck.from_spec(config.spec, haproxy_bin))
    # haproxy -c says the same of both (only the line differs): the new one is at fault on its own.
    decision = await validator.review(review("CREATE", ingress("new-slow", host="new.example.test",
                                                               annotations=huge)))
    assert not decision.allowed, decision.message
    assert "timer overflow" in decision.message
    fine = await validator.review(review("CREATE", ingress("api", host="api.example.test", service="api",
                                                           port=9000)))
    assert fine.allowed, fine.message
    fixed = await validator.review(review("UPDATE", ingress("old-slow", host="old.example.test"),
                                          ingress("old-slow", host="old.example.test", annotations=huge)))
    assert fixed.allowed, fixed.message
