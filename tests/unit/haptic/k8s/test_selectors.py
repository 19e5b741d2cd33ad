from __future__ import annotations

from typing import Any

import pytest

from haptic.k8s.selectors import (
    LabelSelector,
    SelectorError,
    parse_field_selector,
    parse_label_selector,
)

LABELS = {"app": "web", "tier": "frontend", "version": "3", "kubernetes.io/name": "x"}


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("", True),
        ("app=web", True),
        ("app==web", True),
        ("app = web", True),
        ("app=db", False),
        ("app!=db", True),
        ("app!=web", False),
        ("missing!=x", True),
        ("app in (web, db)", True),
        ("app in (db)", False),
        ("missing in (x)", False),
        ("app notin (db,cache)", True),
        ("app notin (web)", False),
        ("missing notin (x)", True),
        ("app", True),
        ("missing", False),
        ("!missing", True),
        ("!app", False),
        ("version>2", True),
        ("version<2", False),
        ("app>2", False),
        ("app=web,tier=frontend", True),
        ("app=web,tier=backend", False),
        ("app=web, tier in (frontend,backend), !canary", True),
        ("kubernetes.io/name=x", True),
        ("app=", False),
    ],
)
def test_label_selector_matching(selector: str, expected: bool) -> None:
    assert parse_label_selector(selector).matches(LABELS) is expected


def test_empty_value_matches_empty_label() -> None:
    assert parse_label_selector("flag=").matches({"flag": ""})


def test_selector_string_round_trip() -> None:
    text = "app=web,tier in (frontend,backend),!canary,release,v!=2,n>1"
    parsed = parse_label_selector(text)
    assert str(parsed) == text
    assert parse_label_selector(str(parsed)) == parsed


def test_match_labels_object_form() -> None:
    sel = LabelSelector.from_object(
        {
            "matchLabels": {"tier": "frontend", "app": "web"},
            "matchExpressions": [
                {"key": "version", "operator": "In", "values": ["3", "4"]},
                {"key": "canary", "operator": "DoesNotExist"},
            ],
        }
    )
    assert str(sel) == "app=web,tier=frontend,version in (3,4),!canary"
    assert sel.matches(LABELS)
    assert not sel.matches({**LABELS, "canary": "true"})
    assert LabelSelector.from_object(None).matches({})


def test_matches_object_reads_metadata_labels() -> None:
    sel = parse_label_selector("app=web")
    assert sel.matches_object({"metadata": {"labels": {"app": "web"}}})
    assert not sel.matches_object({"metadata": {}})
    assert not sel.matches_object({})


@pytest.mark.parametrize(
    "selector",
    ["app in (a,", "app in ()", "app in a", "=web", "app=we b", "-bad=x", "app=web,,tier=x", "v>x", "a/b/c=x"],
)
def test_bad_label_selectors(selector: str) -> None:
    with pytest.raises(SelectorError) as info:
        parse_label_selector(selector)
    assert info.value.selector == selector


@pytest.mark.parametrize(
    "selector",
    [
        {"matchExpressions": [{"key": "a", "operator": "Bogus"}]},
        {"matchExpressions": [{"key": "a", "operator": "In", "values": []}]},
        {"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]},
        {"matchLabels": {"a": "bad value"}},
    ],
)
def test_bad_selector_objects(selector: dict[str, Any]) -> None:
    with pytest.raises(SelectorError):
        LabelSelector.from_object(selector)


OBJ: dict[str, Any] = {
    "metadata": {"name": "web", "namespace": "default", "labels": {"app": "a=b"}},
    "spec": {"ingressClassName": "haproxy", "replicas": 2, "paused": False},
}


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("", True),
        ("spec.ingressClassName=haproxy", True),
        ("spec.ingressClassName==haproxy", True),
        ("spec.ingressClassName=nginx", False),
        ("spec.ingressClassName!=nginx", True),
        ("metadata.name=web,metadata.namespace=default", True),
        ("metadata.name=web,metadata.namespace=other", False),
        ("spec.replicas=2", True),
        ("spec.paused=false", True),
        ("spec.missing=x", False),
        ("spec.missing!=x", True),
        (r"metadata.labels['app']=a\=b", True),
        ("{.metadata.name}=web", True),
    ],
)
def test_field_selector_matching(selector: str, expected: bool) -> None:
    assert parse_field_selector(selector).matches(OBJ) is expected


def test_field_selector_string_escapes_values() -> None:
    sel = parse_field_selector(r"metadata.labels['app']=a\=b,metadata.name!=x")
    assert str(sel) == r"metadata.labels['app']=a\=b,metadata.name!=x"
    assert parse_field_selector(str(sel)) == sel


@pytest.mark.parametrize("selector", ["spec.x", "=x", "spec.x=a=b", r"spec.x=a\q", "spec[=x", "a b=c"])
def test_bad_field_selectors(selector: str) -> None:
    with pytest.raises(SelectorError) as info:
        parse_field_selector(selector)
    assert info.value.selector == selector
