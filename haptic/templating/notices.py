"""What a render says about individual objects: an object left out of the config, or a warning about it.

Templates (and ``reject_unsafe``) record an ``ObjectNotice`` naming the object (``ObjectRef``), the
field at fault, a CamelCase ``reason`` (Kubernetes Event reason style) and a message. The controller
turns them into domain events, Kubernetes Events on the object and status; the webhook into admission
denials or warnings. Pure data: no I/O, no controller imports.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from haptic.core.frozen import frozen_instance

#: Reasons the shipped code uses (templates may use their own CamelCase reasons).
UNSAFE_INPUT = "UnsafeInput"
HOST_CONFLICT = "HostConflict"
REJECTED_BY_HAPROXY = "RejectedByHAProxy"

_REASON = re.compile(r"^[A-Z][A-Za-z0-9]{0,127}\Z")
_MAX_MESSAGE = 1024


@dataclass(frozen=True, order=True)
class ObjectRef:
    """Which object a notice is about (what a Kubernetes Event's ``involvedObject`` needs)."""

    kind: str
    namespace: str
    name: str
    api_version: str = ""
    uid: str = ""
    resource_version: str = ""

    @property
    def key(self) -> tuple[str, str, str]:
        """Identity across versions of the object: kind, namespace, name."""
        return (self.kind, self.namespace, self.name)

    def __str__(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}" if self.namespace else f"{self.kind} {self.name}"


def object_ref(obj: Any, kind: str = "") -> ObjectRef | None:
    """The reference of a Kubernetes object (a mapping with ``metadata``), or None for anything else."""
    if not isinstance(obj, Mapping):
        return None
    meta = obj.get("metadata")
    if not isinstance(meta, Mapping) or not isinstance(meta.get("name"), str):
        return None
    # a startup declares a status or a notice for each of thousands of objects
    return frozen_instance(
        ObjectRef,
        kind=str(obj.get("kind") or kind or "Object"),
        namespace=str(meta.get("namespace") or ""),
        name=str(meta["name"]),
        api_version=str(obj.get("apiVersion") or ""),
        uid=str(meta.get("uid") or ""),
        resource_version=str(meta.get("resourceVersion") or ""),
    )


def check_reason(reason: str) -> str:
    """``reason`` when it is a CamelCase word as Kubernetes Event reasons are; raises ValueError otherwise."""
    if not _REASON.match(reason):
        raise ValueError(f"notice reason {reason!r} must be a CamelCase word (e.g. HostConflict)")
    return reason


@dataclass(frozen=True, order=True)
class ObjectNotice:
    """One thing a render says about one object. ``excluded``: the object is left out of the config."""

    ref: ObjectRef
    reason: str
    message: str
    field: str = ""
    excluded: bool = False

    def __post_init__(self) -> None:
        if len(self.message) > _MAX_MESSAGE:
            object.__setattr__(self, "message", self.message[: _MAX_MESSAGE - 15].rstrip() + " … (truncated)")

    @property
    def key(self) -> tuple[tuple[str, str, str], str, str, str, bool]:
        """What makes two notices the same one (the object across versions, what and where)."""
        return (self.ref.key, self.reason, self.field, self.message, self.excluded)

    def text(self) -> str:
        """The one-line form used in logs and render warnings."""
        where = f" ({self.field})" if self.field else ""
        verb = "excluding" if self.excluded else "warning for"
        return f"{verb} {self.ref}{where}: {self.message} [{self.reason}]"


_REASON_FIELD = re.compile(r"^((?:metadata|spec|rules|tls|defaultBackend)[\w.\[\]'/-]*)")
_ANNOTATION = re.compile(r"^annotation (\S+)")


def field_of_reason(reason: str) -> str:
    """The field path a ``unsafe_reasons`` line starts with (``spec.rules[0].host``), or ``""``."""
    if reason.startswith(("tls.crt", "tls.key")):
        return f"data[{reason[:7]}]"
    annotation = _ANNOTATION.match(reason)
    if annotation:
        return f"metadata.annotations[{annotation.group(1)}]"
    found = _REASON_FIELD.match(reason)
    if not found:
        return ""
    path = found.group(1)
    if path.startswith(("rules", "tls", "defaultBackend")):
        path = "spec." + path
    return path.rstrip(":")
