"""Label and field selector parsing and matching."""

from __future__ import annotations

import pytest

from haptic.k8s.api import ApiError
from simulator.kube.selectors import parse_field_selector, parse_label_selector


def obj(labels: dict[str, str] | None = None, **extra: object) -> dict[str, object]:
    return {"metadata": {"name": "n", "namespace": "ns", "labels": labels or {}}, **extra}


@pytest.mark.parametrize(("selector", "labels", "expected"), [
    ("app=web", {"app": "web"}, True),
    ("app = web , tier", {"app": "web"}, False),
    ("app in ( web , api )", {"app": "api"}, True),
    ("app notin (web)", {}, True),
    ("app!=web", {}, True),
    ("example.com/role==edge", {"example.com/role": "edge"}, True),
    ("!app", {"app": ""}, False),
    ("app=", {"app": ""}, True),
])
def test_label_selectors(selector: str, labels: dict[str, str], expected: bool) -> None:
    match = parse_label_selector(selector)
    assert match is not None and match(obj(labels)) is expected


@pytest.mark.parametrize("selector", ["app in web", "app in ()", "=web", "app=we b", "a,,b=(c"])
def test_bad_label_selectors_are_400(selector: str) -> None:
    with pytest.raises(ApiError) as info:
        parse_label_selector(selector)
    assert info.value.code == 400 and "selector" in info.value.message


def test_field_selectors_and_everything() -> None:
    match = parse_field_selector("metadata.name=n,status.phase!=Failed,spec.enabled=true")
    assert match is not None
    assert match(obj(status={"phase": "Running"}, spec={"enabled": True}))
    assert not match(obj(status={"phase": "Failed"}, spec={"enabled": True}))
    assert parse_label_selector("") is None and parse_field_selector(None) is None
    with pytest.raises(ApiError):
        parse_field_selector("metadata.name")
