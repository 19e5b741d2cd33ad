"""What is wrong with a webhook serving certificate, if anything: parse errors, the validity window, the
names it must carry, the CA that must have signed it and the key that must match it.

Pure: the caller hands the PEM texts and the time (``haptic preflight`` and ``haptic webhook certs``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa


@dataclass(frozen=True)
class CertificateReport:
    problems: tuple[str, ...]
    not_after: datetime | None = None
    dns_names: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.problems


def _verify(ca: x509.Certificate, cert: x509.Certificate) -> bool:
    key = ca.public_key()
    algorithm = cert.signature_hash_algorithm
    try:
        if isinstance(key, ec.EllipticCurvePublicKey) and algorithm is not None:
            key.verify(cert.signature, cert.tbs_certificate_bytes, ec.ECDSA(algorithm))
        elif isinstance(key, rsa.RSAPublicKey) and algorithm is not None:
            key.verify(cert.signature, cert.tbs_certificate_bytes, padding.PKCS1v15(), algorithm)
        else:
            return False
    except InvalidSignature:
        return False
    return True


def inspect_certificate(cert_pem: bytes, *, now: datetime, dns_names: Sequence[str] = (),
                        ca_pem: bytes | None = None, key_pem: bytes | None = None,
                        renew_before: timedelta = timedelta(0)) -> CertificateReport:
    """Problems of ``cert_pem`` at ``now``: unparseable, not yet or no longer valid (or within
    ``renew_before`` of its end), missing one of ``dns_names``, not signed by ``ca_pem``, not matching
    ``key_pem``. An empty ``problems`` means it serves."""
    try:
        cert = x509.load_pem_x509_certificate(cert_pem)
    except ValueError as exc:
        return CertificateReport((f"tls.crt is not a PEM certificate: {exc}",))
    problems: list[str] = []
    start, end = cert.not_valid_before_utc, cert.not_valid_after_utc
    if now < start:
        problems.append(f"not valid before {start.isoformat()}")
    if now >= end:
        problems.append(f"expired at {end.isoformat()}")
    elif now + renew_before >= end:
        problems.append(f"expires at {end.isoformat()}, within {renew_before.days} days")
    try:
        sans = tuple(cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
                     .get_values_for_type(x509.DNSName))
    except x509.ExtensionNotFound:
        sans = ()
    absent = [n for n in dns_names if n not in sans]
    if absent:
        problems.append(f"does not name {', '.join(absent)} (names: {', '.join(sans) or 'none'})")
    if ca_pem is not None:
        try:
            ca = x509.load_pem_x509_certificate(ca_pem)
        except ValueError as exc:
            problems.append(f"ca.crt is not a PEM certificate: {exc}")
        else:
            if cert.issuer != ca.subject or not _verify(ca, cert):
                problems.append("not signed by ca.crt (the caBundle the API server trusts)")
    if key_pem is not None:
        try:
            key = serialization.load_pem_private_key(key_pem, password=None)
        except (ValueError, TypeError) as exc:
            problems.append(f"tls.key is not an unencrypted PEM key: {type(exc).__name__}")
        else:
            public = serialization.PublicFormat.SubjectPublicKeyInfo
            encoding = serialization.Encoding.DER
            if key.public_key().public_bytes(encoding, public) != cert.public_key().public_bytes(encoding, public):
                problems.append("tls.key does not belong to tls.crt")
    return CertificateReport(tuple(problems), end, sans)
