"""The scenario backends by name: ``sim`` (in-process, virtual time), ``local`` and ``kind``."""

from __future__ import annotations

from .backend import BackendFactory, UnavailableFactory

BACKENDS: tuple[str, ...] = ("sim", "local", "kind")

_NOT_BUILT = {
    "kind": "the 'kind' backend (a Kind cluster with real HAProxy and dataplaneapi) is not available in this build; "
            "run scenarios with --backend sim",
}


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
    if name in _NOT_BUILT:
        return UnavailableFactory(name, _NOT_BUILT[name])
    raise ValueError(f"unknown backend {name!r} (known: {', '.join(BACKENDS)})")
