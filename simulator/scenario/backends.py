"""The scenario backends by name: ``sim`` (in-process, virtual time), ``local`` and ``kind``."""

from __future__ import annotations

from .backend import BackendFactory, UnavailableFactory

BACKENDS: tuple[str, ...] = ("sim", "local", "kind")

_NOT_BUILT: dict[str, str] = {}


def kind_unavailable_reason() -> str:
    """Why ``kind`` cannot run here: what is missing on this machine, then that the backend is not built."""
    import shutil

    missing = [what for what, binary in (("the kind binary", "kind"), ("a Docker engine (docker CLI)", "docker"))
               if shutil.which(binary) is None]
    found = f"missing on this machine: {', '.join(missing)}; " if missing else ""
    return (f"the 'kind' backend (a Kind cluster with real HAProxy and dataplaneapi, manifests in deploy/) is not "
            f"available: {found}its runner is not part of this build; run scenarios with --backend sim or local")


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
    if name == "kind":
        return UnavailableFactory("kind", kind_unavailable_reason())
    if name in _NOT_BUILT:
        return UnavailableFactory(name, _NOT_BUILT[name])
    raise ValueError(f"unknown backend {name!r} (known: {', '.join(BACKENDS)})")
