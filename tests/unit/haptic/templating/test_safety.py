"""Hostile Kubernetes objects are recognised and rejected with a reason naming the field."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from haptic.templating.safety import parse_cidrs, parse_request_headers, reject_unsafe, unsafe_reasons


def ingress(host: str = "a.example.test", path: str = "/", **annotations: str) -> dict[str, Any]:
    return {
        "kind": "Ingress",
        "metadata": {
            "namespace": "n",
            "name": "i",
            "annotations": {f"haproxy-haptic.org/{k.replace('_', '-')}": v for k, v in annotations.items()},
        },
        "spec": {
            "rules": [
                {
                    "host": host,
                    "http": {
                        "paths": [
                            {
                                "path": path,
                                "pathType": "Prefix",
                                "backend": {"service": {"name": "s", "port": {"number": 80}}},
                            }
                        ]
                    },
                }
            ]
        },
    }


def test_a_normal_ingress_is_safe() -> None:
    assert unsafe_reasons(ingress(timeout_server="30s", balance="leastconn", allow_list="10.0.0.0/8")) == []
    assert unsafe_reasons(ingress(host="*.wild.example.test", path="/api/v1/items;x=1")) == []


@pytest.mark.parametrize(
    ("host", "path", "expected"),
    [
        ("a.test\n    http-request deny", "/", "rules[0].host"),
        ("a.test #comment", "/", "rules[0].host"),
        ('a"b.test', "/", "rules[0].host"),
        ("A.TEST", "/", "rules[0].host"),
        ("a.test", "/x y", "paths[0].path"),
        ("a.test", "/x#y", "paths[0].path"),
        ("a.test", "/x\ny", "paths[0].path"),
        ("a.test", "/x'y", "paths[0].path"),
        ("a.test", "/%[src]", "paths[0].path"),
        ("a.test", "/x\x00", "paths[0].path"),
        ("a.test", "relative", "paths[0].path"),
        ("a.test\n", "/", "rules[0].host"),
        ("a.test", "/x\n", "paths[0].path"),
    ],
)
def test_hostile_hosts_and_paths(host: str, path: str, expected: str) -> None:
    reasons = unsafe_reasons(ingress(host=host, path=path))
    assert any(expected in r for r in reasons), reasons


@pytest.mark.parametrize(
    ("annotation", "value"),
    [
        ("timeout_server", "5s\n    server evil 1.2.3.4:80"),
        ("timeout_connect", "5 s"),
        ("timeout_connect", "5s\n"),
        ("balance", "roundrobin\nhash-type"),
        ("ssl_redirect", "yes"),
        ("allow_list", "10.0.0.0/8 }  or { always_true"),
        ("request_set_header", 'X-A: "%[src]"'),
        ("request_set_header", "X A: b"),
        ("request_set_header", "X-A: b\r\nX-B: c"),
        ("backend_protocol", "tcp"),
        ("server_slots", "0"),
        ("something_else", "a\nb"),
    ],
)
def test_hostile_annotations(annotation: str, value: str) -> None:
    reasons = unsafe_reasons(ingress(**{annotation: value}))
    assert any(annotation.replace("_", "-") in r for r in reasons), reasons


def test_bad_names_ports_and_tls_entries() -> None:
    obj = ingress()
    obj["metadata"]["name"] = "x y"
    obj["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"] = {"name": "s\n", "port": {"number": 70000}}
    obj["spec"]["tls"] = [{"hosts": ["ok.test", "bad host"], "secretName": "s#"}]
    reasons = unsafe_reasons(obj)
    for fragment in ("metadata.name", "bad service name", "bad service port", "tls[0].hosts", "tls[0].secretName"):
        assert any(fragment in r for r in reasons), (fragment, reasons)
    assert unsafe_reasons("not a dict") == ["not an object"]


def test_secret_content_must_be_pem() -> None:
    def secret(crt: bytes, key: bytes) -> dict[str, Any]:
        data = {"tls.crt": base64.b64encode(crt).decode(), "tls.key": base64.b64encode(key).decode()}
        return {"kind": "Secret", "metadata": {"namespace": "n", "name": "s"}, "data": data}

    reasons = unsafe_reasons(secret(b"-----BEGIN CERTIFICATE-----\nglobal\n", b"key"), "secret")
    assert reasons == ["tls.crt is not a PEM certificate", "tls.key is not an unencrypted PEM private key"]
    assert unsafe_reasons(secret(b"\xff\xfe", b"k"), "secret") == ["tls.crt/tls.key is not ASCII PEM"]
    bad_b64 = {"kind": "Secret", "metadata": {"name": "s"}, "data": {"tls.crt": "!!", "tls.key": "!!"}}
    assert unsafe_reasons(bad_b64, "secret") == ["tls.crt/tls.key is not valid base64"]


def test_reject_unsafe_warns_with_the_object_name() -> None:
    warnings: list[str] = []
    good, bad = ingress(), ingress(host="evil host")
    bad["metadata"]["name"] = "evil"
    assert reject_unsafe([good, bad], "ingress", warnings.append) == [good]
    assert warnings == ["skipping Ingress 'n'/'evil': rules[0].host 'evil host' is not a DNS name"]


def test_annotation_value_parsers() -> None:
    assert parse_request_headers("X-A: one; X-B: two words;") == [("X-A", "one"), ("X-B", "two words")]
    assert parse_cidrs("10.1.2.3/8, 192.168.0.1") == ["10.0.0.0/8", "192.168.0.1/32"]
    with pytest.raises(ValueError, match="empty"):
        parse_cidrs(" , ")


# Every character str.splitlines splits at (what the old currentConfig reader split at), besides \n.
_LINE_BREAKS = ["\r", "\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


@pytest.mark.parametrize("breaker", _LINE_BREAKS, ids=lambda c: f"U+{ord(c):04X}")
def test_every_line_break_python_knows_is_refused_like_a_newline(breaker: str) -> None:
    assert len(f"a{breaker}b".splitlines()) == 2  # the premise: Python splits here
    smuggled = f"v{breaker}    server evil 6.6.6.6:80"
    for annotation in ("request_set_header", "something_else", "timeout_server"):
        value = f"X-A: {smuggled}" if annotation == "request_set_header" else smuggled
        reasons = unsafe_reasons(ingress(**{annotation: value}))
        assert any(annotation.replace("_", "-") in r for r in reasons), (annotation, reasons)
    assert unsafe_reasons(ingress(host=f"a.example.test{breaker}x"))
    assert unsafe_reasons(ingress(path=f"/a{breaker}b"))


def _one_path(path: dict[str, Any], **annotations: str) -> dict[str, Any]:
    obj = ingress(**annotations)
    obj["spec"]["rules"][0]["http"]["paths"] = [path]
    return obj


@pytest.mark.parametrize(
    ("path", "annotations", "expected"),
    [
        # a pathType that is there but null is unknown; an absent one is ImplementationSpecific
        ({"path": "/p", "pathType": None}, {}, ["rules[0].http.paths[0].pathType None is unknown"]),
        ({"path": "/p"}, {}, []),
        # path-regex checks ImplementationSpecific paths only when the pathType says so, not when it is absent
        ({"path": "(a|b)"}, {"path_regex": "true"},
         ["rules[0].http.paths[0].path '(a|b)' contains unsafe characters"]),
        ({"path": "/(a|b", "pathType": "ImplementationSpecific"}, {"path_regex": "true"},
         ["rules[0].http.paths[0].path '/(a|b' is not a path regex: pattern '/(a|b': invalid regex for RE2 "
          "(missing ): /(a|b)"]),
        # a bool is an int to the port check (as it always was), off the shortcut's exact int
        ({"path": "/p", "backend": {"service": {"name": "s", "port": {"number": True}}}}, {}, []),
        ({"path": "/p", "backend": {"service": {"name": "s", "port": {"number": 0}}}}, {},
         ["rules[0].http.paths[0].backend: bad service port 0"]),
        ({"path": "/p", "backend": {"service": {"name": "s", "port": {"name": "H"}}}}, {},
         ["rules[0].http.paths[0].backend: bad service port name 'H'"]),
        ({"path": "/p", "backend": {"service": {"port": {"name": "http"}}}}, {},
         ["rules[0].http.paths[0].backend: bad service name None"]),
        ({"path": "/p", "backend": {"resource": {"kind": "Bucket"}}}, {}, []),
    ],
)
def test_path_and_backend_reasons_name_their_field(path: dict[str, Any], annotations: dict[str, str],
                                                   expected: list[str]) -> None:
    # the common shapes take a shortcut past the full checks: these are the shapes just off it
    assert unsafe_reasons(_one_path(path, **annotations)) == expected
