"""The webhook's validator follows the controller's iterations (simulator, virtual time, real haproxy -c)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from haptic.controller.loop.webhook_binding import IterationValidators
from haptic.webhook.admission import AdmissionHandler
from simulator.cluster_objects import endpoint_slice, ingress, template_config
from tests.support.admission import review

pytestmark = pytest.mark.looptime


def webhook_config(reserved: str) -> dict[str, Any]:
    """The simulator's slot template, webhook enabled, refusing to render an Ingress named ``reserved``."""
    config = template_config()
    config["spec"]["watchedResources"]["ingresses"]["enableValidationWebhook"] = True
    config["spec"]["haproxyConfig"]["template"] += (
        f"\n{{% for i in resources.ingresses.list() if i.metadata.name == '{reserved}' %}}"
        f"{{{{ fail('{reserved} is reserved') }}}}{{% endfor %}}\n"
    )
    return config


async def test_validator_follows_iterations(make_harness: Any) -> None:
    h = await make_harness(config=webhook_config("forbidden"))
    binding = IterationValidators(h.replicas[0].controller)
    handler = AdmissionHandler(source=binding)
    h.apply(ingress("web", "web.example", "web"))
    h.apply(endpoint_slice("web", ["10.1.0.1"]))
    await h.settle()

    ok = await handler.review(review("CREATE", ingress("api", "api.example", "api")))
    assert ok.allowed, ok.message
    denied = await handler.review(review("CREATE", ingress("forbidden", "f.example", "web")))
    assert not denied.allowed and "rendering failed" in denied.message and "forbidden is reserved" in denied.message
    assert denied.message.startswith("Ingress default/forbidden:")
    # A brace in the host breaks the ACL the template writes: only haproxy -c notices.
    broken = await handler.review(review("CREATE", ingress("brace", "x } y", "web")))
    assert not broken.allowed and "haproxy -c" in broken.message, broken.message
    assert binding.built == 1
    assert h.get("networking.k8s.io/v1", "Ingress", "web", "default")["metadata"]["name"] == "web"

    # A new config generation: the next review gets a validator built from it.
    new = webhook_config("reserved")
    current = copy.deepcopy(h.template_config())
    current["spec"] = new["spec"]
    h.apply(current)
    await h.settle()
    assert h.replicas[0].controller.iterations == 2
    reserved = await handler.review(review("CREATE", ingress("reserved", "r.example", "web")))
    assert not reserved.allowed and "reserved is reserved" in reserved.message
    assert (await handler.review(review("CREATE", ingress("forbidden", "f.example", "web")))).allowed
    assert binding.built == 2


async def test_reviews_fail_open_before_the_first_iteration(make_harness: Any) -> None:
    h = await make_harness(config={})
    handler = AdmissionHandler(source=IterationValidators(h.replicas[0].controller))
    decision = await handler.review(review("CREATE", ingress("x", "x } y", "web")))
    assert decision.allowed
