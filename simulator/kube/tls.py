"""HTTPS for the fake API: kubectl sends bearer tokens only over TLS (kubernetes/kubectl#744), so a fake
that authenticates ServiceAccounts serves HTTPS with a throwaway self-signed certificate that the
kubeconfig trusts. (``haptic.live.certs`` makes CA-signed pairs, but the local tier must not import
``haptic.live``.)"""

from __future__ import annotations

import ipaddress
import ssl
import tempfile
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


@dataclass(frozen=True)
class ServingTLS:
    """A server context for 127.0.0.1/localhost and its certificate (PEM), which clients must trust."""

    context: ssl.SSLContext = field(repr=False)
    ca_pem: bytes


def serving_tls(now: datetime, common_name: str = "haptic-sim-kube-apiserver",
                dns_names: tuple[str, ...] = ("localhost",)) -> ServingTLS:
    """A self-signed serving certificate for ``dns_names`` and 127.0.0.1, subject ``CN=common_name``."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    loopback = x509.IPAddress(ipaddress.ip_address("127.0.0.1"))
    sans = x509.SubjectAlternativeName([*map(x509.DNSName, dns_names), loopback])
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - timedelta(hours=1)).not_valid_after(now + timedelta(days=365))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(sans, critical=False)
            .sign(key, hashes.SHA256()))
    cert_pem = cert.public_bytes(serialization.Encoding.PEM)
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    # load_cert_chain reads files only; the directory (with the key) is removed once they are loaded.
    with tempfile.TemporaryDirectory(prefix="haptic-kube-tls-") as tmp:
        cert_path, key_path = Path(tmp) / "tls.crt", Path(tmp) / "tls.key"
        cert_path.write_bytes(cert_pem)
        key_path.touch(0o600)
        key_path.write_bytes(key_pem)
        context.load_cert_chain(cert_path, key_path)
    return ServingTLS(context, cert_pem)
