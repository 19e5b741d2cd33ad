"""Checks of ``traffic`` answers: pure functions from the answers a backend got to ``CheckFailure``s."""

from __future__ import annotations

import base64
import collections
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from cryptography import x509
from cryptography.hazmat.primitives import hashes

from .backend import TrafficResult
from .checks import CheckFailure
from .traffic_spec import CertificateCheck, HeaderCheck, SecretRef, TrafficExpectation


@dataclass(frozen=True)
class CertificateInfo:
    subject: str
    issuer: str
    sans: tuple[str, ...]
    serial: int
    fingerprint: str  # sha256, lower-case hex without colons

    def describe(self) -> str:
        return (f"subject {self.subject}, issuer {self.issuer}, SANs {', '.join(self.sans) or 'none'}, "
                f"serial {self.serial}, sha256 {self.fingerprint}")


def certificate_info(der: bytes) -> CertificateInfo:
    cert = x509.load_der_x509_certificate(der)
    try:
        sans = tuple(cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
                     .get_values_for_type(x509.DNSName))
    except x509.ExtensionNotFound:
        sans = ()
    return CertificateInfo(cert.subject.rfc4514_string(), cert.issuer.rfc4514_string(), sans, cert.serial_number,
                           cert.fingerprint(hashes.SHA256()).hex())


def secret_fingerprint(secret: Mapping[str, object]) -> str | None:
    """The SHA-256 fingerprint of the first certificate in a TLS Secret's ``tls.crt`` (None: none there)."""
    data = secret.get("data") or {}
    string_data = secret.get("stringData") or {}
    pem: bytes | None = None
    if isinstance(data, Mapping) and data.get("tls.crt"):
        pem = base64.b64decode(str(data["tls.crt"]))
    elif isinstance(string_data, Mapping) and string_data.get("tls.crt"):
        pem = str(string_data["tls.crt"]).encode()
    if not pem:
        return None
    try:
        return x509.load_pem_x509_certificate(pem).fingerprint(hashes.SHA256()).hex()
    except ValueError:
        return None


def _normal_fingerprint(text: str) -> str:
    return text.replace(":", "").strip().lower()


def header_failure(label: str, name: str, check: HeaderCheck, values: Sequence[str]) -> CheckFailure | None:
    shown = ", ".join(repr(v) for v in values) or "absent"
    if check.absent:
        return CheckFailure(label, f"header {name} is present: {shown}") if values else None
    if not values:
        return CheckFailure(label, f"header {name} is absent")
    value = values[0]
    if check.equals is not None and value != check.equals:
        return CheckFailure(label, f"header {name}: expected {check.equals!r}, got {shown}",
                            expected=check.equals + "\n", actual=value + "\n")
    if check.contains is not None and check.contains not in value:
        return CheckFailure(label, f"header {name}: {check.contains!r} not in {shown}")
    if check.regex is not None and re.search(check.regex, value) is None:
        return CheckFailure(label, f"header {name}: no match for /{check.regex}/ in {shown}")
    return None


def _served_by(reply: TrafficResult, name: str) -> bool:
    return reply.backend == name or name in reply.backend_names


def _who(reply: TrafficResult) -> str:
    if reply.backend is None:
        return "haproxy itself" if reply.status else "nobody"
    names = f" ({', '.join(reply.backend_names)})" if reply.backend_names else ""
    return f"{reply.backend}{names}"


def _statuses(replies: Sequence[TrafficResult]) -> str:
    counts = collections.Counter(r.status for r in replies)
    return ", ".join(f"{'no answer' if code == 0 else code} x{n}" for code, n in sorted(counts.items()))


def check_traffic(check: TrafficExpectation, replies: Sequence[TrafficResult],
                  expected_fingerprint: str | None = None) -> list[CheckFailure]:
    """Every check of ``check`` on ``replies`` (one per request). ``expected_fingerprint`` is the
    fingerprint ``certificate.fingerprint_of`` resolved to (None: its Secret has no certificate)."""
    label = check.label()
    failures: list[CheckFailure] = []
    first = replies[0]
    if check.status is not None:
        wrong = [r for r in replies if r.status != check.status]
        if wrong:
            got = _statuses(replies) if len(replies) > 1 else \
                (f"no answer ({first.body or 'no error reported'})" if first.status == 0 else str(first.status))
            failures.append(CheckFailure(f"{label}.status", f"expected {check.status}, got {got}",
                                         expected=f"{check.status}\n", actual=f"{wrong[0].status}\n"))
    if check.statuses:
        failures.extend(_status_counts(label, check, replies))
    for name, header in check.response_headers.items():
        for reply in replies:
            failure = header_failure(f"{label}.response_headers", name, header, reply.header_values(name))
            if failure is not None:
                failures.append(failure)
                break
    if check.location is not None:
        wrong_location = [r for r in replies if r.header_values("location")[:1] != [check.location]]
        if wrong_location:
            got_location = ", ".join(wrong_location[0].header_values("location")) or "no Location header"
            failures.append(CheckFailure(f"{label}.location", f"expected {check.location}, got {got_location} "
                                         f"(status {wrong_location[0].status})",
                                         expected=check.location + "\n", actual=got_location + "\n"))
    if check.backend is not None:
        other = [r for r in replies if not _served_by(r, check.backend)]
        if other:
            failures.append(CheckFailure(f"{label}.backend", f"expected backend {check.backend}, got "
                                         f"{_who(other[0])}" + (f" ({len(other)} of {len(replies)})"
                                                                  if len(replies) > 1 else ""),
                                         expected=f"{check.backend}\n", actual=f"{other[0].backend}\n"))
    if check.backend_saw is not None:
        failures.extend(_backend_saw(label, check, replies))
    if check.certificate is not None:
        failures.extend(_certificate(label, check.certificate, first, expected_fingerprint))
    if check.backends:
        failures.extend(_distribution(label, check, replies))
    return failures


def _backend_saw(label: str, check: TrafficExpectation, replies: Sequence[TrafficResult]) -> list[CheckFailure]:
    saw = check.backend_saw
    assert saw is not None
    failures: list[CheckFailure] = []
    reply = next((r for r in replies if r.seen is None), None)
    if reply is not None:
        return [CheckFailure(f"{label}.backend_saw", f"no backend report: the answer ({reply.status}) came from "
                                                      f"{_who(reply)}")]
    seen = replies[0].seen or {}
    for key in ("protocol", "method", "path", "host"):
        expected = getattr(saw, key)
        if expected is not None and seen.get(key) != expected:
            failures.append(CheckFailure(f"{label}.backend_saw.{key}", f"expected {expected!r}, the backend saw "
                                         f"{seen.get(key)!r}", expected=f"{expected}\n", actual=f"{seen.get(key)}\n"))
    headers = {str(k).lower(): v for k, v in (seen.get("headers") or {}).items()}
    for name, header in saw.headers.items():
        value = headers.get(name.lower())
        values = value if isinstance(value, list) else [] if value is None else [str(value)]
        failure = header_failure(f"{label}.backend_saw.headers", name, header, values)
        if failure is not None:
            failures.append(failure)
    return failures


def _certificate(label: str, check: CertificateCheck, reply: TrafficResult,
                 expected_fingerprint: str | None) -> list[CheckFailure]:
    where = f"{label}.certificate"
    if reply.certificate is None:
        return [CheckFailure(where, f"no certificate: {reply.body or 'not a TLS connection'}")]
    info = certificate_info(reply.certificate)
    failures: list[CheckFailure] = []
    if check.subject is not None and check.subject not in info.subject:
        failures.append(CheckFailure(f"{where}.subject", f"{check.subject!r} not in {info.subject!r}"))
    if check.issuer is not None and check.issuer not in info.issuer:
        failures.append(CheckFailure(f"{where}.issuer", f"{check.issuer!r} not in {info.issuer!r}"))
    missing = [name for name in check.sans if name not in info.sans]
    if missing:
        failures.append(CheckFailure(f"{where}.sans", f"missing {', '.join(missing)}; SANs: "
                                                      f"{', '.join(info.sans) or 'none'}"))
    if check.serial is not None and check.serial != info.serial:
        failures.append(CheckFailure(f"{where}.serial", f"expected serial {check.serial}, got {info.serial}"))
    if check.fingerprint is not None and _normal_fingerprint(check.fingerprint) != info.fingerprint:
        failures.append(CheckFailure(f"{where}.fingerprint", f"served {info.describe()}",
                                     expected=_normal_fingerprint(check.fingerprint) + "\n",
                                     actual=info.fingerprint + "\n"))
    if check.fingerprint_of is not None:
        ref: SecretRef = check.fingerprint_of
        if expected_fingerprint is None:
            failures.append(CheckFailure(f"{where}.fingerprint_of", f"Secret {ref.namespace}/{ref.name} has no "
                                                                   "readable tls.crt"))
        elif expected_fingerprint != info.fingerprint:
            failures.append(CheckFailure(f"{where}.fingerprint_of", f"served certificate is not the one in Secret "
                                         f"{ref.namespace}/{ref.name}; served {info.describe()}",
                                         expected=expected_fingerprint + "\n", actual=info.fingerprint + "\n"))
    return failures


def _status_counts(label: str, check: TrafficExpectation, replies: Sequence[TrafficResult]) -> list[CheckFailure]:
    counts = collections.Counter(r.status for r in replies)
    got = _statuses(replies)
    failures = [CheckFailure(f"{label}.statuses[{code}]", f"expected {tally.describe()} answers {code}, got "
                             f"{counts.get(code, 0)} ({got})", expected=f"{code}: {tally.describe()}\n",
                             actual=f"{code}: {counts.get(code, 0)}\n")
                for code, tally in sorted(check.statuses.items()) if not tally.holds(counts.get(code, 0))]
    unexpected = sorted(code for code in counts if code not in check.statuses)
    if unexpected:
        failures.append(CheckFailure(f"{label}.statuses", f"unexpected status {', '.join(map(str, unexpected))} "
                                     f"({got})"))
    return failures


def _distribution(label: str, check: TrafficExpectation, replies: Sequence[TrafficResult]) -> list[CheckFailure]:
    failures: list[CheckFailure] = []
    total = len(replies)
    seen = collections.Counter(_who(r) for r in replies)
    listing = "".join(f"{who}: {n}/{total}\n" for who, n in sorted(seen.items()))
    for name, share in check.backends.items():
        hits = sum(1 for r in replies if _served_by(r, name))
        actual = hits / total
        if abs(actual - share.share) > share.tolerance + 1e-9:
            wanted = f"{share.share:g}" + (f" +- {share.tolerance:g}" if share.tolerance else "")
            failures.append(CheckFailure(f"{label}.backends[{name}]", f"served {hits} of {total} ({actual:.3f}), "
                                         f"expected {wanted}", expected=f"{name}: {wanted}\n", actual=listing))
    return failures
