"""Self-signed certificates for the admission webhook, made with ``cryptography``.

``generate_webhook_certs`` makes a CA and a serving certificate signed by it (ECDSA P-256, SANs for
the webhook Service's DNS names and any IPs given) and writes ``ca.crt``, ``tls.crt`` and ``tls.key``
into a directory. Tests and Kind clusters use it; in production cert-manager usually provides them.
The ``caBundle`` of the ``ValidatingWebhookConfiguration`` is ``ca_bundle(ca_pem)``.

The validity window comes from the caller's ``now`` (no wall clock read here).
"""

from __future__ import annotations

import base64
import ipaddress
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

DEFAULT_VALIDITY = timedelta(days=365)


@dataclass(frozen=True)
class WebhookCerts:
    """PEM texts and, once written, their paths. The key never appears in ``repr``."""

    ca_pem: bytes
    cert_pem: bytes
    key_pem: bytes = field(repr=False)
    ca_path: Path | None = None
    cert_path: Path | None = None
    key_path: Path | None = None

    @property
    def ca_bundle(self) -> str:
        return ca_bundle(self.ca_pem)


def ca_bundle(ca_pem: bytes) -> str:
    """The base64 of the CA PEM, as ``clientConfig.caBundle`` wants it."""
    return base64.b64encode(ca_pem).decode("ascii")


def service_dns_names(service: str, namespace: str) -> list[str]:
    """The names the API server may use to reach ``service.namespace`` (it uses ``<svc>.<ns>.svc``)."""
    return [service, f"{service}.{namespace}", f"{service}.{namespace}.svc", f"{service}.{namespace}.svc.cluster.local"]


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def generate_webhook_certs(
    now: datetime,
    dns_names: Sequence[str] = ("localhost",),
    ip_addresses: Sequence[str] = ("127.0.0.1",),
    *,
    validity: timedelta = DEFAULT_VALIDITY,
    directory: Path | None = None,
) -> WebhookCerts:
    """A CA and a serving certificate for ``dns_names``/``ip_addresses``; written to ``directory`` if given."""
    if not dns_names and not ip_addresses:
        raise ValueError("a serving certificate needs at least one DNS name or IP address")
    not_before, not_after = now - timedelta(minutes=5), now + validity
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = _name("haptic-webhook-ca")
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before)
        .not_valid_after(not_after)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False,
                key_encipherment=False, data_encipherment=False, key_agreement=False, encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    sans: list[x509.GeneralName] = [x509.DNSName(n) for n in dns_names]
    sans += [x509.IPAddress(ipaddress.ip_address(ip)) for ip in ip_addresses]
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(dns_names[0] if dns_names else str(ip_addresses[0])))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before)
        .not_valid_after(not_after)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.SubjectAlternativeName(sans), critical=False)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    certs = WebhookCerts(
        ca_pem=ca_cert.public_bytes(serialization.Encoding.PEM),
        cert_pem=cert.public_bytes(serialization.Encoding.PEM),
        key_pem=key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        ),
    )
    return write_certs(certs, directory) if directory is not None else certs


def write_certs(certs: WebhookCerts, directory: Path) -> WebhookCerts:
    """Writes ``ca.crt``, ``tls.crt`` and ``tls.key`` (mode 0600) into ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    ca_path, cert_path, key_path = directory / "ca.crt", directory / "tls.crt", directory / "tls.key"
    ca_path.write_bytes(certs.ca_pem)
    cert_path.write_bytes(certs.cert_pem)
    fd = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(certs.key_pem)
    return WebhookCerts(certs.ca_pem, certs.cert_pem, certs.key_pem, ca_path, cert_path, key_path)
