"""``NamespaceSelection`` (all replicas): ``watchedResources.*.namespaceSelector`` — watch objects only in
the namespaces whose labels match.

Before the watchers start, ``probe`` lists the Namespaces and fixes, per watched resource with a
selector, the namespaces it takes objects from for this iteration (a watcher skips objects of the
others; cluster-scoped objects are not filtered). The Namespaces are then watched: when the set a
selector picks changes (a namespace labelled, unlabelled, created or deleted), a
``namespace.selection.changed`` asks for a reinitialization, whose watchers list with the new set.
Needs list/watch of ``namespaces`` (``haptic preflight`` asks for it when a selector is set).
"""

from __future__ import annotations

from collections.abc import Mapping

from haptic.controller.component import IterationComponent
from haptic.controller.context import IterationContext
from haptic.controller.events import NamespaceSelectionChanged
from haptic.core import EventBus
from haptic.k8s.api import JSON, ResourceRef, Selectors
from haptic.k8s.selectors import LabelSelector, parse_label_selector
from haptic.k8s.watch_loop import WatchState, list_all, list_and_watch

NAMESPACES = ResourceRef("v1", "namespaces", False, "Namespace")


class NamespaceSelection(IterationComponent):
    name = "namespace-selection"

    def __init__(self, bus: EventBus, ctx: IterationContext) -> None:
        super().__init__(bus, ctx)
        self.selectors: dict[str, LabelSelector] = {
            key: parse_label_selector(w.namespace_selector)
            for key, w in sorted(ctx.spec.watched_resources.items()) if w.namespace_selector
        }
        #: resource key -> the namespaces it takes objects from in this iteration (set by ``probe``)
        self.allowed: dict[str, frozenset[str]] = {}
        self._labels: dict[str, Mapping[str, str]] = {}
        self.watch_state = WatchState()
        self._reported = False

    async def probe(self) -> dict[str, frozenset[str]]:
        """Lists the Namespaces once (an API error fails the iteration, which is retried)."""
        if not self.selectors:
            return {}
        items, _ = await list_all(self.ctx.ports.kube, NAMESPACES, None, Selectors())
        self._labels = {_name(ns): _labels(ns) for ns in items}
        self.allowed = self._selection()
        for key, namespaces in self.allowed.items():
            self.logger.info("watching %s in %d namespace(s) matching %s", key, len(namespaces),
                             self.ctx.spec.watched_resources[key].namespace_selector)
        return dict(self.allowed)

    def _selection(self) -> dict[str, frozenset[str]]:
        return {key: frozenset(ns for ns, labels in self._labels.items() if selector.matches(labels))
                for key, selector in self.selectors.items()}

    async def on_start(self) -> None:
        if self.selectors:
            self.spawn(list_and_watch(self.ctx.ports.kube, NAMESPACES, None, Selectors(), self.clock, self.logger,
                                      self._on_list, self._on_event, self.watch_state), "watch")

    def _on_list(self, items: list[JSON]) -> None:
        self._labels = {_name(ns): _labels(ns) for ns in items}
        self._compare()

    def _on_event(self, kind: str, obj: JSON) -> None:
        if kind == "DELETED":
            self._labels.pop(_name(obj), None)
        else:
            self._labels[_name(obj)] = _labels(obj)
        self._compare()

    def _compare(self) -> None:
        now = self._selection()
        changed = sorted(key for key in self.selectors if now[key] != self.allowed.get(key))
        if not changed or self._reported:
            return
        self._reported = True  # one reinitialization takes every later change along
        added = sorted({ns for key in changed for ns in now[key] - self.allowed.get(key, frozenset())})
        removed = sorted({ns for key in changed for ns in self.allowed.get(key, frozenset()) - now[key]})
        self.logger.info("namespaces selected for %s changed (added %s, removed %s): reinitializing",
                         ", ".join(changed), ", ".join(added) or "none", ", ".join(removed) or "none")
        self.publish(NamespaceSelectionChanged(resources=tuple(changed), added=tuple(added), removed=tuple(removed)))


def _name(obj: JSON) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


def _labels(obj: JSON) -> Mapping[str, str]:
    labels = (obj.get("metadata") or {}).get("labels") or {}
    return dict(labels) if isinstance(labels, Mapping) else {}
