"""The validating webhook with the nginx library: at ``kubectl apply`` a refused snippet or an invalid value is an
admission warning naming the Ingress and the annotation; control characters deny the Ingress."""

from __future__ import annotations

from haptic.validation.config_file import read_config_file
from haptic.webhook.admission import AdmissionValidator
from tests.support.admission import ingress, review
from tests.support.paths import REPO
from tests.unit.haptic.webhook.test_admission import RenderingCheck

N = "nginx.ingress.kubernetes.io/"


def validator() -> AdmissionValidator:
    spec = read_config_file(REPO / "scenarios" / "configs" / "nginx-library.yaml").spec
    return AdmissionValidator.from_spec(spec, spec.make_stores(), RenderingCheck(spec))


async def test_snippets_and_invalid_values_are_admitted_with_warnings_naming_the_annotation() -> None:
    snippet = ingress("legacy", ingress_class="nginx", annotations={
        N + "configuration-snippet": 'more_set_headers "X: y";\n', N + "proxy-body-size": "lots"})
    decision = await validator().review(review("CREATE", snippet))
    assert decision.allowed
    warnings = decision.response()["response"]["warnings"]
    assert any("shop/legacy" in w and f"{N}configuration-snippet" in w and "AnnotationRefused" in w for w in warnings)
    assert any(f"{N}proxy-body-size" in w and "AnnotationInvalid" in w for w in warnings)


async def test_control_characters_in_an_nginx_annotation_deny_the_ingress() -> None:
    hostile = ingress("evil", ingress_class="nginx", annotations={N + "upstream-vhost": "x.test\n    bind :6666"})
    decision = await validator().review(review("CREATE", hostile))
    assert not decision.allowed
    assert f"annotation {N}upstream-vhost contains control characters" in decision.message
