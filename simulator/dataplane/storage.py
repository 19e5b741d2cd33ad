"""The fake's file storage: maps, general files and SSL certificates, in memory or on disk.

On disk (when a directory is given) so that a real haproxy can read the files it references.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from cryptography import x509
from cryptography.x509.oid import NameOID

from haptic.dataplane.aux_files import parse_map_entries

KINDS = ("maps", "general", "ssl_certificates")
_UNSAFE = re.compile(r"[^a-zA-Z0-9_\-]+")


def sanitize_name(kind: str, name: str) -> str:
    """As the API does: unsafe runs in base name and extension become ``_``; maps get ``.map``."""
    base, dot, ext = PurePosixPath(name).name.rpartition(".")
    if not dot:
        base, ext = ext, ""
    clean = _UNSAFE.sub("_", base) + ("." + _UNSAFE.sub("_", ext) if ext else "")
    if kind == "maps" and not clean.endswith(".map"):
        clean += ".map"
    return clean


class InvalidCertificateError(ValueError):
    pass


def certificate_info(pem: str) -> dict[str, Any]:
    """The metadata the API serves for a stored certificate (leaf serial in decimal, issuer CNs)."""
    try:
        certs = x509.load_pem_x509_certificates(pem.encode())
    except ValueError as exc:
        raise InvalidCertificateError(f"invalid PEM certificate: {exc}") from exc
    leaf = certs[0]
    issuers: list[str] = []
    for cert in certs:
        for attr in cert.issuer.get_attributes_for_oid(NameOID.COMMON_NAME):
            value = str(attr.value)
            if value not in issuers:
                issuers.append(value)
    subjects = leaf.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    return {
        "serial": str(leaf.serial_number),
        "issuers": ", ".join(issuers),
        "subject": ", ".join(str(a.value) for a in subjects),
        "not_before": leaf.not_valid_before_utc.isoformat(),
        "not_after": leaf.not_valid_after_utc.isoformat(),
    }


@dataclass
class StoredFile:
    name: str
    path: str
    content: str


class Storage:
    """Files per kind; ``root`` set means the files are also written below it."""

    def __init__(self, root: Path | None = None, virtual_root: str = "/etc/haproxy") -> None:
        self.root = root
        self.virtual_root = virtual_root
        self.files: dict[str, dict[str, StoredFile]] = {kind: {} for kind in KINDS}

    def directory(self, kind: str) -> str:
        sub = "ssl" if kind == "ssl_certificates" else kind
        base = str(self.root) if self.root is not None else self.virtual_root
        return f"{base}/{sub}"

    def path(self, kind: str, name: str) -> str:
        return f"{self.directory(kind)}/{name}"

    def get(self, kind: str, name: str) -> StoredFile | None:
        return self.files[kind].get(name)

    def put(self, kind: str, name: str, content: str) -> StoredFile:
        stored = StoredFile(name=name, path=self.path(kind, name), content=content)
        self.files[kind][name] = stored
        if self.root is not None:
            target = Path(stored.path)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content)
        return stored

    def delete(self, kind: str, name: str) -> None:
        stored = self.files[kind].pop(name)
        if self.root is not None:
            Path(stored.path).unlink(missing_ok=True)

    def clear(self) -> None:
        for kind in KINDS:
            for name in list(self.files[kind]):
                self.delete(kind, name)

    def listing(self, kind: str) -> list[dict[str, Any]]:
        return [
            {"storage_name": f.name, "file": f.path, "description": "managed file", "id": f.name}
            for f in sorted(self.files[kind].values(), key=lambda f: f.name)
        ]


parse_map = parse_map_entries


def render_map(entries: list[tuple[str, str]]) -> str:
    return "".join(f"{k} {v}\n" if v else f"{k}\n" for k, v in entries)
