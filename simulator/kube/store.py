"""``FakeKubeAPI``: the object store and the semantics of a Kubernetes API server.

Stored objects are never mutated once committed (every write stores a fresh dict), so readers that
only serialize them (the HTTP app) can share them; the in-process client hands out copies.
"""

from __future__ import annotations

import builtins
import contextlib
import json
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from haptic.k8s.api import JSON, ApiError, Conflict, Gone, NotFound

from . import object_defaults, ownership
from .clock import SeededIds, Stamper, default_now
from .defaults import ClusterIPs, apply_defaults
from .faults import Faults
from .field_errors import FieldError, Raw, forbidden, invalid_value, not_supported, required
from .field_errors import invalid as invalid_error
from .field_validation import directive
from .gofmt import go_strings
from .object_defaults import has_generation
from .patching import json_copy, json_patch, merge_patch, strategic_merge
from .resources import BUILTIN_TYPES, CRD_KEY, NAMESPACES_KEY, ResourceType, TypeRegistry
from .selectors import combine, parse_field_selector, parse_label_selector
from .status_body import status_object
from .typestore import Event, Key, TypeStore, decode_continue, encode_continue
from .validation import bad_request, check_body, check_name, invalid
from .watch import Watch
from .write_checks import check_apply_body, check_write

_DEFAULTED = {("", "secrets"), ("", "services"), ("discovery.k8s.io", "endpointslices")}
_ENCODER = json.JSONEncoder(separators=(",", ":"))  # one instance: json.dumps builds one per call
DEFAULT_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
_GC_FINALIZERS = {"Foreground": "foregroundDeletion", "Orphan": "orphan"}


class AdmissionHook(Protocol):
    """What the store holds to let front-ends run admission (``simulator.kube.admission`` implements it)."""

    def wants(self, rt: ResourceType) -> bool: ...

    def webhooks_for(self, attempt: Any) -> list[Any]: ...

    async def __call__(self, attempt: Any) -> None: ...


@dataclass(frozen=True)
class ListResult:
    items: list[JSON]
    resource_version: str
    continue_token: str | None


class FakeKubeAPI:
    """Store plus semantics. Synchronous core: faults are applied by the front-ends (see ``faults``)."""

    def __init__(
        self,
        now: Callable[[], datetime] | None = None,
        ids: Callable[[], str] | None = None,
        seed: int = 0,
        bookmark_interval: float = 5.0,
        history_limit: int = 200_000,
        types: Iterable[ResourceType] = BUILTIN_TYPES,
        namespaces: Iterable[str] = DEFAULT_NAMESPACES,
    ) -> None:
        self.now = now or default_now
        self.stamp = Stamper(self.now)
        self._ids = SeededIds(seed)
        self.new_uid = ids or self._ids.uid
        self.bookmark_interval = bookmark_interval
        self.history_limit = history_limit
        self.types = TypeRegistry(types)
        self.faults = Faults()
        self._rv = 0
        self._compacted = 0
        self._stores: dict[Key, TypeStore] = {}
        self._encoded: dict[int, tuple[JSON, bytes]] = {}
        self._draining: set[str] = set()
        self._dry = False
        # ownerReferences uid -> dependents, and the uids that exist, for garbage collection.
        self._dependents: dict[str, dict[tuple[Key, Key], None]] = {}
        self._live_uids: set[str] = set()
        # uid -> where the object is stored (owners are found by uid when their dependents go).
        self._by_uid: dict[str, tuple[Key, Key]] = {}
        self._cluster_ips = ClusterIPs()
        self.writes = 0
        # Validating webhooks are called only when enabled (``admission.enable_admission``).
        self.admission: AdmissionHook | None = None
        for name in namespaces:
            self.create(self.types.resolve("v1", "namespaces"), None, {"metadata": {"name": name}})

    # -- basics ----------------------------------------------------------------------------------

    @property
    def resource_version(self) -> int:
        return self._rv

    def _store(self, rt: ResourceType) -> TypeStore:
        return self._store_by_key(rt.storage_key)

    def _store_by_key(self, key: Key) -> TypeStore:
        ts = self._stores.get(key)
        if ts is None:
            ts = self._stores[key] = TypeStore()
        return ts

    def resolve(self, api_version: str, plural: str) -> ResourceType:
        return self.types.resolve(api_version, plural)

    def encoded(self, obj: JSON) -> bytes:
        """The JSON bytes of a stored object, cached until the object is replaced."""
        hit = self._encoded.get(id(obj))
        if hit is not None and hit[0] is obj:
            return hit[1]
        raw = _ENCODER.encode(obj).encode()
        if len(self._encoded) > 1_000_000:
            self._encoded.clear()
        self._encoded[id(obj)] = (obj, raw)
        return raw

    def _key(self, rt: ResourceType, namespace: str | None, name: str) -> Key:
        return (namespace or "" if rt.namespaced else "", name)

    def _not_found(self, rt: ResourceType, name: str) -> NotFound:
        return NotFound(f'{rt.describe()} "{name}" not found', {"name": name, "group": rt.group, "kind": rt.plural})

    def _floor(self, ts: TypeStore) -> int:
        return max(self._compacted, ts.floor)

    # -- commits -----------------------------------------------------------------------------------

    def _commit(self, rt: ResourceType, ts: TypeStore, key: Key, etype: str, obj: JSON, old: JSON | None) -> None:
        """Stores ``obj`` (already carrying its new resourceVersion) and tells the watchers."""
        if self._dry:
            return
        if etype == "DELETED":
            del ts.objects[key]
            ts.sorted_keys = None
        else:
            if old is None:
                ts.sorted_keys = None
            ts.objects[key] = obj
        if old is not None:
            self._encoded.pop(id(old), None)
        self._index_owners(rt, key, etype, obj, old)
        self.writes += 1
        event: Event = (self._rv, etype, obj, old)
        history = ts.history
        history.append(event)
        if len(history) > self.history_limit:
            ts.floor = history.popleft()[0]
        for watcher in ts.watchers:
            watcher.offer(etype, obj, old)

    def _index_owners(self, rt: ResourceType, key: Key, etype: str, obj: JSON, old: JSON | None) -> None:
        meta = obj["metadata"]
        uid = meta.get("uid")
        if etype == "ADDED" and uid:
            self._live_uids.add(uid)
            self._by_uid[uid] = (rt.storage_key, key)
        elif etype == "DELETED":
            self._live_uids.discard(uid)
            self._by_uid.pop(str(uid), None)
        before = (old or {}).get("metadata", {}).get("ownerReferences") or []
        after = (meta.get("ownerReferences") or []) if etype != "DELETED" else []
        if before == after:
            return
        slot = (rt.storage_key, key)
        for ref in before:
            self._dependents.get(str(ref.get("uid")), {}).pop(slot, None)
        for ref in after:
            self._dependents.setdefault(str(ref.get("uid")), {})[slot] = None

    def _collect_dependents(self, owner: JSON) -> None:
        """Background garbage collection: dependents whose owners are all gone are deleted."""
        uid = owner["metadata"].get("uid")
        for storage_key, key in list(self._dependents.pop(str(uid), {})):
            ts = self._stores.get(storage_key)
            obj = ts.objects.get(key) if ts is not None else None
            if obj is None:
                continue
            owners = [str(r.get("uid")) for r in obj["metadata"].get("ownerReferences") or []]
            if any(o != uid and o in self._live_uids for o in owners):
                continue
            rt = next((r for r in self.types.all() if r.storage_key == storage_key), None)
            if rt is not None:
                with contextlib.suppress(NotFound):
                    self.delete(rt, key[0] or None, key[1])

    def _bump(self, obj: JSON) -> None:
        if self._dry:
            return  # a dry run allocates no version: the answer keeps the one it had (none on create)
        self._rv += 1
        obj["metadata"]["resourceVersion"] = str(self._rv)

    @property
    def in_dry_run(self) -> bool:
        return self._dry

    @contextlib.contextmanager
    def dry_run(self) -> Iterator[None]:
        """Within this block writes are validated and computed but neither stored nor watched."""
        self._dry = True
        try:
            yield
        finally:
            self._dry = False

    # -- reads ---------------------------------------------------------------------------------------

    def get(self, rt: ResourceType, namespace: str | None, name: str) -> JSON:
        obj = self._store(rt).objects.get(self._key(rt, namespace, name))
        if obj is None:
            raise self._not_found(rt, name)
        return obj

    def list(
        self,
        rt: ResourceType,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
        resource_version: str | None = None,
        resource_version_match: str | None = None,
    ) -> ListResult:
        """A list at the current version (or, with ``resource_version_match="Exact"``, at the given one);
        with ``limit``, pages continue from the first page's snapshot."""
        match = combine(parse_label_selector(label_selector), parse_field_selector(field_selector))
        ts = self._store(rt)
        rv = self._rv
        after: Key | None = None
        if resource_version_match == "Exact" and resource_version and not continue_token:
            try:
                rv = int(resource_version)
            except ValueError as exc:
                raise bad_request(f"invalid resourceVersion {resource_version!r}: must be an integer") from exc
            if rv < self._floor(ts):
                raise Gone(f"too old resource version: {rv} ({self._floor(ts)})", {"kind": rt.plural})
            if rv > self._rv:
                raise ApiError(504, "Timeout", f"Too large resource version: {rv}, current: {self._rv}")
        if continue_token:
            rv, after = decode_continue(continue_token)
            if rv < self._floor(ts):
                raise Gone(
                    "The provided continue parameter is too old to display a consistent list result. You can start "
                    "a new list without the continue parameter.", {"kind": rt.plural, "group": rt.group})
        objects, keys = ts.state_at(rv, self._rv)
        namespace = namespace if rt.namespaced else None
        start = 0
        if after is not None:
            start = bisect_left(keys, after)
            if start < len(keys) and keys[start] == after:
                start += 1
        elif namespace is not None:
            start = bisect_left(keys, (namespace, ""))
        items: builtins.list[JSON] = []
        next_token: str | None = None
        for index in range(start, len(keys)):
            key = keys[index]
            if namespace is not None and key[0] != namespace:
                if key[0] > namespace:
                    break
                continue
            obj = objects[key]
            if match is not None and not match(obj):
                continue
            if limit and len(items) >= limit:
                next_token = encode_continue(rv, keys[index - 1])
                break
            items.append(obj)
        return ListResult(items, str(rv), next_token)

    def watch(
        self,
        rt: ResourceType,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        resource_version: str | None = None,
        timeout: float | None = None,
        bookmarks: bool = False,
        send_initial_events: bool | None = None,
    ) -> Watch:
        """Starts a watch: events strictly after ``resource_version`` (or the current state as ADDED
        when it is unset or "0"); an in-stream 410 ERROR when that version was compacted."""
        match = combine(parse_label_selector(label_selector), parse_field_selector(field_selector))
        ts = self._store(rt)
        namespace = namespace if rt.namespaced else None
        watch = Watch(rt.kind, rt.api_version, namespace, match, lambda: self._rv, self._unregister(ts),
                      self.bookmark_interval if bookmarks else None, timeout)
        initial = resource_version in (None, "", "0") if send_initial_events is None else send_initial_events
        if initial:
            for key in ts.ordered():
                obj = ts.objects[key]
                if (namespace is None or key[0] == namespace) and (match is None or match(obj)):
                    watch.push("ADDED", obj)
            if send_initial_events and bookmarks:
                watch.bookmark({"k8s.io/initial-events-end": "true"})
        else:
            try:
                since = int(str(resource_version))
            except ValueError as exc:
                raise bad_request(f"invalid resourceVersion {resource_version!r}: must be an integer") from exc
            if since < self._floor(ts):
                watch.push("ERROR", status_object(Gone(f"too old resource version: {since} ({self._floor(ts)})")))
                watch.close()
                return watch
            for event_rv, etype, obj, old in ts.history:
                if event_rv > since:
                    watch.offer(etype, obj, old)
        ts.watchers.append(watch)
        return watch

    def _unregister(self, ts: TypeStore) -> Callable[[Watch], None]:
        def remove(watch: Watch) -> None:
            if watch in ts.watchers:
                ts.watchers.remove(watch)

        return remove

    # -- creation ------------------------------------------------------------------------------------

    def _namespace_ready(self, rt: ResourceType, namespace: str) -> None:
        ns = self._store_by_key(NAMESPACES_KEY).objects.get(("", namespace))
        if ns is None:
            raise NotFound(f'namespaces "{namespace}" not found', {"name": namespace, "kind": "namespaces"})
        if ns["metadata"].get("deletionTimestamp"):
            raise ApiError(403, "Forbidden", f'unable to create new content in namespace {namespace} because it is '
                                             "being terminated", {"name": namespace, "kind": rt.plural})

    def _generate_name(self, prefix: str) -> str:
        return prefix + self._ids.suffix()

    def create(self, rt: ResourceType, namespace: str | None, body: Any, manager: str | None = None,
               keep_status: bool = False, managed_fields: builtins.list[JSON] | None = None,
               field_validation: str | None = None) -> JSON:
        how = directive(field_validation, "create")
        check_body(rt, body, None, namespace)
        obj: JSON = {"apiVersion": rt.api_version, "kind": rt.kind}
        for field, value in body.items():
            if field not in obj:
                obj[field] = json_copy(value)
        meta: JSON = obj.get("metadata") or {}
        obj["metadata"] = meta
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = self._generate_name(str(meta["generateName"]))
        check_name(rt, meta.get("name"))
        name = meta["name"]
        if rt.namespaced:
            ns = namespace or meta.get("namespace") or "default"
            meta["namespace"] = ns
            self._namespace_ready(rt, ns)
        else:
            meta.pop("namespace", None)
        ts = self._store(rt)
        key = self._key(rt, meta.get("namespace"), name)
        if key in ts.objects:
            raise Conflict(f'{rt.describe()} "{name}" already exists',
                           {"name": name, "group": rt.group, "kind": rt.plural}, reason="AlreadyExists")
        for field in ("deletionTimestamp", "deletionGracePeriodSeconds", "resourceVersion", "selfLink"):
            meta.pop(field, None)
        meta["uid"] = self.new_uid()
        meta["creationTimestamp"] = self.stamp()
        if has_generation(rt):
            meta["generation"] = 1
        else:
            meta.pop("generation", None)
        if rt.has_status and not keep_status:
            obj.pop("status", None)
        self._defaults(rt, obj)
        if rt.storage_key in _DEFAULTED:
            apply_defaults(rt, obj, None, self._cluster_ips)
        object_defaults.apply(rt, obj, creating=True)
        if rt.storage_key == CRD_KEY:
            self._check_crd(obj)
        check_write(rt, obj, None, "create", how)
        if managed_fields is not None:
            meta["managedFields"] = managed_fields
        elif manager:
            fields = ownership.leaves(obj, rt.kind)
            managed = ownership.ManagedFields(None)
            managed.record_update(manager, rt.api_version, meta["creationTimestamp"], set(fields), set())
            rendered = managed.render()
            if rendered:
                meta["managedFields"] = rendered
            else:
                meta.pop("managedFields", None)
        else:
            meta.pop("managedFields", None)
        self._bump(obj)
        self._commit(rt, ts, key, "ADDED", obj, None)
        if rt.storage_key == CRD_KEY and not self._dry:
            self.types.register_crd(obj)
        if rt.storage_key == NAMESPACES_KEY and not self._dry:
            self._default_service_account(name)
        return obj

    def _default_service_account(self, namespace: str) -> None:
        """Every namespace gets its ``default`` ServiceAccount (the serviceaccounts controller's job)."""
        rt = self.types.find("", "v1", "serviceaccounts")
        if rt is not None and (namespace, "default") not in self._store(rt).objects:
            self.create(rt, namespace, {"metadata": {"name": "default"}})

    def _defaults(self, rt: ResourceType, obj: JSON) -> None:
        """Server-set fields clients rely on."""
        if rt.storage_key == NAMESPACES_KEY:
            obj["status"] = {"phase": "Active"}
            obj.setdefault("spec", {"finalizers": ["kubernetes"]})
        elif rt.storage_key == CRD_KEY:
            names = (obj.get("spec") or {}).get("names") or {}
            obj["status"] = {
                "acceptedNames": names,
                "conditions": [
                    {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts",
                     "lastTransitionTime": self.stamp(), "message": "no conflicts found"},
                    {"type": "Established", "status": "True", "reason": "InitialNamesAccepted",
                     "lastTransitionTime": self.stamp(), "message": "the initial names have been accepted"},
                ],
                "storedVersions": [v["name"] for v in (obj.get("spec") or {}).get("versions") or []
                                   if v.get("storage")],
            }

    def _check_crd(self, obj: JSON) -> None:
        rt = self.types.resolve("apiextensions.k8s.io/v1", "customresourcedefinitions")
        spec = obj.get("spec")
        name = obj["metadata"]["name"]
        spec = spec if isinstance(spec, dict) else {}
        names: JSON = spec["names"] if isinstance(spec.get("names"), dict) else {}
        errors: builtins.list[FieldError] = []
        for field, value in (("spec.group", spec.get("group")), ("spec.names.plural", names.get("plural")),
                             ("spec.names.kind", names.get("kind"))):
            if not isinstance(value, str) or not value:
                errors.append(required(field))
        versions = spec.get("versions")
        if not isinstance(versions, list) or not versions:
            errors.append(invalid_value("spec.versions", Raw("[]apiextensions.CustomResourceDefinitionVersion(nil)"),
                                        "must have exactly one version marked as storage version"))
            versions = []
        for index, version in enumerate(versions):
            if not isinstance(version, dict) or not isinstance(version.get("name"), str) or not version["name"]:
                errors.append(required(f"spec.versions[{index}].name"))
        if errors:
            raise invalid(rt, name, errors)
        group, plural = spec["group"], names["plural"]
        if name != f"{plural}.{group}":
            raise invalid(rt, name, [invalid_value("metadata.name", name,
                                                   'must be spec.names.plural+"."+spec.group')])
        existing = self.types.find(group, versions[0]["name"], plural)
        if existing is not None and not existing.custom:
            raise invalid(rt, name, [invalid_value("spec.group", group, f"{plural}.{group} is a built-in type")])

    # -- updates ----------------------------------------------------------------------------------------

    def update(self, rt: ResourceType, namespace: str | None, name: str, body: Any,
               subresource: str | None = None, manager: str | None = None,
               field_validation: str | None = None) -> JSON:
        """PUT: replace the object (or only its status), with a resourceVersion precondition."""
        how = directive(field_validation, "update")
        self.check_subresource(rt, subresource)
        check_body(rt, body, name, namespace)
        old = self.get(rt, namespace, name)
        wanted_rv = (body.get("metadata") or {}).get("resourceVersion")
        if wanted_rv in (None, ""):
            if rt.custom:
                raise invalid(rt, name, [invalid_value("metadata.resourceVersion", Raw("0x0"),
                                                       "must be specified for an update")])
        elif str(wanted_rv) != old["metadata"]["resourceVersion"]:
            raise self._stale(rt, name)
        return self._finish_update(rt, old, body, subresource, manager, how=how, operation="update")

    def _stale(self, rt: ResourceType, name: str) -> Conflict:
        return Conflict(f'Operation cannot be fulfilled on {rt.describe()} "{name}": the object has been modified; '
                        "please apply your changes to the latest version and try again",
                        {"name": name, "group": rt.group, "kind": rt.plural})

    def check_subresource(self, rt: ResourceType, subresource: str | None) -> None:
        if subresource is None:
            return
        if subresource != "status" or not rt.has_status:
            raise NotFound(f"the server could not find the requested resource ({rt.describe()}/{subresource})",
                           {"kind": rt.plural, "group": rt.group})

    def _finish_update(self, rt: ResourceType, old: JSON, body: JSON, subresource: str | None,
                       manager: str | None, applied: bool = False, how: str = "Warn",
                       operation: str = "update") -> JSON:
        """Builds the new object from ``body`` and ``old``, then commits it (or nothing, if unchanged)."""
        old_meta = old["metadata"]
        if subresource == "status":
            new: JSON = {k: v for k, v in old.items() if k != "status"}
            if "status" in body:
                new["status"] = json_copy(body["status"])
            new["metadata"] = dict(old_meta)
        else:
            new = json_copy(body) if not applied else body
            meta = new.setdefault("metadata", {})
            if rt.has_status:
                if "status" in old:
                    new["status"] = old["status"]
                else:
                    new.pop("status", None)
            for field in ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds",
                          "generation", "name", "namespace"):
                if field in old_meta:
                    meta[field] = old_meta[field]
                else:
                    meta.pop(field, None)
            if "managedFields" not in meta and "managedFields" in old_meta:
                meta["managedFields"] = old_meta["managedFields"]
            added = set(meta.get("finalizers") or ()) - set(old_meta.get("finalizers") or ())
            if old_meta.get("deletionTimestamp") and added:
                raise invalid(rt, old_meta["name"], [forbidden(
                    "metadata.finalizers", "no new finalizers can be added if the object is being deleted, found new "
                    f"finalizers {go_strings(sorted(added))}")])
        new["apiVersion"] = old["apiVersion"]
        new["kind"] = rt.kind
        meta = new["metadata"]
        meta["resourceVersion"] = old_meta["resourceVersion"]
        if rt.storage_key == CRD_KEY:
            self._check_crd(new)
        if rt.storage_key in _DEFAULTED and subresource is None:
            if new is body:
                new = json_copy(new)
            apply_defaults(rt, new, old, self._cluster_ips)
        if subresource is None:
            if new is body:
                new = json_copy(new)
            object_defaults.apply(rt, new, creating=False)
        if subresource == "status":
            new = json_copy(new)  # it shares the stored object's other fields
        check_write(rt, new, old, operation, how, subresource)
        meta = new["metadata"]  # ``new`` may be a copy by now
        if has_generation(rt) and self._spec_view(rt, new) != self._spec_view(rt, old):
            meta["generation"] = int(old_meta.get("generation") or 0) + 1
        if manager and not applied:
            self._track_update(rt, old, new, manager, subresource)
        if self._same(old, new):
            return old
        finished = bool(meta.get("deletionTimestamp")) and not meta.get("finalizers")
        ts = self._store(rt)
        key = self._key(rt, meta.get("namespace"), meta["name"])
        self._bump(new)
        if finished:
            self._commit(rt, ts, key, "DELETED", new, old)
            self._after_removal(rt, new)
        else:
            self._commit(rt, ts, key, "MODIFIED", new, old)
            if rt.storage_key == CRD_KEY and not self._dry:
                self.types.register_crd(new)
        return new

    @staticmethod
    def _spec_view(rt: ResourceType, obj: JSON) -> JSON:
        skipped = ("metadata", "status", "apiVersion", "kind") if rt.has_status else ("metadata", "apiVersion", "kind")
        return {k: v for k, v in obj.items() if k not in skipped}

    @staticmethod
    def _same(old: JSON, new: JSON) -> bool:
        if old.keys() != new.keys():
            return False
        for key, value in new.items():
            if key == "metadata":
                a = {k: v for k, v in old["metadata"].items() if k != "managedFields"}
                b = {k: v for k, v in value.items() if k != "managedFields"}
                if a != b:
                    return False
            elif old[key] != value:
                return False
        return True

    def _track_update(self, rt: ResourceType, old: JSON, new: JSON, manager: str, subresource: str | None) -> None:
        with_status = subresource == "status"
        before = ownership.leaves(old, rt.kind, with_status)
        after = ownership.leaves(new, rt.kind, with_status)
        changed, removed = ownership.diff_paths(before, after)
        if not changed and not removed:
            return
        managed = ownership.ManagedFields(new["metadata"].get("managedFields"))
        managed.record_update(manager, rt.api_version, self.stamp(), changed, removed, subresource)
        rendered = managed.render()
        if rendered:
            new["metadata"]["managedFields"] = rendered
        else:
            new["metadata"].pop("managedFields", None)

    def patch(self, rt: ResourceType, namespace: str | None, name: str, patch_type: str, body: Any,
              subresource: str | None = None, manager: str | None = None, force: bool = False,
              field_validation: str | None = None) -> JSON:
        """PATCH with ``merge``, ``json``, ``strategic`` or ``apply`` (server-side apply)."""
        how = directive(field_validation, "patch")
        self.check_subresource(rt, subresource)
        if patch_type == "apply":
            return self._apply(rt, namespace, name, body, subresource, manager, force)
        old = self.get(rt, namespace, name)
        if patch_type == "merge":
            if not isinstance(body, dict):
                raise bad_request("a merge patch must be a JSON object")
            patched = merge_patch(old, body)
        elif patch_type == "json":
            patched = json_patch(old, body)
        elif patch_type == "strategic":
            if rt.custom:
                raise ApiError(415, "UnsupportedMediaType", "strategic merge patch is not supported for custom "
                               f"resources ({rt.describe()}); use a merge or JSON patch")
            if not isinstance(body, dict):
                raise bad_request("a strategic merge patch must be a JSON object")
            patched = strategic_merge(old, body, (), rt.kind)
        else:
            raise ApiError(415, "UnsupportedMediaType", f"unsupported patch type {patch_type!r}")
        if not isinstance(patched, dict):
            raise bad_request(f"the patch of {rt.describe()} {name!r} does not produce an object")
        check_body(rt, patched, name, namespace)
        meta = patched.get("metadata") or {}
        if str(meta.get("resourceVersion", old["metadata"]["resourceVersion"])) != old["metadata"]["resourceVersion"]:
            raise self._stale(rt, name)
        return self._finish_update(rt, old, patched, subresource, manager, how=how, operation="patch")

    def _apply(self, rt: ResourceType, namespace: str | None, name: str, body: Any, subresource: str | None,
               manager: str | None, force: bool) -> JSON:
        if not manager:
            raise invalid_error("PatchOptions", "meta.k8s.io", "", [required("fieldManager",
                                                                             "is required for apply requests")])
        check_body(rt, body, name, namespace)
        check_apply_body(rt, body, namespace, name)
        if "apiVersion" not in body or "kind" not in body:
            raise bad_request("an apply request needs apiVersion and kind in the body")
        try:
            old: JSON | None = self.get(rt, namespace, name)
        except NotFound:
            old = None
        applied = {k: json_copy(v) for k, v in body.items() if k != "status" or subresource == "status"}
        stamp = self.stamp()
        merged = ownership.apply(old, applied, manager, force, rt.kind, stamp, rt.api_version)
        if old is None:
            meta = merged.setdefault("metadata", {})
            meta["name"] = name
            if rt.namespaced:
                meta["namespace"] = namespace or "default"
            managed = meta.pop("managedFields", None)
            obj = {**merged, "apiVersion": rt.api_version, "kind": rt.kind}
            return self.create(rt, namespace, obj, managed_fields=managed)
        if "metadata" in merged and "resourceVersion" in merged["metadata"]:
            del merged["metadata"]["resourceVersion"]
        return self._finish_update(rt, old, merged, subresource, manager, applied=True)

    # -- deletion -----------------------------------------------------------------------------------------

    def delete(self, rt: ResourceType, namespace: str | None, name: str,
               preconditions: dict[str, Any] | None = None, propagation: str | None = None) -> tuple[JSON, bool]:
        """Deletes, honouring finalizers and ``propagation``: ``Background`` (the default) removes the object,
        then its dependents (``ownerReferences``); ``Foreground`` keeps it (``foregroundDeletion`` finalizer)
        until its dependents are gone; ``Orphan`` detaches the dependents first. Returns the object as the
        request left it and whether it is gone already."""
        if propagation not in (None, "", "Foreground", "Background", "Orphan"):
            raise invalid_error("DeleteOptions", "meta.k8s.io", "", [not_supported(
                "propagationPolicy", propagation, ["Foreground", "Background", "Orphan"])])
        old = self.get(rt, namespace, name)
        meta = old["metadata"]
        for field, actual in (("uid", meta.get("uid")), ("resourceVersion", meta.get("resourceVersion"))):
            wanted = (preconditions or {}).get(field)
            if wanted not in (None, "") and str(wanted) != actual:
                raise Conflict(f'Operation cannot be fulfilled on {rt.describe()} "{name}": Precondition failed: '
                               f"{field} in precondition: {wanted}, {field} in object meta: {actual}",
                               {"name": name, "group": rt.group, "kind": rt.plural})
        ts = self._store(rt)
        key = self._key(rt, namespace, name)
        gc_finalizer = _GC_FINALIZERS.get(propagation or "")
        if gc_finalizer is not None and rt.storage_key != NAMESPACES_KEY:
            return self._delete_through_gc(rt, ts, key, old, gc_finalizer)
        if meta.get("finalizers") or rt.storage_key == NAMESPACES_KEY:
            if meta.get("deletionTimestamp"):
                return old, False
            new = dict(old)
            new["metadata"] = {**meta, "deletionTimestamp": self.stamp(), "deletionGracePeriodSeconds": 0}
            if meta.get("generation"):
                new["metadata"]["generation"] = int(meta["generation"]) + 1
            if rt.storage_key == NAMESPACES_KEY:
                new["status"] = {**(old.get("status") or {}), "phase": "Terminating"}
                if not meta.get("finalizers"):
                    self._bump(new)
                    self._commit(rt, ts, key, "MODIFIED", new, old)
                    final = self._drain_namespace(name)
                    return (final, True) if final is not None else (ts.objects[key], False)
            self._bump(new)
            self._commit(rt, ts, key, "MODIFIED", new, old)
            return new, False
        final = dict(old)
        final["metadata"] = dict(meta)
        self._bump(final)
        self._commit(rt, ts, key, "DELETED", final, old)
        self._after_removal(rt, final, orphan=propagation == "Orphan")
        return final, True

    def _delete_through_gc(self, rt: ResourceType, ts: TypeStore, key: Key, old: JSON,
                           finalizer: str) -> tuple[JSON, bool]:
        """Foreground deletion waits (``foregroundDeletion`` finalizer) until the dependents are gone; orphan
        deletion (``orphan`` finalizer) first removes this owner from its dependents' ownerReferences. The
        garbage collector's work happens at once here; the answer is the object as the DELETE left it."""
        meta = old["metadata"]
        if meta.get("deletionTimestamp"):
            return old, False
        new = {**old, "metadata": {**meta, "deletionTimestamp": self.stamp(), "deletionGracePeriodSeconds": 0,
                                   "finalizers": [*(meta.get("finalizers") or []), finalizer]}}
        if meta.get("generation"):
            new["metadata"]["generation"] = int(meta["generation"]) + 1
        self._bump(new)
        self._commit(rt, ts, key, "MODIFIED", new, old)
        if self._dry:
            return new, False
        uid = str(meta.get("uid"))
        if finalizer == "orphan":
            self._orphan_dependents(uid)
        else:
            for storage_key, dependent in list(self._dependents.get(uid, {})):
                dependent_rt = self._type_of_storage(storage_key)
                if dependent_rt is not None and dependent in self._store(dependent_rt).objects:
                    with contextlib.suppress(NotFound):
                        self.delete(dependent_rt, dependent[0] or None, dependent[1])
        self._release(rt, key, finalizer)
        return new, key not in ts.objects

    def _type_of_storage(self, storage_key: Key) -> ResourceType | None:
        return next((r for r in self.types.all() if r.storage_key == storage_key), None)

    def _live_dependents(self, uid: str) -> bool:
        for storage_key, key in self._dependents.get(uid, {}):
            ts = self._stores.get(storage_key)
            if ts is not None and key in ts.objects:
                return True
        return False

    def _release(self, rt: ResourceType, key: Key, finalizer: str) -> None:
        """Removes the garbage collector's finalizer once its work is done (and the object with it, when it
        was the last finalizer)."""
        ts = self._store(rt)
        current = ts.objects.get(key)
        if current is None or finalizer not in (current["metadata"].get("finalizers") or []):
            return
        if finalizer == "foregroundDeletion" and self._live_dependents(str(current["metadata"].get("uid"))):
            return
        left = [f for f in current["metadata"]["finalizers"] if f != finalizer]
        new = {**current, "metadata": {**current["metadata"], "finalizers": left}}
        if not left:
            del new["metadata"]["finalizers"]
        self._bump(new)
        if left:
            self._commit(rt, ts, key, "MODIFIED", new, current)
        else:
            self._commit(rt, ts, key, "DELETED", new, current)
            self._after_removal(rt, new, orphan=finalizer == "orphan")

    def _orphan_dependents(self, uid: str) -> None:
        for storage_key, key in list(self._dependents.get(uid, {})):
            dependent_rt = self._type_of_storage(storage_key)
            ts = self._stores.get(storage_key)
            obj = ts.objects.get(key) if ts is not None else None
            if dependent_rt is None or ts is None or obj is None:
                continue
            refs = [r for r in obj["metadata"].get("ownerReferences") or [] if str(r.get("uid")) != uid]
            new = {**obj, "metadata": {**obj["metadata"], "ownerReferences": refs}}
            if not refs:
                del new["metadata"]["ownerReferences"]
            self._bump(new)
            self._commit(dependent_rt, ts, key, "MODIFIED", new, obj)
        self._dependents.pop(uid, None)

    def _after_removal(self, rt: ResourceType, obj: JSON, orphan: bool = False) -> None:
        if self._dry:
            return
        # An owner deleted in the foreground goes once its last dependent has gone.
        for ref in obj["metadata"].get("ownerReferences") or []:
            where = self._by_uid.get(str(ref.get("uid")))
            owner_rt = self._type_of_storage(where[0]) if where is not None else None
            if where is not None and owner_rt is not None:
                self._release(owner_rt, where[1], "foregroundDeletion")
        if orphan:
            self._dependents.pop(str(obj["metadata"].get("uid")), None)
        elif str(obj["metadata"].get("uid")) in self._dependents:
            self._collect_dependents(obj)
        if rt.storage_key == CRD_KEY:
            self._drop_crd_objects(obj)
        namespace = obj["metadata"].get("namespace")
        if rt.namespaced and namespace:
            ns = self._store(self.types.resolve("v1", "namespaces")).objects.get(("", namespace))
            if ns is not None and ns["metadata"].get("deletionTimestamp") and namespace not in self._draining:
                self._finish_namespace(namespace)

    def _drop_crd_objects(self, crd: JSON) -> None:
        name = crd["metadata"]["name"]
        keys = self.types.storage_keys_of_crd(name)
        removed = self.types.unregister_crd(name)
        for storage_key in keys:
            ts = self._stores.get(storage_key)
            if ts is None:
                continue
            rt = next(r for r in removed if r.storage_key == storage_key)
            for key in list(ts.ordered()):
                old = ts.objects[key]
                final = {**old, "metadata": dict(old["metadata"])}
                self._bump(final)
                self._commit(rt, ts, key, "DELETED", final, old)
            for watcher in list(ts.watchers):
                watcher.close()
            del self._stores[storage_key]

    def _drain_namespace(self, namespace: str) -> JSON | None:
        """Namespace deletion cascades to everything in it; the namespace goes once they are gone.
        Returns the namespace's final object when it is gone."""
        self._draining.add(namespace)
        try:
            for rt in self._namespaced_types():
                ts = self._stores.get(rt.storage_key)
                if ts is None:
                    continue
                for key in [k for k in ts.ordered() if k[0] == namespace]:
                    if key in ts.objects:
                        self.delete(rt, namespace, key[1])
        finally:
            self._draining.discard(namespace)
        return self._finish_namespace(namespace)

    def _namespaced_types(self) -> builtins.list[ResourceType]:
        seen: dict[Key, ResourceType] = {}
        for rt in self.types.all():
            if rt.namespaced:
                seen.setdefault(rt.storage_key, rt)
        return list(seen.values())

    def _finish_namespace(self, namespace: str) -> JSON | None:
        ns_rt = self.types.resolve("v1", "namespaces")
        ns_store = self._store(ns_rt)
        ns = ns_store.objects.get(("", namespace))
        if ns is None:
            return None
        for rt in self._namespaced_types():
            ts = self._stores.get(rt.storage_key)
            if ts is not None and any(k[0] == namespace for k in ts.objects):
                return None
        final = {**ns, "metadata": dict(ns["metadata"])}
        self._bump(final)
        self._commit(ns_rt, ns_store, ("", namespace), "DELETED", final, ns)
        return final

    # -- admin --------------------------------------------------------------------------------------------

    def compact(self, resource_version: int | None = None) -> int:
        """Forgets the history up to ``resource_version`` (default: all of it): watches and continue
        tokens from older versions now get 410. Returns the compacted version."""
        target = self._rv if resource_version is None else min(int(resource_version), self._rv)
        self._compacted = max(self._compacted, target)
        for ts in self._stores.values():
            while ts.history and ts.history[0][0] <= target:
                ts.history.popleft()
            ts.floor = max(ts.floor, target)
        return self._compacted

    def drop_watches(self) -> int:
        """Cuts every open watch stream, as a lost connection would."""
        watchers = [w for ts in self._stores.values() for w in ts.watchers]
        for watcher in watchers:
            watcher.close(dropped=True)
        return len(watchers)

    def outage(self, seconds: float) -> None:
        """Answer 503 to every request for ``seconds`` of loop time, and cut the open watch streams:
        an apiserver that is down (or restarting) does not keep serving the watches it had open, so
        clients must re-watch (and meet the 503s) like every other caller."""
        self.faults.outage(seconds)
        self.drop_watches()

    def refuse_connections(self, seconds: float) -> None:
        """The server is down for ``seconds``: open watch streams are cut and new calls fail with a
        "connection refused" 503 (over HTTP, ``KubeHTTPServer.refuse`` also stops listening)."""
        self.faults.refuse(seconds)
        self.drop_watches()

    def throttle(self, seconds: float, retry_after: float = 1.0) -> None:
        """Answer 429 with ``Retry-After`` for ``seconds``."""
        self.faults.throttle(seconds, retry_after)

    def add_latency(self, seconds: float, duration: float | None = None) -> None:
        self.faults.add_latency(seconds, duration)

    def unauthorized(self, seconds: float) -> None:
        """Answer 401 for ``seconds``."""
        self.faults.unauthorized(seconds)

    def inject_conflicts(self, resource: str, count: int) -> None:
        """The next ``count`` writes of ``resource`` (plural or ``plural.group``) answer 409."""
        self.faults.inject_conflicts(resource, count)

    def clear_faults(self) -> None:
        self.faults.clear()

    def type_of(self, api_version: str, kind: str) -> ResourceType:
        """The served type of a kind (what manifests name), or 404."""
        rt = self.types.by_kind(api_version, kind)
        if rt is None:
            raise NotFound(f"no resource type serves {kind} in {api_version}", {"kind": kind})
        return rt

    def apply_object(self, obj: JSON, field_manager: str = "haptic-sim", force: bool = True) -> JSON:
        """Creates or updates a manifest by server-side apply (what a scenario's ``apply`` step means);
        ``status`` in the manifest is applied through the status subresource too."""
        rt = self.type_of(str(obj.get("apiVersion", "")), str(obj.get("kind", "")))
        meta = obj.get("metadata") or {}
        namespace = meta.get("namespace") if rt.namespaced else None
        result = self.patch(rt, namespace, str(meta.get("name", "")), "apply", obj, None, field_manager, force)
        if rt.has_status and "status" in obj:
            result = self.patch(rt, namespace, result["metadata"]["name"], "merge", {"status": obj["status"]},
                                "status", field_manager)
        return result

    def delete_object(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> JSON | None:
        """Deletes by kind; returns the object while finalizers keep it, None once it is gone."""
        rt = self.type_of(api_version, kind)
        obj, gone = self.delete(rt, namespace if rt.namespaced else None, name)
        return None if gone else obj

    def watcher_count(self) -> int:
        return sum(len(ts.watchers) for ts in self._stores.values())

    def objects(self, rt: ResourceType) -> builtins.list[JSON]:
        ts = self._store(rt)
        return [ts.objects[k] for k in ts.ordered()]
