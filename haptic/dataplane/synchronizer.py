"""Synchronizing one HAProxy instance to a desired configuration through its Dataplane API.

Per instance: read the current config (cached by version; a runtime-only change to a cached config is
written with the cached version without asking for it first, and a 409 sends it down the full path),
plan, then apply the cheapest way (a freshly started API, version 1, gets one raw push whatever the plan, so
what it replaces is only counted for the summary) —
server replaces with ``version`` when every operation is a runtime-eligible server update (200:
no reload); runtime map entry edits when only map contents changed (no reload); otherwise one raw
push (one reload). Auxiliary files are created/updated before the config and deleted after it;
reloads are verified by polling their ``Reload-ID``. When a runtime operation fails (the API
answers an error: haproxy refused the command, its socket is gone, it does not know the map), the
sync falls back once — maps are uploaded, servers go in one raw push — instead of trying the same
operation again; ``SyncResult.fallbacks`` says why. Errors come back in the result, not raised.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from haptic.dataplane.api_errors import DataplaneError, DataplaneHTTPError, VersionConflictError
from haptic.dataplane.aux_files import AuxFiles
from haptic.dataplane.aux_sync import AuxChange, apply_map_edits, delete_aux, plan_aux, write_aux
from haptic.dataplane.client import DataplaneClient, Versioned, WriteOutcome
from haptic.dataplane.errors import ConfigParseError
from haptic.dataplane.operations import Operation, SyncPlan, operation_summary
from haptic.dataplane.parser import HAProxyConfig, parse_config, parse_config_reusing
from haptic.dataplane.planner import plan_parsed, replacement_summary
from haptic.dataplane.runtime_growth import is_runtime_growth, runtime_update, sendable

# noop: nothing to do; files: only auxiliary files changed (uploaded); runtime: server replaces;
# runtime_maps: map entries through the runtime API; transaction: server creates/updates/deletes in one
# Dataplane transaction (one reload); raw: one raw push; failed: see errors.
SyncMode = Literal["noop", "files", "runtime", "runtime_maps", "transaction", "raw", "failed"]

_EMPTY_PLAN = SyncPlan(operations=(), reload_required=False)
#: ``dataplane.rawPushThreshold``'s default, as the original's ``SetDefaults``
DEFAULT_RAW_PUSH_THRESHOLD = 100


@dataclass(frozen=True)
class SyncOptions:
    verify_reload: bool = True
    reload_timeout: float = 10.0
    reload_poll_interval: float = 0.5
    runtime_maps: bool = True  # map-content-only changes through the runtime map API
    map_edit_limit: int = 100  # more entry edits than this: upload the file instead
    force_aux_compare: bool = False  # drift checks: compare files even when the checksum matches
    #: ``dataplane.rawPushThreshold``: a structural change of at most this many planned operations goes as
    #: fine-grained operations in one transaction when the planner can express them all (server creates,
    #: updates and deletes); more operations, or any other kind, is one raw push (as the original's rule)
    raw_push_threshold: int = DEFAULT_RAW_PUSH_THRESHOLD


@dataclass
class VersionCache:
    """The last configuration known to be on one instance, by version (skips ``GET raw`` + parse)."""

    version: int | None = None
    parsed: HAProxyConfig | None = field(default=None, repr=False)
    aux_checksum: str | None = None

    def get(self, version: int) -> HAProxyConfig | None:
        return self.parsed if self.version == version else None

    def store(self, version: int, parsed: HAProxyConfig, aux_checksum: str) -> None:
        self.version, self.parsed, self.aux_checksum = version, parsed, aux_checksum

    def invalidate(self) -> None:
        self.version, self.parsed, self.aux_checksum = None, None, None


@dataclass
class SharedPlans:
    """What one deployment computes once for all its pods: the current configs read (parsed once per
    distinct text) and the plans (once per pair of parsed configs). Pods on the same version hold the same
    parsed config in their ``VersionCache``, so a fleet on one version costs one plan, not one per pod."""

    computed: int = 0  # plans computed (the rest were shared)
    _parsed: dict[str, HAProxyConfig] = field(default_factory=dict, repr=False)
    _plans: dict[tuple[int, int], tuple[HAProxyConfig, HAProxyConfig, SyncPlan]] = field(default_factory=dict,
                                                                                          repr=False)

    @property
    def texts_parsed(self) -> int:
        """Distinct current configurations read and parsed (once each)."""
        return len(self._parsed)

    def parse_current(self, text: str, desired: HAProxyConfig) -> HAProxyConfig:
        parsed = self._parsed.get(text)
        if parsed is None:
            parsed = self._parsed[text] = parse_config_reusing(text, desired)
        return parsed

    def plan(self, current: HAProxyConfig, desired: HAProxyConfig) -> SyncPlan:
        # Keyed by identity; the entry keeps both configs alive, so an id is never reused while it is stored.
        known = self._plans.get((id(current), id(desired)))
        if known is not None:
            return known[2]
        plan = plan_parsed(current, desired)
        self.computed += 1
        self._plans[(id(current), id(desired))] = (current, desired, plan)
        return plan


@dataclass(frozen=True)
class SyncResult:
    ok: bool
    mode: SyncMode
    operations: tuple[str, ...] = ()
    reload_triggered: bool = False
    reload_ids: tuple[str, ...] = ()
    runtime_updates: int = 0
    duration: float = 0.0
    plan_duration: float = 0.0  # the part of ``duration`` spent comparing configs
    retries: int = 0
    errors: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    version: int | None = None
    fallbacks: tuple[str, ...] = ()  # why a cheaper path was abandoned for uploads / a raw push
    #: ``operation_summary`` of the planned operations (the HAProxyCfg's ``lastOperationSummary``)
    summary: Mapping[str, int] = field(default_factory=dict)

    @property
    def fallback_used(self) -> bool:
        return bool(self.fallbacks)

    @property
    def reload_id(self) -> str | None:
        """The last reload this sync scheduled (the configuration's, when there was one)."""
        return self.reload_ids[-1] if self.reload_ids else None


def _fine_grained(plan: SyncPlan, threshold: int) -> bool:
    """Whether the plan goes as operations in one transaction rather than a raw push: at most ``threshold``
    operations, each a server create, update or delete the API can take as is."""
    return 0 < len(plan.operations) <= threshold and all(
        op.child_type == "server" and op.section_name is not None and op.child_name is not None
        and (op.action == "delete" or sendable(op.payload))
        for op in plan.operations
    )


def _is_runtime_only(plan: SyncPlan) -> bool:
    return bool(plan.operations) and all(runtime_update(op) for op in plan.operations)


@dataclass
class _Run:
    client: DataplaneClient
    options: SyncOptions
    started: float
    retries_before: int
    operations: list[str] = field(default_factory=list)
    reload_ids: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    runtime_updates: int = 0
    mode: SyncMode = "noop"
    plan_duration: float = 0.0
    fallbacks: list[str] = field(default_factory=list)
    summary: dict[str, int] = field(default_factory=dict)

    def reload(self, reload_id: str | None) -> None:
        if reload_id and reload_id not in self.reload_ids:
            self.reload_ids.append(reload_id)

    def result(self, *, version: int | None, errors: tuple[str, ...] = ()) -> SyncResult:
        stats = self.client.stats
        return SyncResult(
            ok=not errors,
            mode="failed" if errors else self.mode,
            operations=tuple(self.operations),
            reload_triggered=bool(self.reload_ids),
            reload_ids=tuple(self.reload_ids),
            runtime_updates=self.runtime_updates,
            duration=self.client.now() - self.started,
            plan_duration=self.plan_duration,
            retries=stats.connection_retries + stats.conflict_retries - self.retries_before,
            errors=errors,
            warnings=tuple(self.warnings),
            version=version,
            fallbacks=tuple(self.fallbacks),
            summary=dict(self.summary),
        )


async def sync(
    client: DataplaneClient,
    desired_config: str,
    aux: AuxFiles,
    *,
    cache: VersionCache | None = None,
    options: SyncOptions | None = None,
    parsed_desired: HAProxyConfig | None = None,
    shared: SharedPlans | None = None,
) -> SyncResult:
    """Brings one instance to ``desired_config`` plus ``aux``. ``parsed_desired`` skips re-parsing
    a config the caller already parsed (the same config goes to every instance); ``shared`` lets the
    instances of one deployment share current configs read and plans."""
    opts = options or SyncOptions()
    checksum = aux.checksum()
    run = _Run(client, opts, client.now(), client.stats.connection_retries + client.stats.conflict_retries)
    try:
        desired = parsed_desired if parsed_desired is not None else _parse_desired(desired_config, cache)
    except ConfigParseError as exc:
        # Refused before any write: the instance is left untouched.
        return run.result(version=None, errors=(f"desired configuration: {exc}",))
    version: int | None = None
    if cache is not None and not opts.force_aux_compare:
        quick = _Run(client, opts, run.started, run.retries_before)
        try:
            version = await _optimistic_runtime(quick, cache, desired, checksum, shared)
            if version is not None:
                await _verify(quick)
                cache.store(version, desired, checksum)
                return quick.result(version=version)
        except _RuntimeFailed as failed:
            # As on the full path: one attempt at a runtime operation, then the configuration in one push.
            run.fallbacks.append(f"runtime server update failed, pushing the configuration: {failed.error}")
        except DataplaneError as exc:
            cache.invalidate()
            return quick.result(version=None, errors=(str(exc),))
    try:
        version = await client.get_version()
        current = cache.get(version) if cache is not None else None
        if current is None:
            raw = await client.get_raw_config()
            version = raw.version
            try:
                current = (shared.parse_current(raw.text, desired) if shared is not None
                           else parse_config_reusing(raw.text, desired))
            except ConfigParseError as exc:
                # What is there cannot be planned against; a raw push replaces it whole.
                run.warnings.append(f"current configuration unparseable, pushing raw: {exc}")
                run.fallbacks.append(f"current configuration unparseable: {exc}")
        planning = client.now()
        if current is None:
            plan = None
        elif version == 1:
            # A freshly started API gets one raw push whatever the plan (see ``_apply``): what it replaces is
            # counted, not planned operation by operation (a first deployment's 33,000 operations).
            summary = replacement_summary(current, desired)
            plan = _EMPTY_PLAN if summary is None else None
            run.summary = summary or {}
        else:
            plan = shared.plan(current, desired) if shared is not None else plan_parsed(current, desired)
        run.plan_duration = client.now() - planning
        cached_aux = (
            cache is not None
            and not opts.force_aux_compare
            and cache.get(version) is not None
            and cache.aux_checksum == checksum
        )
        changes = [] if cached_aux else await plan_aux(
            client, aux, map_edit_limit=opts.map_edit_limit, runtime_maps=opts.runtime_maps
        )
        if opts.force_aux_compare and await client.haproxy_up() is False:
            # The API still answers, but its haproxy is gone: nothing this pod serves is current.
            raise DataplaneHTTPError("GET", "/health", 200, "haproxy is not running on this pod")
        version = await _apply(run, desired_config, version, plan, changes, desired)
        await _verify(run)
    except DataplaneError as exc:
        if cache is not None:
            cache.invalidate()
        return run.result(version=None, errors=(str(exc),))
    if cache is not None:
        cache.store(version, desired, checksum)
    return run.result(version=version)


def _parse_desired(text: str, cache: VersionCache | None) -> HAProxyConfig:
    # Sections whose text did not change since the cached config are shared, not parsed again.
    if cache is not None and cache.parsed is not None:
        return parse_config_reusing(text, cache.parsed)
    return parse_config(text)


async def _apply(run: _Run, desired_config: str, version: int, plan: SyncPlan | None, changes: list[AuxChange],
                 desired: HAProxyConfig) -> int:
    """Applies the plan and the file changes; returns the instance's version afterwards."""
    client = run.client
    if plan is not None and plan.is_empty and not changes:
        run.mode = "noop"
        return version
    # Map entry edits never need a reload, whatever else changes; other writes are uploads.
    by_runtime = [c for c in changes if c.map_edits is not None]
    uploads = [c for c in changes if c.action != "delete" and c not in by_runtime]
    deletes = [c for c in changes if c.action == "delete"]
    run.operations.extend(c.description for c in uploads)
    run.operations.extend(f"{c.description} (runtime, {len(c.map_edits or ())} entries)" for c in by_runtime)
    for reload_id in await write_aux(client, uploads):
        run.reload(reload_id)
    try:
        run.runtime_updates += await apply_map_edits(client, by_runtime)
    except DataplaneHTTPError as exc:
        # Some entries may have changed in haproxy's memory: the uploaded files and the reload
        # they schedule make memory and files agree again.
        run.fallbacks.append(f"runtime map update failed, uploading the map files: {exc}")
        run.operations.extend(f"{c.description} (upload after runtime failure)" for c in by_runtime)
        for reload_id in await write_aux(client, by_runtime):
            run.reload(reload_id)
    if plan is not None:
        run.operations.extend(op.description for op in plan.operations)
        run.summary = operation_summary(plan.operations)
    raw = plan is None or not plan.is_empty
    if plan is not None and plan.is_empty:
        run.mode = "files" if uploads or deletes or run.fallbacks else "runtime_maps"
    elif plan is not None and version != 1 and not run.fallbacks and _is_runtime_only(plan):
        run.mode = "runtime"
        try:
            version = await _runtime_servers(run, plan.operations, version)
            raw = False
        except DataplaneHTTPError as exc:
            run.fallbacks.append(f"runtime server update failed, pushing the configuration: {exc}")
            version = await client.get_version()
    elif plan is not None and version != 1 and not changes and not run.fallbacks and is_runtime_growth(plan, desired):
        run.mode = "runtime"
        try:
            version = await _runtime_growth(run, desired_config, plan.operations, version)
            raw = False
        except DataplaneHTTPError as exc:
            # Servers added so far run without being in the file: the push's reload forgets them.
            run.fallbacks.append(f"runtime server add failed, pushing the configuration: {exc}")
            version = await client.get_version()
    # (after a failed runtime update the servers go in one raw push, as documented above)
    if raw and plan is not None and version != 1 and not run.fallbacks \
            and _fine_grained(plan, run.options.raw_push_threshold):
        run.mode = "transaction"
        try:
            version = await _transaction_servers(run, plan.operations)
            raw = False
        except DataplaneHTTPError as exc:
            run.fallbacks.append(f"fine-grained server operations failed, pushing the configuration: {exc}")
            version = await client.get_version()
    if raw:
        # Version 1 is a freshly started API: always one raw push first.
        run.mode = "raw"
        if plan is None:
            run.operations.append("Replace configuration")
        pushed = await client.with_version(lambda v: client.post_raw_config(desired_config, v), version)
        run.reload(pushed.outcome.reload_id)
        version = pushed.version + 1
    run.operations.extend(c.description for c in deletes)
    run.warnings.extend(await delete_aux(client, deletes))
    return version


async def _transaction_servers(run: _Run, operations: tuple[Operation, ...]) -> int:
    """The plan's server operations in one transaction; returns the version after its commit."""
    client = run.client

    async def body(transaction_id: str) -> None:
        for op in operations:
            assert op.section_name is not None and op.child_name is not None
            if op.action == "delete":
                await client.delete_server(op.section_name, op.child_name, transaction_id=transaction_id)
            elif op.action == "create":
                assert op.payload is not None
                await client.create_server(op.section_name, op.payload, transaction_id=transaction_id)
            else:
                assert op.payload is not None
                await client.replace_server(op.section_name, op.child_name, op.payload,
                                            transaction_id=transaction_id)

    done = await client.run_transaction(body)
    run.reload(done.outcome.reload_id)
    return done.version + 1


class _RuntimeFailed(Exception):
    def __init__(self, error: DataplaneHTTPError) -> None:
        super().__init__(str(error))
        self.error = error


async def _optimistic_runtime(run: _Run, cache: VersionCache, desired: HAProxyConfig, checksum: str,
                              shared: SharedPlans | None) -> int | None:
    """A runtime-only server change planned against the cached config and written with the cached version,
    without asking for the version first (one round trip less on the path of every EndpointSlice change).
    None: not that kind of change, or the instance is not where the cache says (the first write's 409: another
    writer): the caller's full path re-reads version and config and plans again. A write the API refused
    otherwise raises ``_RuntimeFailed``: the full path then pushes the configuration instead."""
    if cache.parsed is None or cache.version is None or cache.version == 1 or cache.aux_checksum != checksum:
        return None
    plan = shared.plan(cache.parsed, desired) if shared is not None else plan_parsed(cache.parsed, desired)
    if not _is_runtime_only(plan):
        return None
    try:
        version = await _runtime_servers(run, plan.operations, cache.version, trust_version=True)
    except VersionConflictError:
        run.client.stats.conflict_retries += 1  # retried, by the full path
        return None
    except DataplaneHTTPError as exc:
        raise _RuntimeFailed(exc) from exc
    run.mode = "runtime"
    run.operations.extend(op.description for op in plan.operations)
    run.summary = operation_summary(plan.operations)
    return version


async def _runtime_servers(run: _Run, operations: tuple[Operation, ...], version: int, *,
                           trust_version: bool = False) -> int:
    """``trust_version``: the first write goes with ``version`` once; its 409 is the caller's (not retried
    with a fresh version: what was planned against may be gone)."""
    client = run.client
    for op in operations:
        assert op.section_name is not None and op.child_name is not None and op.payload is not None
        backend, name = op.section_name, op.child_name
        reloaded = False
        for payload in safe_server_steps(op.previous, op.payload):
            write = _server_write(client, backend, name, payload)
            if trust_version:
                outcome, trust_version = await write(version), False
                done = Versioned(outcome=outcome, version=version, retries=0)
            else:
                done = await client.with_version(write, version)
            version = done.version + 1
            if done.outcome.reload_scheduled:
                run.reload(done.outcome.reload_id)
                reloaded = True
        if not reloaded:
            run.runtime_updates += 1
    return version


async def _runtime_growth(run: _Run, desired_config: str, operations: tuple[Operation, ...], version: int) -> int:
    """New servers through ``add server``, updates as on the runtime path, then the file: one raw push with
    ``skip_reload`` (haproxy already runs what it says). Placeholders and servers alike are added with an
    explicit ``maintenance``: HAProxy before 3.0 creates a dynamic server in maintenance otherwise."""
    client = run.client
    for op in operations:
        if op.action == "create":
            assert op.section_name is not None and op.payload is not None
            await client.add_runtime_server(op.section_name,
                                            {**op.payload, "maintenance": op.payload.get("maintenance", "disabled")})
            run.runtime_updates += 1
    version = await _runtime_servers(run, tuple(op for op in operations if op.action != "create"), version)
    pushed = await client.with_version(lambda v: client.post_raw_config(desired_config, v, skip_reload=True), version)
    run.reload(pushed.outcome.reload_id)
    return pushed.version + 1


def safe_server_steps(current: dict[str, Any] | None, desired: dict[str, Any]) -> list[dict[str, Any]]:
    """The server models to write, in order, so that HAProxy never routes to a half-changed server.

    A slot that is emptied gets a new address (the placeholder) and maintenance in one update; applied
    address first, HAProxy briefly sends requests to the placeholder, which refuses them, and retries
    them for seconds (``retries`` with a turn-around of ``timeout connect`` or one second). So a
    server going into maintenance goes first, at its old address; one leaving it moves first, still
    in maintenance. Whatever order the Dataplane API applies one update's fields in.
    """
    if current is None or (current.get("address"), current.get("port")) == (desired.get("address"),
                                                                            desired.get("port")):
        return [desired]
    was_down, goes_down = current.get("maintenance") == "enabled", desired.get("maintenance") == "enabled"
    if goes_down and not was_down:
        return [{**current, "maintenance": "enabled"}, desired]
    if was_down and not goes_down:
        return [{**desired, "maintenance": "enabled"}, desired]
    return [desired]


def _server_write(
    client: DataplaneClient, backend: str, name: str, payload: dict[str, Any]
) -> Callable[[int], Awaitable[WriteOutcome]]:
    async def write(version: int) -> WriteOutcome:
        return await client.replace_server(backend, name, payload, version=version)

    return write


async def _verify(run: _Run) -> None:
    if not run.options.verify_reload:
        return
    for reload_id in run.reload_ids:
        await run.client.wait_for_reload(
            reload_id, within=run.options.reload_timeout, interval=run.options.reload_poll_interval
        )
