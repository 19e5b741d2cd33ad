"""inspect_certificate: a certificate that serves has no problems; each way one does not is named."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from haptic.live.certs import generate_webhook_certs
from haptic.preflight.certificates import inspect_certificate

NOW = datetime(2030, 1, 1, tzinfo=UTC)
NAMES = ["svc.ns.svc"]


def test_a_fresh_certificate_serves() -> None:
    certs = generate_webhook_certs(NOW, NAMES, ())
    report = inspect_certificate(certs.cert_pem, now=NOW, dns_names=NAMES, ca_pem=certs.ca_pem, key_pem=certs.key_pem)
    assert report.problems == ()
    assert report.not_after == NOW + timedelta(days=365)
    assert report.dns_names == tuple(NAMES)


def test_expired_soon_to_expire_and_not_yet_valid() -> None:
    certs = generate_webhook_certs(NOW, NAMES, (), validity=timedelta(days=10))
    later = inspect_certificate(certs.cert_pem, now=NOW + timedelta(days=11))
    assert [p.split(" at ")[0] for p in later.problems] == ["expired"]
    soon = inspect_certificate(certs.cert_pem, now=NOW, renew_before=timedelta(days=30))
    assert soon.problems and "within 30 days" in soon.problems[0]
    early = inspect_certificate(certs.cert_pem, now=NOW - timedelta(days=1))
    assert early.problems[0].startswith("not valid before")


def test_wrong_names_ca_and_key() -> None:
    certs = generate_webhook_certs(NOW, NAMES, ())
    other = generate_webhook_certs(NOW, NAMES, ())
    report = inspect_certificate(certs.cert_pem, now=NOW, dns_names=["other.ns.svc"], ca_pem=other.ca_pem,
                                 key_pem=other.key_pem)
    assert report.problems == (
        "does not name other.ns.svc (names: svc.ns.svc)",
        "not signed by ca.crt (the caBundle the API server trusts)",
        "tls.key does not belong to tls.crt",
    )


def test_garbage_is_named() -> None:
    assert inspect_certificate(b"nope", now=NOW).problems[0].startswith("tls.crt is not a PEM certificate")
