"""The fake's file storage: maps, general files and SSL certificates in the pod's storage directories.

Like the real dataplaneapi's storage settings (``maps_dir``, ``ssl_certs_dir``,
``general_storage_dir``), each kind lives in one directory of the pod's filesystem, and the
directory is the truth: a file put there by someone else (a volume kept over a restart) is listed,
served and deleted like an uploaded one. The pod's filesystem is either in memory (sim) or a host
directory mounted at ``virtual_root`` (real haproxy reads the files there).
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from cryptography import x509
from cryptography.x509.oid import NameOID

from haptic.dataplane.aux_files import parse_map_entries

KINDS = ("maps", "general", "ssl_certificates")
_UNSAFE = re.compile(r"[^a-zA-Z0-9_\-]+")
# What the real API lists as each kind's description.
_DESCRIPTIONS = {
    "maps": "managed map file",
    "general": "managed general use file",
    "ssl_certificates": "managed SSL file",
}


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


@dataclass(frozen=True)
class StorageDirs:
    """The pod paths of the three storage directories (the real API's storage settings)."""

    maps_dir: str = "/etc/haproxy/maps"
    ssl_certs_dir: str = "/etc/haproxy/ssl"
    general_storage_dir: str = "/etc/haproxy/general"

    @classmethod
    def under(cls, root: str) -> StorageDirs:
        root = root.rstrip("/")
        return cls(f"{root}/maps", f"{root}/ssl", f"{root}/general")

    def for_kind(self, kind: str) -> str:
        if kind == "maps":
            return self.maps_dir.rstrip("/")
        if kind == "ssl_certificates":
            return self.ssl_certs_dir.rstrip("/")
        if kind == "general":
            return self.general_storage_dir.rstrip("/")
        raise KeyError(kind)


@dataclass
class StoredFile:
    name: str
    path: str  # where the pod sees it (what the API reports as ``file``)
    content: str


class Storage:
    """The pod's files. ``root`` set: they live on disk below ``root``, which the pod sees at
    ``virtual_root`` (default: ``root`` itself); otherwise in memory."""

    def __init__(self, root: Path | None = None, virtual_root: str | None = None,
                 dirs: StorageDirs | None = None) -> None:
        self.root = root
        self.virtual_root = (virtual_root or (str(root) if root is not None else "/etc/haproxy")).rstrip("/")
        self.dirs = dirs or StorageDirs.under(self.virtual_root)
        self._memory: dict[str, str] = {}
        if root is not None:
            for kind in KINDS:
                self._host(self.dirs.for_kind(kind))  # refuses directories the mount cannot hold

    # -- the pod's filesystem -------------------------------------------------------------------

    def _host(self, pod_path: str) -> Path:
        assert self.root is not None
        normalized = posixpath.normpath(pod_path)
        if normalized != self.virtual_root and not normalized.startswith(self.virtual_root + "/"):
            raise ValueError(f"{pod_path} is outside the pod volume mounted at {self.virtual_root}")
        return self.root / posixpath.relpath(normalized, self.virtual_root)

    def read_file(self, pod_path: str) -> str | None:
        """Any file of the pod's filesystem the fake can see (None when it does not exist)."""
        pod_path = posixpath.normpath(pod_path)
        if self.root is None:
            return self._memory.get(pod_path)
        try:
            host = self._host(pod_path)
        except ValueError:
            return None
        try:
            # newline="": the file as stored, byte for byte (a CRLF in an errorfile response must stay one)
            return host.read_bytes().decode() if host.is_file() else None
        except OSError:
            return None

    def write_file(self, pod_path: str, content: str) -> None:
        pod_path = posixpath.normpath(pod_path)
        if self.root is None:
            self._memory[pod_path] = content
            return
        target = self._host(pod_path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8", newline="")

    def remove_file(self, pod_path: str) -> None:
        pod_path = posixpath.normpath(pod_path)
        if self.root is None:
            self._memory.pop(pod_path, None)
        else:
            self._host(pod_path).unlink(missing_ok=True)

    def _names(self, kind: str) -> list[str]:
        directory = self.dirs.for_kind(kind)
        if self.root is None:
            return sorted(p.rsplit("/", 1)[1] for p in self._memory if posixpath.dirname(p) == directory)
        host = self._host(directory)
        if not host.is_dir():
            return []
        return sorted(p.name for p in host.iterdir() if p.is_file() and not p.name.startswith("."))

    # -- storage kinds --------------------------------------------------------------------------

    def directory(self, kind: str) -> str:
        """The kind's directory where this process can read it (host path on disk, else the pod's)."""
        pod_dir = self.dirs.for_kind(kind)
        return str(self._host(pod_dir)) if self.root is not None else pod_dir

    def path(self, kind: str, name: str) -> str:
        """A stored file where this process can read it (see ``directory``)."""
        return f"{self.directory(kind)}/{name}"

    def pod_path(self, kind: str, name: str) -> str:
        return f"{self.dirs.for_kind(kind)}/{name}"

    def get(self, kind: str, name: str) -> StoredFile | None:
        if "/" in name or name in ("", ".", ".."):
            return None
        content = self.read_file(self.pod_path(kind, name))
        return None if content is None else StoredFile(name, self.pod_path(kind, name), content)

    def put(self, kind: str, name: str, content: str) -> StoredFile:
        self.write_file(self.pod_path(kind, name), content)
        return StoredFile(name, self.pod_path(kind, name), content)

    def delete(self, kind: str, name: str) -> None:
        self.remove_file(self.pod_path(kind, name))

    def clear(self) -> None:
        for kind in KINDS:
            for name in self._names(kind):
                self.delete(kind, name)

    @property
    def files(self) -> dict[str, dict[str, StoredFile]]:
        """Every stored file by kind and name (read from the directories)."""
        out: dict[str, dict[str, StoredFile]] = {}
        for kind in KINDS:
            out[kind] = {}
            for name in self._names(kind):
                stored = self.get(kind, name)
                if stored is not None:
                    out[kind][name] = stored
        return out

    def listing(self, kind: str) -> list[dict[str, Any]]:
        return [
            {"storage_name": name, "file": self.pod_path(kind, name), "description": _DESCRIPTIONS[kind]}
            for name in self._names(kind)
        ]


parse_map = parse_map_entries


def render_map(entries: list[tuple[str, str]]) -> str:
    return "".join(f"{k} {v}\n" if v else f"{k}\n" for k, v in entries)
