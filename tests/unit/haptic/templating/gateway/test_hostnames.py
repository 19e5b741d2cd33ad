"""Gateway API hostname wildcards and listener/route intersection."""

from __future__ import annotations

import pytest

from haptic.templating.gateway.hostnames import covers, intersect, specificity


@pytest.mark.parametrize(("pattern", "host", "expected"), [
    ("*.example.com", "a.example.com", True),
    ("*.example.com", "a.b.example.com", True),  # a suffix match: any number of labels
    ("*.example.com", "example.com", False),     # never the apex
    ("*.example.com", "*.a.example.com", True),
    ("*.a.example.com", "*.example.com", False),
    ("a.example.com", "a.example.com", True),
    ("a.example.com", "b.example.com", False),
])
def test_covers(pattern: str, host: str, expected: bool) -> None:
    assert covers(pattern, host) is expected


def test_intersection_keeps_the_more_specific_name() -> None:
    assert intersect("*.example.com", ["shop.example.com", "other.test", "*.example.com"]) == [
        "shop.example.com", "*.example.com"]
    assert intersect("shop.example.com", ["*.example.com"]) == ["shop.example.com"]
    assert intersect("*.a.example.com", ["*.example.com"]) == ["*.a.example.com"]


def test_no_hostname_on_either_side() -> None:
    assert intersect(None, []) == ["*"]
    assert intersect(None, ["a.test", "a.test"]) == ["a.test"]
    assert intersect("a.test", []) == ["a.test"]
    assert intersect("a.test", ["b.test"]) == []


def test_specificity_orders_exact_then_longer_wildcards_then_any() -> None:
    hosts = ["*", "*.example.com", "a.example.com", "*.a.example.com"]
    assert sorted(hosts, key=specificity) == ["a.example.com", "*.a.example.com", "*.example.com", "*"]
