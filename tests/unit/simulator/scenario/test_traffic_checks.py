"""The traffic expectation: its request/check syntax and the checks on answers (no network here)."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from pydantic import ValidationError

from simulator.scenario.backend import TrafficResult
from simulator.scenario.traffic_checks import certificate_info, check_traffic, secret_fingerprint
from simulator.scenario.traffic_spec import TrafficExpectation
from tests.support.certs import make_pem


def spec(**fields: Any) -> TrafficExpectation:
    return TrafficExpectation.model_validate(fields)


def reply(status: int = 200, backend: str | None = "10.1.0.1", **extra: Any) -> TrafficResult:
    return TrafficResult(status=status, backend=backend, **extra)


def der(pem: str) -> bytes:
    from cryptography.hazmat.primitives.serialization import Encoding

    return x509.load_pem_x509_certificate(pem.encode()).public_bytes(Encoding.DER)


@pytest.mark.parametrize(("text", "share", "tolerance"), [
    ("0.8 +- 0.05", 0.8, 0.05), ("0.8 ± 0.05", 0.8, 0.05), ("80% +- 5%", 0.8, 0.05), ("80% +- 5", 0.8, 0.05),
    ("0.25", 0.25, 0.0), (0.5, 0.5, 0.0), ({"share": 0.1, "tolerance": 0.02}, 0.1, 0.02)])
def test_shares_are_written_several_ways(text: Any, share: float, tolerance: float) -> None:
    parsed = spec(repeat=10, backends={"a": text}).backends["a"]
    assert parsed.share == pytest.approx(share) and parsed.tolerance == pytest.approx(tolerance)


@pytest.mark.parametrize(("fields", "message"), [
    ({"port": 80, "listener": "http"}, "'port' or 'listener', not both"),
    ({"sni": "a.example"}, "need scheme: https"),
    ({"backends": {"a": 0.5}}, "give 'repeat'"),
    ({"repeat": 5, "backends": {"a": "half"}}, "cannot read share 'half'"),
    ({"response_headers": {"X-A": {"absent": True, "equals": "b"}}}, "cannot be combined"),
    ({"scheme": "https", "certificate": {}}, "give at least one of subject"),
    ({"repeat": 2, "concurrency": 3}, "give repeat >= concurrency"),
    ({"repeat": 2, "status": 200, "statuses": {200: 2}}, "not both"),
    ({"repeat": 2, "statuses": {200: {}}}, "give 'min', 'max' or both"),
    ({"backend_saw": {"protocol": "spdy"}}, "protocol"),
])
def test_inconsistent_requests_are_refused(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        spec(**fields)


def test_sni_defaults_to_the_host_and_an_empty_one_sends_none() -> None:
    assert spec(scheme="https", host="shop.example").server_name == "shop.example"
    assert spec(scheme="https", host="shop.example", sni="").server_name is None
    assert spec(host="shop.example").server_name is None
    assert spec(scheme="https", certificate={"fingerprint_of": "shop/shop-tls"}).certificate.fingerprint_of.namespace \
        == "shop"  # type: ignore[union-attr]


def test_status_over_repeated_requests_reports_the_counts() -> None:
    [failure] = check_traffic(spec(status=200, repeat=3), [reply(), reply(503, None), reply(0, None, body="refused")])
    assert failure.check == "traffic[GET localhost/].status"
    assert failure.message == "expected 200, got no answer x1, 200 x1, 503 x1"
    [single] = check_traffic(spec(status=200), [reply(0, None, body="ConnectionRefusedError")])
    assert single.message == "expected 200, got no answer (ConnectionRefusedError)"


def test_response_headers_and_location() -> None:
    answer = reply(308, None, headers=(("location", "https://shop.example/cart"), ("strict-transport-security",
                                                                                   "max-age=31536000")))
    check = spec(status=308, location="https://shop.example/cart", response_headers={
        "Strict-Transport-Security": {"contains": "max-age"}, "Server": {"absent": True},
        "Location": {"regex": "^https://"}})
    assert check_traffic(check, [answer]) == []
    wrong = spec(location="https://shop.example/", response_headers={"Location": "http://x/", "X-Missing": {
        "contains": "a"}, "Strict-Transport-Security": {"absent": True}})
    messages = [f.message for f in check_traffic(wrong, [answer])]
    assert messages == ["header Location: expected 'http://x/', got 'https://shop.example/cart'",
                        "header X-Missing is absent",
                        "header Strict-Transport-Security is present: 'max-age=31536000'",
                        "expected https://shop.example/, got https://shop.example/cart (status 308)"]


def test_backend_by_address_or_endpoint_name() -> None:
    answers = [reply(backend="10.3.0.1", backend_names=("shop-stable-0",))]
    assert check_traffic(spec(backend="shop-stable-0"), answers) == []
    assert check_traffic(spec(backend="10.3.0.1"), answers) == []
    [failure] = check_traffic(spec(backend="shop-canary-0"), answers)
    assert failure.message == "expected backend shop-canary-0, got 10.3.0.1 (shop-stable-0)"
    [haproxy] = check_traffic(spec(backend="a"), [reply(404, None)])
    assert haproxy.message == "expected backend a, got haproxy itself"


def test_backend_saw_path_host_and_headers() -> None:
    seen = {"method": "POST", "path": "/api/v1?x=1", "host": "shop.example",
            "headers": {"x-forwarded-proto": "https", "x-request-id": ["a", "b"]}}
    answers = [reply(seen=seen)]
    ok = spec(backend_saw={"method": "POST", "path": "/api/v1?x=1", "host": "shop.example",
                           "headers": {"X-Forwarded-Proto": "https", "X-Request-Id": {"equals": "a"},
                                       "Cookie": {"absent": True}}})
    assert check_traffic(ok, answers) == []
    bad = spec(backend_saw={"path": "/api", "headers": {"X-Forwarded-Proto": "http"}})
    assert [f.check for f in check_traffic(bad, answers)] == ["traffic[GET localhost/].backend_saw.path",
                                                              "traffic[GET localhost/].backend_saw.headers"]
    [no_report] = check_traffic(spec(backend_saw={"path": "/"}), [reply(503, None)])
    assert "no backend report: the answer (503) came from haproxy itself" in no_report.message


def test_distribution_within_tolerance_or_not() -> None:
    answers = [reply(backend="10.3.0.1", backend_names=("stable",))] * 78 + [reply(backend="10.3.1.1")] * 22
    check = spec(repeat=100, backends={"stable": "0.8 +- 0.05", "10.3.1.1": "20% +- 5%"})
    assert check_traffic(check, answers) == []
    tight = spec(repeat=100, backends={"stable": "0.8 +- 0.01"})
    [failure] = check_traffic(tight, answers)
    assert failure.check == "traffic[GET localhost/].backends[stable]"
    assert failure.message == "served 78 of 100 (0.780), expected 0.8 +- 0.01"
    assert failure.actual == "10.3.0.1 (stable): 78/100\n10.3.1.1: 22/100\n"


def test_certificate_subject_sans_serial_and_fingerprints() -> None:
    pem = make_pem("shop.example", 1001, sans=["shop.example", "www.shop.example"])
    cert = der(pem)
    info = certificate_info(cert)
    assert info.subject == "CN=shop.example" and info.sans == ("shop.example", "www.shop.example")
    fingerprint = x509.load_pem_x509_certificate(pem.encode()).fingerprint(hashes.SHA256()).hex()
    secret = {"data": {"tls.crt": base64.b64encode(pem.encode()).decode()}}
    assert secret_fingerprint(secret) == fingerprint
    colons = ":".join(fingerprint[i:i + 2] for i in range(0, len(fingerprint), 2)).upper()
    check = spec(scheme="https", host="shop.example", certificate={
        "subject": "CN=shop.example", "issuer": "Test CA", "sans": ["www.shop.example"], "serial": 1001,
        "fingerprint": colons, "fingerprint_of": "default/shop-tls"})
    assert check_traffic(check, [reply(certificate=cert)], fingerprint) == []
    other = der(make_pem("shop.example", 2002, sans=["shop.example"]))
    failures = check_traffic(check, [reply(certificate=other)], fingerprint)
    assert [f.check.rsplit(".", 1)[-1] for f in failures] == ["sans", "serial", "fingerprint", "fingerprint_of"]
    assert "not the one in Secret default/shop-tls; served subject CN=shop.example" in failures[-1].message
    [plain] = check_traffic(spec(scheme="https", certificate={"serial": 1}), [reply(0, None, body="refused")])
    assert plain.message == "no certificate: refused"


def test_statuses_count_each_status_and_refuse_unlisted_ones() -> None:
    burst = [reply(200), reply(200), reply(503, None), reply(503, None), reply(503, None)]
    assert check_traffic(spec(repeat=5, statuses={200: 2, 503: {"min": 1}}), burst) == []
    short = check_traffic(spec(repeat=5, statuses={200: 3, 503: {"max": 2}}), burst)
    assert [f.check for f in short] == [f"traffic[GET localhost/].statuses[{code}]" for code in (200, 503)]
    assert "expected 3 answers 200, got 2 (200 x2, 503 x3)" in short[0].message
    unlisted = check_traffic(spec(repeat=5, statuses={200: {"min": 1}}), burst)
    assert [f.message for f in unlisted] == ["unexpected status 503 (200 x2, 503 x3)"]


def test_backend_saw_the_protocol_haproxy_spoke() -> None:
    seen = {"protocol": "h2c", "method": "GET", "path": "/", "host": "a", "headers": {}}
    assert check_traffic(spec(backend_saw={"protocol": "h2c"}), [reply(seen=seen)]) == []
    wrong = check_traffic(spec(backend_saw={"protocol": "h2"}), [reply(seen=seen)])
    assert [f.message for f in wrong] == ["expected 'h2', the backend saw 'h2c'"]
