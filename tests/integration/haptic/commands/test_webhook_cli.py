"""``haptic webhook certs`` and ``haptic webhook configuration`` as a user runs them."""

from __future__ import annotations

import base64
import subprocess
import sys
from pathlib import Path

import yaml
from cryptography import x509

from tests.support.admission import INGRESS_EXAMPLE


def haptic(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "haptic.cli", *args], capture_output=True, text=True, timeout=60)


def test_certs_then_configuration(tmp_path: Path) -> None:
    out = haptic("webhook", "certs", "-o", str(tmp_path), "--service", "hw", "--namespace", "ops", "--ip", "127.0.0.1")
    assert out.returncode == 0, out.stderr
    cert = x509.load_pem_x509_certificate((tmp_path / "tls.crt").read_bytes())
    sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "hw.ops.svc" in sans.get_values_for_type(x509.DNSName)
    assert [str(ip) for ip in sans.get_values_for_type(x509.IPAddress)] == ["127.0.0.1"]
    assert (tmp_path / "tls.key").stat().st_mode & 0o077 == 0
    ca = x509.load_pem_x509_certificate((tmp_path / "ca.crt").read_bytes())
    assert cert.issuer == ca.subject

    out = haptic("webhook", "configuration", "-f", str(INGRESS_EXAMPLE), "--service", "ops/hw:8443",
                 "--ca-file", str(tmp_path / "ca.crt"))
    assert out.returncode == 0, out.stderr
    body = yaml.safe_load(out.stdout)
    assert body["kind"] == "ValidatingWebhookConfiguration"
    hook, own = body["webhooks"]
    assert hook["name"] == "ingresses.networking.k8s.io.validate.haproxy-haptic.org"
    # the config's own webhook, for its namespace, failing open
    assert own["name"] == "haproxytemplateconfigs.haproxy-haptic.org.validate.haproxy-haptic.org"
    assert own["failurePolicy"] == "Ignore" and own["clientConfig"] == hook["clientConfig"]
    assert hook["clientConfig"]["service"] == {"namespace": "ops", "name": "hw", "path": "/validate", "port": 8443}
    assert base64.b64decode(hook["clientConfig"]["caBundle"]) == (tmp_path / "ca.crt").read_bytes()

    bad = haptic("webhook", "configuration", "-f", str(INGRESS_EXAMPLE), "--service", "no-slash",
                 "--ca-file", str(tmp_path / "ca.crt"))
    assert bad.returncode == 2 and "NAMESPACE/NAME" in bad.stderr
