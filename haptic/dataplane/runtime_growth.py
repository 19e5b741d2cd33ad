"""Which planned changes the running haproxy takes without a reload: runtime-only server updates, and new
servers in existing backends (server slots growing) that ``add server`` creates exactly as their config
lines would load (see ``synchronizer``). Imports only other ``haptic.dataplane`` modules and the core."""

from __future__ import annotations

from typing import Any

from haptic.core.control_characters import has_control_characters
from haptic.dataplane.operations import Operation, SyncPlan
from haptic.dataplane.parser import HAProxyConfig, Section
from haptic.dataplane.server_model import NON_API_FIELDS, RUNTIME_ADD_FIELDS

__all__ = ["is_runtime_growth", "needs_reload", "runtime_update", "sendable"]


def sendable(payload: dict[str, Any] | None) -> bool:
    """A server model the API can take as is, whose values cannot break a runtime command."""
    return (
        payload is not None
        and not NON_API_FIELDS & payload.keys()
        and not any(isinstance(v, str) and has_control_characters(v) for v in payload.values())
    )


def runtime_update(op: Operation) -> bool:
    return op.action == "update" and op.child_type == "server" and op.runtime and sendable(op.payload)


#: ``balance`` algorithms haproxy adds servers to at runtime (a hash needs ``hash-type consistent``)
_DYNAMIC_BALANCE = frozenset({"roundrobin", "leastconn", "first", "random"})


def _takes_dynamic_servers(config: HAProxyConfig, backend: str) -> bool:
    """Whether haproxy's ``add server`` gives ``backend`` a server exactly as its config line would:
    no ``default-server`` anywhere it could inherit from (dynamic servers ignore it), and a dynamic
    load-balancing algorithm (haproxy refuses the others)."""
    section = config.backends.get(backend)
    if section is None:
        return False
    if any(d.keyword == "default-server" for scope in [*config.defaults, section] for d in scope.directives):
        return False
    # Whichever defaults section the backend takes its settings from, the algorithm must be dynamic.
    return all(_dynamic(_setting(section, scope, "balance", "roundrobin"),
                        _setting(section, scope, "hash-type", "map-based"))
               for scope in ([*config.defaults] if config.defaults else [None]))


def _setting(section: Section, defaults: Section | None, keyword: str, default: str) -> str:
    for scope in (section, defaults):
        found = [d.args[0] for d in scope.directives if d.keyword == keyword and d.args] if scope else []
        if found:
            return found[-1]
    return default


def _dynamic(algorithm: str, hash_type: str) -> bool:
    return algorithm in _DYNAMIC_BALANCE or (algorithm != "static-rr" and hash_type == "consistent")


def _runtime_addable(op: Operation, desired: HAProxyConfig) -> bool:
    return (op.action == "create" and op.child_type == "server" and op.section_type == "backend"
            and op.section_name is not None and op.child_name is not None and sendable(op.payload)
            and op.payload is not None and op.payload.keys() <= RUNTIME_ADD_FIELDS
            and _takes_dynamic_servers(desired, op.section_name))


def is_runtime_growth(plan: SyncPlan, desired: HAProxyConfig) -> bool:
    """Servers added to existing backends (server slots growing), perhaps with runtime-only updates: each
    new server goes to the running haproxy through ``add server`` and the file follows without a reload."""
    creates = [op for op in plan.operations if op.action == "create"]
    return bool(creates) and all(_runtime_addable(op, desired) for op in creates) and all(
        runtime_update(op) for op in plan.operations if op.action != "create")


def needs_reload(plan: SyncPlan, desired: HAProxyConfig) -> bool:
    """Whether deploying ``plan`` reloads haproxy (the synchronizer's choice of path, predicted)."""
    return plan.reload_required and not is_runtime_growth(plan, desired)
