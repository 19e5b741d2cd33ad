"""The scenario backends by name: ``sim`` (in-process, virtual time), ``local``, ``cluster`` (alias ``kind``)."""

from __future__ import annotations

from .backend import BackendFactory, UnavailableFactory

BACKENDS: tuple[str, ...] = ("sim", "local", "cluster", "kind")

_NOT_BUILT: dict[str, str] = {}


def get_factory(name: str) -> BackendFactory:
    """The factory of backend ``name``; an unavailable one explains itself through ``unavailable_reason``."""
    if name == "sim":
        try:
            from .sim_backend import SimFactory
        except ImportError as exc:  # the Harness is a separate part of the build
            reason = f"the 'sim' backend needs simulator.harness, which failed to import: {exc}"
            return UnavailableFactory("sim", reason)
        return SimFactory()
    if name == "local":
        from .local_backend import LocalFactory

        return LocalFactory()
    if name in ("cluster", "kind"):
        from .cluster_backend import ClusterFactory

        return ClusterFactory(name=name)
    if name in _NOT_BUILT:
        return UnavailableFactory(name, _NOT_BUILT[name])
    raise ValueError(f"unknown backend {name!r} (known: {', '.join(BACKENDS)})")
