"""``CrdWatcher`` (all replicas): reinitializes when a CRD backing a watched resource appears, changes
or disappears.

A watched resource of a group no Kubernetes release serves itself (``gateway.networking.k8s.io``,
``example.com``) is backed by a CustomResourceDefinition. Before the watchers start, ``probe`` lists
the CRDs: a resource whose CRD is missing, or does not serve the watched version, is *absent* — its
watcher syncs an empty store at once (with a warning) instead of holding the initial sync of every
other resource. Afterwards the CRDs are watched: when one of them is created, deleted, or its spec
changes (``metadata.generation``: served versions, schema), a ``crd.changed`` asks for a
reinitialization, so the new iteration watches what is now served.

Without permission to list CRDs (RBAC) the watch is off, said once; the watchers then retry a missing
resource as before. Needs ``list``/``watch`` on ``apiextensions.k8s.io/customresourcedefinitions``
(``haptic preflight`` lists it when the config needs it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from haptic.config.models import HAProxyTemplateConfigSpec
from haptic.controller.component import IterationComponent
from haptic.controller.context import IterationContext
from haptic.controller.events import CrdChanged
from haptic.core import EventBus
from haptic.k8s.api import JSON, ApiError, ResourceRef, Selectors
from haptic.k8s.builtin_groups import is_builtin_group
from haptic.k8s.watch_loop import WatchState, list_all, list_and_watch

CRDS = ResourceRef("apiextensions.k8s.io/v1", "customresourcedefinitions", False, "CustomResourceDefinition")


@dataclass(frozen=True)
class CrdState:
    """What matters of one CRD: which versions it serves, and its spec generation (0: absent)."""

    served: frozenset[str] = frozenset()
    generation: int = 0

    @classmethod
    def of(cls, crd: JSON) -> CrdState:
        spec = crd.get("spec") or {}
        versions = spec.get("versions") or []
        served = frozenset(str(v.get("name")) for v in versions if isinstance(v, Mapping) and v.get("served"))
        generation = (crd.get("metadata") or {}).get("generation")
        return cls(served, generation if isinstance(generation, int) else 1)

    def describe(self) -> str:
        return f"serving {', '.join(sorted(self.served)) or 'nothing'}" if self.generation else "absent"


def crd_backed(spec: HAProxyTemplateConfigSpec) -> dict[str, dict[str, str]]:
    """CRD name (``plural.group``) -> {watched resource key: the version it watches}."""
    found: dict[str, dict[str, str]] = {}
    for key, watched in sorted(spec.watched_resources.items()):
        group, _, version = watched.api_version.rpartition("/")
        if is_builtin_group(group):
            continue
        found.setdefault(f"{watched.resources}.{group}", {})[key] = version
    return found


class CrdWatcher(IterationComponent):
    name = "crd-watcher"

    def __init__(self, bus: EventBus, ctx: IterationContext) -> None:
        super().__init__(bus, ctx)
        self.wanted = crd_backed(ctx.spec)
        self.state: dict[str, CrdState] | None = None
        self.watch_state = WatchState()
        self.changes = 0

    async def probe(self) -> dict[str, str]:
        """Lists the CRDs once: watched resource key -> why it is absent (not served)."""
        if not self.wanted:
            return {}
        try:
            items, _ = await list_all(self.ctx.ports.kube, CRDS, None, Selectors())
        except ApiError as exc:
            self.logger.warning("cannot list CustomResourceDefinitions (%s): a CRD installed or removed later "
                                "needs a restart", exc)
            return {}
        self.state = self._states(items)
        absent: dict[str, str] = {}
        for crd, keys in self.wanted.items():
            state = self.state[crd]
            for key, version in keys.items():
                if version not in state.served:
                    absent[key] = (f"CustomResourceDefinition {crd} is not installed" if not state.generation
                                   else f"CustomResourceDefinition {crd} does not serve {version}")
        return absent

    def _states(self, items: list[JSON]) -> dict[str, CrdState]:
        by_name = {str((item.get("metadata") or {}).get("name")): item for item in items}
        return {crd: CrdState.of(by_name[crd]) if crd in by_name else CrdState() for crd in self.wanted}

    async def on_start(self) -> None:
        if self.state is not None:
            self.spawn(list_and_watch(self.ctx.ports.kube, CRDS, None, Selectors(), self.clock, self.logger,
                                      self._on_list, self._on_event, self.watch_state), "watch")

    def _on_list(self, items: list[JSON]) -> None:
        for crd, state in self._states(items).items():
            self._compare(crd, state)

    def _on_event(self, kind: str, obj: JSON) -> None:
        crd = str((obj.get("metadata") or {}).get("name"))
        if crd in self.wanted:
            self._compare(crd, CrdState() if kind == "DELETED" else CrdState.of(obj))

    def _compare(self, crd: str, new: CrdState) -> None:
        assert self.state is not None
        old = self.state[crd]
        if new == old:
            return
        self.state[crd] = new
        change = "installed" if not old.generation else "removed" if not new.generation else "changed"
        self.changes += 1
        self.logger.info("CustomResourceDefinition %s %s (%s, was %s): reinitializing", crd, change,
                         new.describe(), old.describe())
        self.publish(CrdChanged(crd=crd, change=change, served=tuple(sorted(new.served)),
                                resources=tuple(self.wanted[crd])))
