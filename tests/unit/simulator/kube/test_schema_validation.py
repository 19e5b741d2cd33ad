"""Structural schemas and CEL rules of CRDs as the API server applies them: pruning, defaults, messages."""

from __future__ import annotations

from typing import Any

import pytest

from haptic.k8s.api import ApiError, Invalid
from simulator.kube import FakeKubeAPI
from simulator.kube.cel_rules import check
from simulator.kube.field_validation import collecting
from simulator.kube.schema_validation import apply_defaults, prune, validate

SPEC_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["size"],
    "properties": {
        "size": {"type": "integer", "minimum": 1, "maximum": 10},
        "color": {"type": "string", "enum": ["red", "blue"], "default": "red"},
        "name": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 5, "minLength": 2},
        "port": {"x-kubernetes-int-or-string": True},
        "ratio": {"type": "number", "exclusiveMinimum": True, "minimum": 0},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2, "x-kubernetes-list-type": "set"},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        "nested": {"type": "object", "properties": {"depth": {"type": "integer", "default": 3}}, "default": {}},
        "maybe": {"type": "string", "nullable": True},
    },
}
SCHEMA: dict[str, Any] = {"type": "object", "properties": {
    "apiVersion": {"type": "string"}, "kind": {"type": "string"}, "metadata": {"type": "object"},
    "spec": SPEC_SCHEMA, "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}}}}


def crd(schema: dict[str, Any] = SCHEMA, rules: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    if rules is not None:
        schema = {**schema, "properties": {**schema["properties"],
                                           "spec": {**schema["properties"]["spec"], "x-kubernetes-validations": rules}}}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                     "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                     "versions": [{"name": "v1", "served": True, "storage": True, "subresources": {"status": {}},
                                   "schema": {"openAPIV3Schema": schema}}]}}


def widget(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": spec}


@pytest.fixture
def api() -> FakeKubeAPI:
    fake = FakeKubeAPI()
    fake.create(fake.resolve("apiextensions.k8s.io/v1", "customresourcedefinitions"), None, crd())
    return fake


def errors_of(obj: dict[str, Any]) -> list[str]:
    return [str(e) for e in validate(obj, SCHEMA)]


def test_messages_are_kube_openapis() -> None:
    assert errors_of(widget(size="big")) == [
        'spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"']
    assert errors_of(widget()) == ["spec.size: Required value"]
    assert errors_of(widget(size=0, color="pink", name="ABCDEFG", ratio=0, tags=["a", "a", "b"])) == [
        "spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1",
        'spec.color: Unsupported value: "pink": supported values: "red", "blue"',
        "spec.name: Too long: may not be longer than 5",
        "spec.name: Invalid value: \"ABCDEFG\": spec.name in body should match '^[a-z]+$'",
        "spec.ratio: Invalid value: 0: spec.ratio in body should be greater than 0",
        "spec.tags: Too many: 3: must have at most 2 items",
        'spec.tags[1]: Duplicate value: "a"',
    ]
    assert errors_of(widget(size=11, port=8080)) == [
        "spec.size: Invalid value: 11: spec.size in body should be less than or equal to 10"]
    assert errors_of(widget(size=1, port=True)) == [
        'spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean"']
    assert errors_of(widget(size=1.0, port="http", labels={"a": 1})) == [
        'spec.labels.a: Invalid value: "integer": spec.labels.a in body must be of type string: "integer"']
    assert errors_of(widget(size=1, maybe=None, nested={"depth": None})) == [
        'spec.nested.depth: Invalid value: "null": spec.nested.depth in body must be of type integer: "null"']


def test_pruning_keeps_declared_and_preserved_fields() -> None:
    obj = {**widget(size=1, bogus=1, free={"anything": {"goes": True}}, nested={"depth": 1, "x": 2}),
           "extra": 1, "metadata": {"name": "w", "surprise": 1}, "status": {"ready": True, "why": "x"}}
    assert sorted(prune(obj, SCHEMA)) == ["extra", "metadata.surprise", "spec.bogus", "spec.nested.x", "status.why"]
    assert obj["spec"] == {"size": 1, "free": {"anything": {"goes": True}}, "nested": {"depth": 1}}
    assert obj["metadata"] == {"name": "w"} and obj["status"] == {"ready": True}


def test_defaults_fill_absent_and_null_fields() -> None:
    obj = widget(size=1, color=None, maybe=None)
    apply_defaults(obj, SCHEMA)
    assert obj["spec"] == {"size": 1, "color": "red", "maybe": None, "nested": {"depth": 3}}


def test_cel_rules_report_like_the_api_server() -> None:
    rules = [{"rule": "self.size <= 5", "message": "size must be at most 5"},
             {"rule": "self.name.lowerAscii() == self.name"},
             {"rule": "self.size >= oldSelf.size", "message": "size may not shrink", "reason": "FieldValueForbidden"},
             {"rule": "self.missing > 1"},
             {"rule": "!has(self.color) || self.color != 'blue'", "fieldPath": ".color",
              "messageExpression": "'no ' + self.color"}]
    schema = {"type": "object", "properties": {"spec": {**SPEC_SCHEMA, "x-kubernetes-validations": rules}}}
    found = [str(e) for e in check(widget(size=7, name="Ab", color="blue"), None, schema)]
    assert found == [
        "spec: Invalid value: size must be at most 5",
        "spec: Invalid value: failed rule: self.name.lowerAscii() == self.name",
        'spec: Invalid value: "object": no such key: missing evaluating rule: self.missing > 1',
        "spec.color: Invalid value: no blue",
    ]
    shrunk = [str(e) for e in check(widget(size=2, name="ab"), widget(size=3), schema)]
    assert "spec: Forbidden: size may not shrink" in shrunk
    assert not [e for e in check(widget(size=3, name="ab"), widget(size=2), schema) if "shrink" in str(e)]


def test_store_refuses_invalid_custom_resources_and_stays_unchanged(api: FakeKubeAPI) -> None:
    rt = api.resolve("example.com/v1", "widgets")
    rv = api.resource_version
    with pytest.raises(Invalid) as info:
        api.create(rt, "default", widget(size="big"))
    assert info.value.message == ('Widget.example.com "w" is invalid: spec.size: Invalid value: "string": '
                                  'spec.size in body must be of type integer: "string"')
    assert info.value.details["causes"] == [{"reason": "FieldValueTypeInvalid", "field": "spec.size",
                                             "message": 'Invalid value: "string": spec.size in body must be of '
                                                        'type integer: "string"'}]
    assert api.resource_version == rv and api.list(rt).items == []
    created = api.create(rt, "default", widget(size=2, bogus=True))
    assert created["spec"] == {"size": 2, "color": "red", "nested": {"depth": 3}}
    with pytest.raises(ApiError) as strict:
        api.patch(rt, "default", "w", "merge", {"spec": {"bogus": 1}}, field_validation="Strict")
    assert strict.value.code == 422 and 'strict decoding error: unknown field "spec.bogus"' in strict.value.message
    with pytest.raises(Invalid):
        api.patch(rt, "default", "w", "merge", {"spec": {"size": 99}})
    assert api.get(rt, "default", "w") is created
    with collecting() as warnings:
        api.patch(rt, "default", "w", "merge", {"spec": {"bogus": 1, "size": 3}})
    assert warnings == ['unknown field "spec.bogus"']
    with pytest.raises(ApiError) as ssa:
        api.patch(rt, "default", "w", "apply", widget(size=3, bogus=1), manager="me")
    assert (ssa.value.code, ssa.value.message) == (500, "failed to create typed patch object (default/w; "
                                                        "example.com/v1, Kind=Widget): .spec.bogus: field not "
                                                        "declared in schema")
    with pytest.raises(ApiError) as bad:
        api.create(rt, "default", widget(size=1), field_validation="Loose")
    assert bad.value.message == ('CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: '
                                 '"Loose": supported values: "", "Ignore", "Strict", "Warn"')


def test_status_writes_are_validated_too(api: FakeKubeAPI) -> None:
    rt = api.resolve("example.com/v1", "widgets")
    api.create(rt, "default", widget(size=1))
    with pytest.raises(Invalid, match=r"status\.ready"):
        api.patch(rt, "default", "w", "merge", {"status": {"ready": "yes"}}, "status")
    assert api.patch(rt, "default", "w", "merge", {"status": {"ready": True}}, "status")["status"] == {"ready": True}
