from __future__ import annotations

import copy
from typing import Any

import pytest

from haptic.k8s.jsonpath import JSONPathError, compile_jsonpath, format_value

OBJ: dict[str, Any] = {
    "metadata": {
        "name": "web",
        "namespace": "default",
        "labels": {"kubernetes.io/service-name": "svc", "app": "web"},
        "managedFields": [{"manager": "kubectl"}],
    },
    "spec": {
        "ingressClassName": "haproxy",
        "rules": [{"host": "a.example"}, {"host": "b.example"}, {"http": {}}],
        "ports": [{"name": "http", "port": 80}, {"name": "https", "port": 443}],
    },
}


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("metadata.namespace", ["default"]),
        ("{.metadata.name}", ["web"]),
        (".metadata.name", ["web"]),
        ("$.metadata.name", ["web"]),
        ("{ .metadata.name }", ["web"]),
        ("metadata.labels['kubernetes.io/service-name']", ["svc"]),
        ('metadata.labels["kubernetes.io/service-name"]', ["svc"]),
        (r"metadata.labels.kubernetes\.io/service-name", ["svc"]),
        ("spec.rules[*].host", ["a.example", "b.example"]),
        ("spec.rules[0].host", ["a.example"]),
        ("spec.rules[-2].host", ["b.example"]),
        ("spec.rules[0:2].host", ["a.example", "b.example"]),
        ("spec.rules[::2].host", ["a.example"]),
        ("spec.ports[*].port", [80, 443]),
        ("spec.ports[0,1].name", ["http", "https"]),
        ("metadata.labels['app','kubernetes.io/service-name']", ["web", "svc"]),
        ("metadata.labels.*", ["web", "svc"]),
        ('spec.ports[?(@.name=="https")].port', [443]),
        ("spec.ports[?(@.name!='https')].port", [80]),
        ("spec.ports[?(@.port>=100)].name", ["https"]),
        ("spec.ports[?(@.port<100)].name", ["http"]),
        ("spec.rules[?(@.host)].host", ["a.example", "b.example"]),
        ("..host", ["a.example", "b.example"]),
        ("spec..port", [80, 443]),
        ("metadata.missing", []),
        ("metadata.name.deeper", []),
        ("spec.rules[7].host", []),
        ("spec.rules.host", []),
        ("$", [OBJ]),
    ],
)
def test_find(expr: str, expected: list[Any]) -> None:
    assert compile_jsonpath(expr).find(OBJ) == expected


def test_first_returns_default_when_nothing_matches() -> None:
    assert compile_jsonpath("spec.rules[*].host").first(OBJ) == "a.example"
    assert compile_jsonpath("spec.nothing").first(OBJ) is None
    assert compile_jsonpath("spec.nothing").first(OBJ, "x") == "x"


def test_wildcard_over_mapping_is_sorted_by_key() -> None:
    assert compile_jsonpath("*").find({"b": 2, "a": 1, "c": 3}) == [1, 2, 3]


@pytest.mark.parametrize(
    "expr",
    [
        "",
        "   ",
        "metadata[",
        "metadata.labels['x]",
        "a..",
        "a[x]",
        "{a",
        "a b",
        "a[1:2:0]",
        "a[?(@.x==nope)]",
        "a[?(x==1)]",
        "a[]",
        "a)",
    ],
)
def test_bad_expressions_raise_naming_the_expression(expr: str) -> None:
    with pytest.raises(JSONPathError) as info:
        compile_jsonpath(expr)
    assert info.value.expression == expr
    assert repr(expr) in str(info.value)


def test_strip_removes_and_never_mutates() -> None:
    original = copy.deepcopy(OBJ)
    stripped = compile_jsonpath("metadata.managedFields").strip(OBJ)
    assert "managedFields" not in stripped["metadata"]
    assert original == OBJ
    # untouched subtrees are shared, not copied
    assert stripped["spec"] is OBJ["spec"]
    assert stripped["metadata"]["labels"] is OBJ["metadata"]["labels"]


def test_strip_through_lists_and_bracket_names() -> None:
    stripped = compile_jsonpath("spec.ports[*].name").strip(OBJ)
    assert stripped["spec"]["ports"] == [{"port": 80}, {"port": 443}]
    labels = compile_jsonpath("metadata.labels['kubernetes.io/service-name']").strip(OBJ)["metadata"]["labels"]
    assert labels == {"app": "web"}
    assert compile_jsonpath("spec.rules[0]").strip(OBJ)["spec"]["rules"][0] == {"host": "b.example"}


def test_strip_of_missing_path_returns_the_same_object() -> None:
    assert compile_jsonpath("metadata.nothing.here").strip(OBJ) is OBJ


def test_recursive_descent_cannot_strip() -> None:
    path = compile_jsonpath("..managedFields")
    assert not path.removable
    with pytest.raises(JSONPathError):
        path.strip(OBJ)


def test_equal_expressions_compare_equal() -> None:
    assert compile_jsonpath("{.metadata.name}") == compile_jsonpath("metadata.name")
    assert compile_jsonpath("metadata['name']") == compile_jsonpath("metadata.name")
    assert compile_jsonpath("metadata.name") != compile_jsonpath("metadata.namespace")


@pytest.mark.parametrize(
    ("value", "text"),
    [("x", "x"), (80, "80"), (8.0, "8"), (1.5, "1.5"), (True, "true"), (None, ""), ({"b": 1, "a": 2}, '{"a":2,"b":1}')],
)
def test_format_value(value: Any, text: str) -> None:
    assert format_value(value) == text


@pytest.mark.parametrize(
    "expr",
    [
        "metadata.managedFields",
        "metadata.labels['kubernetes.io/service-name']",
        "spec.rules[*].host",
        "spec.ports[?(@.name=='http')]",
        "spec.ports[0,1].port",
        "spec.rules[1:]",
        "metadata.*",
    ],
)
def test_after_strip_nothing_is_found_and_the_rest_is_intact(expr: str) -> None:
    path = compile_jsonpath(expr)
    assert path.find(OBJ), "the case must match something to be meaningful"
    stripped = path.strip(OBJ)
    assert path.find(stripped) == []
    assert compile_jsonpath("spec.ingressClassName").find(stripped) == ["haproxy"]
