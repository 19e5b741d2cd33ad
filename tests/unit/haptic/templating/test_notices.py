"""Notices: what a render says about single objects (warn with an object, exclude, reject_unsafe, skipped)."""

from __future__ import annotations

import pytest

from haptic.templating.engine import RenderInputs
from haptic.templating.errors import TemplateFailure
from haptic.templating.notices import UNSAFE_INPUT, ObjectNotice, ObjectRef, field_of_reason, object_ref
from tests.unit.haptic.templating.helpers import engine_for, render_result

APP = {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
       "metadata": {"namespace": "app", "name": "web", "uid": "u-1", "resourceVersion": "7"}}


def test_warn_with_an_object_is_a_notice_and_a_warning() -> None:
    result = render_result(
        "{{ warn('plain') }}{{ warn('TLS Secret x not found', extraContext.ing, 'TLSSecretNotFound', 'spec.tls[0]') }}"
        "{{ exclude(extraContext.ing, 'HostConflict', 'host a.test is owned by Ingress other/a',"
        " 'spec.rules[0].host') }}",
        ing=APP,
    )
    ref = ObjectRef("Ingress", "app", "web", "networking.k8s.io/v1", "u-1", "7")
    assert result.notices == (
        ObjectNotice(ref, "HostConflict", "host a.test is owned by Ingress other/a", "spec.rules[0].host", True),
        ObjectNotice(ref, "TLSSecretNotFound", "TLS Secret x not found", "spec.tls[0]", False),
    )
    assert result.warnings[0] == "plain"
    assert "excluding Ingress app/web (spec.rules[0].host): host a.test is owned" in result.warnings[2]


@pytest.mark.parametrize("source", [
    "{{ exclude(extraContext.ing, 'not camel', 'x') }}",
    "{{ exclude('just a string', 'HostConflict', 'x') }}",
])
def test_exclude_refuses_bad_reasons_and_non_objects(source: str) -> None:
    with pytest.raises(TemplateFailure):
        render_result(source, ing=APP)


def test_reject_unsafe_records_an_unsafe_input_exclusion_naming_the_field() -> None:
    bad = {"kind": "Ingress", "metadata": {"namespace": "n", "name": "bad",
                                           "annotations": {"haproxy-haptic.org/timeout-server": "1 d"}},
           "spec": {"rules": [{"host": "a b"}]}}
    result = render_result("{{ extraContext.objs | reject_unsafe('ingress') | length }}", objs=[bad])
    assert result.config == "0"
    (notice,) = result.notices
    assert notice.reason == UNSAFE_INPUT and notice.excluded
    assert notice.field == "spec.rules[0].host"
    assert "is not a duration" in notice.message
    # the warning text stays what it was (logs, admission messages)
    assert result.warnings[0].startswith("skipping Ingress 'n'/'bad': ")


def test_skipped_names_the_objects_the_caller_leaves_out() -> None:
    engine = engine_for("{{ skipped(extraContext.ing) }}")
    assert engine.render(RenderInputs(extra_context={"ing": APP})).config == "False"
    skip = frozenset({("Ingress", "app", "web")})
    assert engine.render(RenderInputs(extra_context={"ing": APP}, skip=skip)).config == "True"


def test_field_of_reason() -> None:
    assert field_of_reason("rules[1].http.paths[0].path '/a b' contains unsafe characters") == \
        "spec.rules[1].http.paths[0].path"
    assert field_of_reason("annotation haproxy-haptic.org/balance is not a known balance algorithm") == \
        "metadata.annotations[haproxy-haptic.org/balance]"
    assert field_of_reason("metadata.name 'X' is not a DNS name") == "metadata.name"
    assert field_of_reason("tls.crt is not a PEM certificate") == "data[tls.crt]"
    assert field_of_reason("not an object") == ""
    assert object_ref("nope") is None


def test_object_ref_is_the_dataclass_its_fields_make() -> None:
    # built without the frozen dataclass's __init__: still equal, hashed, ordered and frozen as one built with it
    obj = {"apiVersion": "v1", "kind": "Service",
           "metadata": {"namespace": "ns", "name": "web", "uid": "u", "resourceVersion": "7"}}
    ref = object_ref(obj)
    made = ObjectRef("Service", "ns", "web", "v1", "u", "7")
    assert ref == made and hash(ref) == hash(made) and ref is not None and not ref < made
    assert ref.key == ("Service", "ns", "web") and repr(ref) == repr(made)
    with pytest.raises(AttributeError):
        ref.name = "other"  # type: ignore[misc]
