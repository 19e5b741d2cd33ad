"""``haptic run`` webhook flags: parsing, validation of the cert directory and the registered URL."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from haptic.live.webhook_options import (
    WebhookOptionsError,
    add_webhook_arguments,
    parse_service,
    webhook_options,
)
from haptic.webhook.configuration import ServiceEndpoint


def _args(*argv: str, namespace: str = "haptic", bind: str = "0.0.0.0") -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_webhook_arguments(parser)
    args = parser.parse_args(list(argv))
    args.namespace, args.bind_address = namespace, bind
    return args


def _cert_dir(tmp_path: Path) -> Path:
    for name in ("tls.crt", "tls.key", "ca.crt"):
        (tmp_path / name).write_text("x")
    return tmp_path


def test_off_without_a_cert_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WEBHOOK_CERT_DIR", raising=False)
    assert webhook_options(_args()) is None


def test_service_flag_and_defaults(tmp_path: Path) -> None:
    options = webhook_options(_args("--webhook-cert-dir", str(_cert_dir(tmp_path)), "--webhook-service",
                                    "haptic-system/haptic-webhook"))
    assert options is not None
    assert options.port == 9443
    assert options.service == ServiceEndpoint("haptic-system", "haptic-webhook")
    assert options.registered_url() is None  # the API server goes through the Service
    assert options.certfile == tmp_path / "tls.crt" and options.keyfile == tmp_path / "tls.key"


def test_without_a_service_the_own_routable_address_is_registered(tmp_path: Path) -> None:
    options = webhook_options(_args("--webhook-cert-dir", str(_cert_dir(tmp_path)), "--webhook-port", "8443"))
    assert options is not None and options.registered_url() == "https://127.0.0.1:8443/validate"
    local = webhook_options(_args("--webhook-cert-dir", str(tmp_path), "--webhook-port", "8443", bind="::1"))
    assert local is not None and local.registered_url() == "https://[::1]:8443/validate"


def test_bad_flags_name_the_problem(tmp_path: Path) -> None:
    (tmp_path / "tls.crt").write_text("x")
    with pytest.raises(WebhookOptionsError, match=r"tls\.key is missing"):
        webhook_options(_args("--webhook-cert-dir", str(tmp_path)))
    with pytest.raises(WebhookOptionsError, match="expected NS/NAME"):
        parse_service("a/b/c", "haptic")
    assert parse_service("hook", "haptic") == ServiceEndpoint("haptic", "hook")
    with pytest.raises(WebhookOptionsError, match="not a port number"):
        webhook_options(_args("--webhook-cert-dir", str(_cert_dir(tmp_path)), "--webhook-port", "70000"))


def test_an_explicit_url_is_registered_instead_of_the_own_address(tmp_path: Path) -> None:
    cert_dir = str(_cert_dir(tmp_path))
    options = webhook_options(_args("--webhook-cert-dir", cert_dir, "--webhook-url", "https://127.0.0.9:7443/validate"))
    assert options is not None and options.registered_url() == "https://127.0.0.9:7443/validate"
    with pytest.raises(WebhookOptionsError, match="over https only"):
        webhook_options(_args("--webhook-cert-dir", cert_dir, "--webhook-url", "http://127.0.0.9/validate"))
    with pytest.raises(WebhookOptionsError, match="exclude each other"):
        webhook_options(_args("--webhook-cert-dir", cert_dir, "--webhook-url", "https://x/validate",
                              "--webhook-service", "ns/name"))
