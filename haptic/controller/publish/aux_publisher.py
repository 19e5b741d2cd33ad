"""Publishes a validated render's maps, general files and crt-lists as resources owned by its HAProxyCfg.

One resource per file (``haptic.config.aux_resources``): created when the file appears, patched when
its content changes, deleted when the render no longer has it. What was written is remembered, so a
publication that changes one map writes one resource; the first publication of a leadership lists what
an earlier leader left.
"""

from __future__ import annotations

import contextlib
import logging
import posixpath
from collections.abc import Mapping

from haptic.config.aux_resources import (
    AUX_KINDS,
    CRT_LIST_FILES,
    GENERAL_FILES,
    MAP_FILES,
    RUNTIME_CONFIG_LABEL,
    AuxKind,
    aux_resource_name,
    content_checksum,
)
from haptic.controller.publish.content import encode_content
from haptic.dataplane.aux_files import AuxFiles
from haptic.k8s.api import JSON, ApiError, KubeAPI, NotFound, ResourceRef, Selectors
from haptic.k8s.watch_loop import list_all
from haptic.names import GROUP_VERSION
from haptic.templating.context import StorageDirs


def aux_ref(kind: AuxKind) -> ResourceRef:
    """The API resource of one kind of published auxiliary file."""
    return ResourceRef(GROUP_VERSION, kind.plural, True, kind.kind)


class AuxFilePublisher:
    """Keeps the aux-file resources of one HAProxyCfg equal to the last published render."""

    def __init__(self, kube: KubeAPI, namespace: str, runtime_config: str, logger: logging.Logger) -> None:
        self.kube = kube
        self.namespace = namespace
        self.runtime_config = runtime_config
        self.logger = logger
        #: (plural, name) -> checksum of what the API holds; None until listed in this leadership
        self._known: dict[tuple[str, str], str] | None = None

    def forget(self) -> None:
        self._known = None

    async def publish(self, aux: AuxFiles, dirs: StorageDirs, threshold: int,
                      owner: Mapping[str, str] | None) -> dict[str, list[JSON]]:
        """Writes what changed; answers the ``auxiliaryFiles`` references of the HAProxyCfg status."""
        if self._known is None:
            self._known = await self._list_existing()
        known = self._known
        desired = self._desired(aux, dirs)
        refs: dict[str, list[JSON]] = {kind.group: [] for kind in AUX_KINDS}
        for (kind, name), spec in sorted(desired.items(), key=lambda item: (item[0][0].plural, item[0][1])):
            refs[kind.group].append({"kind": kind.kind, "name": name, "namespace": self.namespace})
            if known.get((kind.plural, name)) == spec["checksum"]:
                continue
            # Compressed only when written: an unchanged file costs its checksum, not a zstd pass.
            stored, compressed = encode_content(str(spec[kind.content_field]), threshold)
            spec = {**spec, kind.content_field: stored, "compressed": compressed}
            await self._write(kind, name, spec, owner, exists=(kind.plural, name) in known)
            known[(kind.plural, name)] = str(spec["checksum"])
        wanted = {(kind.plural, name) for kind, name in desired}
        by_plural = {kind.plural: kind for kind in AUX_KINDS}
        for plural, name in sorted(set(known) - wanted):
            with contextlib.suppress(NotFound):
                await self.kube.delete(aux_ref(by_plural[plural]), name, self.namespace)
            del known[(plural, name)]
        return refs

    def _desired(self, aux: AuxFiles, dirs: StorageDirs) -> dict[tuple[AuxKind, str], JSON]:
        desired: dict[tuple[AuxKind, str], JSON] = {}
        for kind, files, directory in ((MAP_FILES, aux.maps, dirs.maps_dir),
                                       (GENERAL_FILES, aux.files, dirs.general_storage_dir),
                                       (CRT_LIST_FILES, aux.crt_lists, dirs.general_storage_dir)):
            for filename, content in files.items():
                desired[(kind, aux_resource_name(kind, filename))] = {
                    kind.name_field: filename, "path": posixpath.join(directory, filename),
                    kind.content_field: content, "checksum": content_checksum(content),
                }
        return desired

    async def _list_existing(self) -> dict[tuple[str, str], str]:
        found: dict[tuple[str, str], str] = {}
        selector = Selectors(label_selector=f"{RUNTIME_CONFIG_LABEL}={self.runtime_config}")
        for kind in AUX_KINDS:
            items, _ = await list_all(self.kube, aux_ref(kind), self.namespace, selector)
            for item in items:
                name = str((item.get("metadata") or {}).get("name") or "")
                found[(kind.plural, name)] = str((item.get("spec") or {}).get("checksum") or "")
        return found

    async def _write(self, kind: AuxKind, name: str, spec: JSON, owner: Mapping[str, str] | None, *,
                     exists: bool) -> None:
        if exists:
            try:
                await self.kube.patch(aux_ref(kind), name, {"spec": spec}, "merge", namespace=self.namespace)
                return
            except NotFound:
                pass  # deleted behind our back: create it again
        meta: JSON = {"name": name, "namespace": self.namespace, "labels": {RUNTIME_CONFIG_LABEL: self.runtime_config}}
        if owner is not None:
            meta["ownerReferences"] = [{**owner, "controller": True, "blockOwnerDeletion": True}]
        body = {"apiVersion": GROUP_VERSION, "kind": kind.kind, "metadata": meta, "spec": spec}
        try:
            await self.kube.create(aux_ref(kind), body, namespace=self.namespace)
        except ApiError as exc:
            if exc.code != 409:
                raise
            await self.kube.patch(aux_ref(kind), name, {"spec": spec}, "merge", namespace=self.namespace)
