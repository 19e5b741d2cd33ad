"""Comparing and applying auxiliary files (maps, general files, SSL certificates) on one instance.

Creates and updates run before the configuration change (certificates first), deletes after it,
because the API refuses to delete a file the running configuration references. Map updates that
only add, change or remove entries (keeping the order of kept entries) can go through the runtime
map API instead of a storage upload: no reload.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from typing import Literal

from cryptography import x509
from cryptography.x509.oid import NameOID

from haptic.core.control_characters import has_control_characters
from haptic.dataplane.api_errors import DataplaneError, DataplaneHTTPError
from haptic.dataplane.aux_files import AuxFiles, parse_map_entries, sanitize_storage_name
from haptic.dataplane.client import (
    STORAGE_GENERAL,
    STORAGE_MAPS,
    STORAGE_SSL,
    DataplaneClient,
    addressable,
)

AuxAction = Literal["create", "update", "delete"]
_LABELS = {STORAGE_MAPS: "map", STORAGE_GENERAL: "general file", STORAGE_SSL: "SSL certificate"}
# Write order: certificates first (configs and crt-lists reference them), then general files, maps.
_WRITE_ORDER = (STORAGE_SSL, STORAGE_GENERAL, STORAGE_MAPS)


@dataclass(frozen=True)
class MapEdit:
    action: Literal["add", "set", "delete"]
    key: str
    value: str = ""


@dataclass(frozen=True)
class AuxChange:
    kind: str
    action: AuxAction
    name: str
    content: str = ""
    # For map updates the runtime API can apply: the entry edits; None when it cannot.
    map_edits: tuple[MapEdit, ...] | None = None

    @property
    def description(self) -> str:
        return f"{self.action.capitalize()} {_LABELS[self.kind]} '{self.name}'"


@functools.lru_cache(maxsize=16)
def _entries(content: str) -> tuple[tuple[str, str], ...]:
    """A map's entries, parsed once for the comparison and the edits below."""
    return tuple(parse_map_entries(content))


# The pods of one deployment compare the same contents: two 3,000-line maps are parsed and diffed once.
@functools.lru_cache(maxsize=32)
def _maps_differ(current: str, desired: str) -> bool:
    return _entries(current) != _entries(desired)


@functools.lru_cache(maxsize=32)
def map_edits(current: str, desired: str, limit: int) -> tuple[MapEdit, ...] | None:
    """The runtime entry edits turning ``current`` into ``desired``, or None when the runtime API
    cannot express them (duplicate keys, reordered entries, new keys not at the end, too many, a key
    the API cannot put in a URL, a key or value that would break a runtime command)."""
    old, new = _entries(current), _entries(desired)
    for key, value in (*old, *new):
        if not addressable(key) or has_control_characters(value):
            return None
    old_values, new_values = dict(old), dict(new)
    if len(old_values) != len(old) or len(new_values) != len(new):
        return None
    kept_old = [k for k, _ in old if k in new_values]
    new_keys = [k for k, _ in new]
    if [k for k in new_keys if k in old_values] != kept_old:
        return None
    # ``add map`` appends: new keys must all come after the last kept key.
    # Positions by dict, not list.index(): maps with thousands of keys made this quadratic.
    position = {k: i for i, k in enumerate(new_keys)}
    last_kept = max((position[k] for k in kept_old), default=-1)
    if any(position[k] < last_kept for k in new_keys if k not in old_values):
        return None
    edits = [MapEdit("delete", k) for k, _ in old if k not in new_values]
    edits += [MapEdit("set", k, v) for k, v in new if k in old_values and old_values[k] != v]
    edits += [MapEdit("add", k, v) for k, v in new if k not in old_values]
    return tuple(edits) if len(edits) <= limit else None


def certificate_fingerprint(pem: str) -> str:
    """Leaf serial (decimal) plus the sorted issuer CNs of the chain — what the API reports."""
    try:
        certs = x509.load_pem_x509_certificates(pem.encode())
    except ValueError:
        return "__INVALID__"
    issuers = sorted({str(a.value) for c in certs for a in c.issuer.get_attributes_for_oid(NameOID.COMMON_NAME)})
    return f"cert:serial:{certs[0].serial_number}:issuers:{', '.join(issuers)}"


def _remote_fingerprint(info: dict[str, object]) -> str:
    serial, issuers = info.get("serial"), info.get("issuers")
    if not serial and not issuers:
        return "__NO_FINGERPRINT__"
    names = sorted({i.strip() for i in str(issuers or "").split(",") if i.strip()})
    return f"cert:serial:{serial}:issuers:{', '.join(names)}"


async def plan_aux(
    client: DataplaneClient, aux: AuxFiles, *, map_edit_limit: int = 100, runtime_maps: bool = True
) -> list[AuxChange]:
    """Compares the desired files with the instance's storage (one list plus one GET per file).
    Map updates get runtime edits only for maps haproxy loaded where the runtime API finds them."""
    desired_by_kind = {
        STORAGE_SSL: aux.certificates,
        STORAGE_GENERAL: aux.general_files(),
        STORAGE_MAPS: aux.maps,
    }
    changes: list[AuxChange] = []
    for kind in _WRITE_ORDER:
        desired = {sanitize_storage_name(kind, name): content for name, content in desired_by_kind[kind].items()}
        existing = {f.storage_name for f in await client.list_storage(kind)}
        for name, content in sorted(desired.items()):
            if name not in existing:
                changes.append(AuxChange(kind, "create", name, content))
                continue
            if kind == STORAGE_SSL:
                remote = _remote_fingerprint(await client.get_certificate_info(name))
                if remote != certificate_fingerprint(content):
                    changes.append(AuxChange(kind, "update", name, content))
                continue
            current = await client.get_storage_content(kind, name)
            if kind == STORAGE_MAPS:
                if _maps_differ(current, content):
                    edits = map_edits(current, content, map_edit_limit) if runtime_maps else None
                    changes.append(AuxChange(kind, "update", name, content, edits))
            elif current != content:
                changes.append(AuxChange(kind, "update", name, content))
        changes.extend(AuxChange(kind, "delete", name) for name in sorted(existing - desired.keys()))
    if any(c.map_edits is not None for c in changes):
        try:
            editable = await client.runtime_map_names()
        except DataplaneHTTPError:
            editable = set()  # no runtime API right now (haproxy down): upload, the reload tells
        changes = [c if c.map_edits is None or c.name in editable else replace(c, map_edits=None) for c in changes]
    return changes


async def write_aux(client: DataplaneClient, changes: list[AuxChange]) -> list[str]:
    """Creates and updates (storage uploads); returns the reload IDs they scheduled."""
    reload_ids: list[str] = []
    for change in changes:
        if change.action == "create":
            outcome = await client.create_storage_file(change.kind, change.name, change.content)
        elif change.action == "update":
            outcome = await client.replace_storage_file(change.kind, change.name, change.content)
        else:
            continue
        if outcome.reload_id and outcome.reload_id not in reload_ids:
            reload_ids.append(outcome.reload_id)
    return reload_ids


async def apply_map_edits(client: DataplaneClient, changes: list[AuxChange]) -> int:
    """Applies runtime map edits (synced to the stored file); returns how many entries changed."""
    count = 0
    for change in changes:
        for edit in change.map_edits or ():
            if edit.action == "add":
                await client.add_map_entry(change.name, edit.key, edit.value)
            elif edit.action == "set":
                await client.replace_map_entry(change.name, edit.key, edit.value)
            else:
                await client.delete_map_entry(change.name, edit.key)
            count += 1
    return count


async def delete_aux(client: DataplaneClient, changes: list[AuxChange]) -> list[str]:
    """Deletes obsolete files after the configuration change; failures come back as warnings."""
    warnings = []
    for change in changes:
        if change.action != "delete":
            continue
        try:
            await client.delete_storage_file(change.kind, change.name)
        except DataplaneError as exc:
            warnings.append(f"{change.description}: {exc}")
    return warnings
