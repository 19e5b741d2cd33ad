"""The helpers behind the Ingress library's depth features: regex paths, weighted and passthrough routes,
error pages, and the validation of their annotations."""

from __future__ import annotations

from typing import Any

import pytest

from haptic.templating.error_pages import MAX_BODY, error_pages
from haptic.templating.ingress_helpers import passthrough_routes, regex_routes, weighted_routes
from haptic.templating.safety import unsafe_reasons


def _ingress(name: str, annotations: dict[str, str], paths: list[tuple[str, str]], host: str = "a.test") -> Any:
    return {
        "kind": "Ingress",
        "metadata": {"namespace": "ns", "name": name, "annotations": annotations},
        "spec": {"rules": [{"host": host, "http": {"paths": [
            {"path": p, "pathType": t, "backend": {"service": {"name": "svc", "port": {"number": 80}}}}
            for p, t in paths]}}]},
    }


def test_only_implementation_specific_paths_of_annotated_ingresses_become_regexes_longest_first() -> None:
    on = _ingress("on", {"haproxy-haptic.org/path-regex": "true"},
                  [("/a", "ImplementationSpecific"), ("/item/[0-9]+", "ImplementationSpecific"), ("/p", "Prefix")])
    off = _ingress("off", {}, [("/x", "ImplementationSpecific")])
    keys = [r["map_key"] for r in regex_routes([on, off])]
    assert keys == ["(?i)^a[.]test(?:/item/[0-9]+)", "(?i)^a[.]test(?:/a)"]


@pytest.mark.parametrize(("path", "safe"), [("/item/[0-9]+$", True), ("/(a)\\1", False), ("/a b", False),
                                            ("/(?=x)", False), ("no-slash", False)])
def test_regex_paths_must_be_re2_safe_and_quotable(path: str, safe: bool) -> None:
    reasons = unsafe_reasons(_ingress("r", {"haproxy-haptic.org/path-regex": "true"},
                                      [(path, "ImplementationSpecific")]))
    assert (reasons == []) is safe, reasons


def test_without_the_annotation_a_regex_path_is_refused_as_before() -> None:
    assert unsafe_reasons(_ingress("r", {}, [("/a[0-9]", "ImplementationSpecific")]))


def test_a_weighted_route_per_backend_with_the_canary_on_the_same_port() -> None:
    ing = _ingress("w", {"haproxy-haptic.org/canary-service": "canary", "haproxy-haptic.org/canary-weight": "30"},
                   [("/", "Prefix"), ("/b", "Prefix")])
    assert weighted_routes([ing]) == [{"main": "ing_ns_w_svc_80", "backend": "ing_ns_w_canary_80",
                                       "service": {"name": "canary", "port": {"number": 80}}, "weight": 30,
                                       "type": "Canary"}]
    ing["metadata"]["annotations"]["haproxy-haptic.org/canary-weight"] = "0"
    assert weighted_routes([ing]) == []


@pytest.mark.parametrize(("key", "value"), [("canary-weight", "101"), ("canary-weight", "-1"),
                                            ("canary-service", "Bad_Name"), ("health-check-interval", "0s"),
                                            ("health-check-path", "x"), ("ssl-passthrough", "yes")])
def test_bad_values_of_the_new_annotations_are_unsafe(key: str, value: str) -> None:
    assert unsafe_reasons(_ingress("x", {f"haproxy-haptic.org/{key}": value}, [("/", "Prefix")]))


def test_passthrough_routes_take_exact_hosts_first_ingress_first() -> None:
    first = _ingress("one", {"haproxy-haptic.org/ssl-passthrough": "true"}, [("/", "Prefix")], host="v.test")
    second = _ingress("two", {"haproxy-haptic.org/ssl-passthrough": "true"}, [("/", "Prefix")], host="v.test")
    wild = _ingress("w", {"haproxy-haptic.org/ssl-passthrough": "true"}, [("/", "Prefix")], host="*.v.test")
    plain = _ingress("p", {}, [("/", "Prefix")], host="p.test")
    routes = passthrough_routes([first, second, wild, plain])
    assert [(r["host"], r["backend"]) for r in routes] == [("v.test", "pt_ns_one_svc_80")]


def test_error_pages_are_whole_responses_and_bad_entries_are_problems() -> None:
    pages = error_pages({"503": "<p>down</p>", "302": "x", "404": "y" * (MAX_BODY + 1), 504: 7})
    assert pages["files"] == [("503", "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/html\r\n"
                                      "Content-Length: 11\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n"
                                      "<p>down</p>")]
    assert [p.split(":")[0] for p in pages["problems"]] == ["'302'", "404", "504"]
    assert error_pages(["503"])["problems"] == ["expected a mapping of HTTP status to HTML body"]
