"""The template engine: compiles a configuration's templates once, renders config + aux files.

``TemplateSet`` is the engine's input (built from a ``HAProxyTemplateConfigSpec`` with
``TemplateSet.from_spec``); ``TemplateEngine.render(RenderInputs)`` returns a ``RenderResult``.
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
import time
from collections.abc import Callable, Iterable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from types import FunctionType, TracebackType
from typing import Any

from jinja2 import TemplateAssertionError, TemplateNotFound, TemplateSyntaxError, UndefinedError, pass_context
from jinja2.exceptions import SecurityError
from jinja2.runtime import Context

from haptic.core.gc_pause import gc_paused
from haptic.core.identity import same_items
from haptic.dataplane.aux_files import AuxFiles
from haptic.templating import ingress_lines
from haptic.templating.addresses import published_addresses
from haptic.templating.context import (
    CURRENT_RENDER,
    EMPTY_STORE,
    Endpoint,
    EndpointAnswers,
    EndpointsMemo,
    FileRegistry,
    PathResolver,
    RenderState,
    ServerSlot,
    ServerSlots,
    SharedState,
    SkippingStore,
    SlotMemo,
    StorageDirs,
    StoreLike,
    StoreView,
)
from haptic.templating.current_config import CurrentBackend, CurrentConfig, CurrentServer, coerce_current_config
from haptic.templating.dialect_helpers import auth_problems, canary_rules, htpasswd_users, with_dialect
from haptic.templating.error_pages import error_pages
from haptic.templating.errors import (
    SandboxViolation,
    TemplateCompileError,
    TemplateRenderError,
    TemplatingError,
)
from haptic.templating.filters import FILTERS, GLOBALS, TESTS
from haptic.templating.fragment_loops import LoopState, render_loop
from haptic.templating.fragments import (
    RECORDING,
    Entry,
    FragmentCache,
    adopt,
    begin,
    direct_body,
    end,
    key_of,
    replay,
)
from haptic.templating.functions import FUNCTION_FILTERS, FUNCTIONS
from haptic.templating.gateway import gateway_model
from haptic.templating.http_fetch import HttpFetcher, HttpSource
from haptic.templating.ingress_helpers import (
    ingress_paths,
    ingress_routes,
    is_passthrough,
    passthrough_routes,
    regex_routes,
    route_ownership,
    weighted_routes,
)
from haptic.templating.ingress_status import set_ingress_statuses
from haptic.templating.loop_splice import splice_safe
from haptic.templating.notices import ObjectNotice, object_ref
from haptic.templating.postprocess import RegexReplace, post_processor_from
from haptic.templating.safety import parse_cidrs, parse_request_headers
from haptic.templating.sandbox import HapticSandbox
from haptic.templating.statuses import ObjectStatus, set_status, set_statuses

HAPROXY_CFG = "haproxy.cfg"
DEFAULT_RENDER_TIMEOUT = 30.0
VERIFY_FRAGMENTS_ENV = "HAPTIC_VERIFY_FRAGMENTS"


#: the markers of the fragment loops of the ``haproxy.cfg`` render in progress (by the id of each) and the item texts
#: each stands for; None: loops answer their joined text
_SPLICES: ContextVar[dict[int, tuple[str, list[str]]] | None] = ContextVar("haptic_loop_splices", default=None)

@dataclass(frozen=True)
class TemplateFile:
    source: str
    post_processing: tuple[RegexReplace, ...] = ()


@dataclass(frozen=True)
class TemplateSet:
    """All templates of one configuration. Aux entry points are keyed by output filename."""

    haproxy_config: TemplateFile
    snippets: Mapping[str, str] = field(default_factory=dict)
    maps: Mapping[str, TemplateFile] = field(default_factory=dict)
    files: Mapping[str, TemplateFile] = field(default_factory=dict)
    certificates: Mapping[str, TemplateFile] = field(default_factory=dict)

    @classmethod
    def from_spec(cls, spec: Any) -> TemplateSet:
        """Reads ``haproxy_config``, ``template_snippets``, ``maps``, ``files``, ``ssl_certificates``."""

        def one(obj: Any, where: str) -> TemplateFile:
            source = obj.get("template") if isinstance(obj, dict) else getattr(obj, "template", None)
            if not isinstance(source, str):
                raise TemplateCompileError(f"{where}.template is required")
            steps = obj.get("post_processing", obj.get("postProcessing")) if isinstance(obj, dict) else None
            if steps is None and not isinstance(obj, dict):
                steps = getattr(obj, "post_processing", None)
            processors = []
            for i, step in enumerate(steps or []):
                try:
                    processors.append(post_processor_from(step, f"{where}.postProcessing[{i}]"))
                except ValueError as exc:
                    raise TemplateCompileError(str(exc)) from None
            return TemplateFile(source, tuple(processors))

        def many(name: str, alias: str) -> dict[str, TemplateFile]:
            entries = getattr(spec, name, None) or {}
            return {key: one(value, f"{alias}.{key}") for key, value in entries.items()}

        snippets: dict[str, str] = {}
        for key, value in (getattr(spec, "template_snippets", None) or {}).items():
            source = value.get("template") if isinstance(value, dict) else getattr(value, "template", value)
            if not isinstance(source, str):
                raise TemplateCompileError(f"templateSnippets.{key}.template is required")
            snippets[key] = source
        return cls(
            haproxy_config=one(spec.haproxy_config, "haproxyConfig"),
            snippets=snippets,
            maps=many("maps", "maps"),
            files=many("files", "files"),
            certificates=many("ssl_certificates", "sslCertificates"),
        )


@dataclass(frozen=True)
class RenderInputs:
    """Everything a render pass reads besides the templates."""

    stores: Mapping[str, StoreLike] = field(default_factory=dict)
    haproxy_pods: StoreLike | None = None
    extra_context: Mapping[str, Any] = field(default_factory=dict)
    current_config: Any = None
    capabilities: Mapping[str, Any] = field(default_factory=dict)
    dirs: StorageDirs = field(default_factory=StorageDirs)
    #: (kind, namespace, name) of objects the templates must leave out (``skipped(obj)`` in templates).
    skip: frozenset[tuple[str, str, str]] = frozenset()
    #: For some skipped objects, the version to render in their place (their version in the last config
    #: that validated): a change haproxy -c rejected is held back, not the whole object.
    previous: Mapping[tuple[str, str, str], Mapping[str, Any]] = field(default_factory=dict)
    wall_time: float | None = None
    """Seconds since the epoch from the caller's clock: what ``now()`` returns (None: ``now()`` fails)."""
    #: give shrinkable backends' surplus server slots back (the config reloads anyway; see ``ServerSlots``)
    compact_slots: bool = False
    #: the load balancer address statuses publish (``--publish-address``; ``""``: the HAProxy pods' IPs)
    publish_address: str = ""
    #: what ``http.fetch`` reads (None: templates calling it fail, e.g. in a webhook dry-run)
    http: HttpSource | None = None


@dataclass(frozen=True)
class RenderResult:
    """The rendered ``haproxy.cfg``, auxiliary files, the warnings templates raised and their notices
    about single objects (sorted by object, then reason)."""

    config: str
    aux: AuxFiles
    warnings: tuple[str, ...] = ()
    notices: tuple[ObjectNotice, ...] = ()
    #: the statuses templates declared (``set_status``), sorted by object
    statuses: tuple[ObjectStatus, ...] = ()
    context: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)
    #: some backend kept surplus server slots long enough that a compact render would give them back
    slots_shrinkable: bool = False

    def __repr__(self) -> str:
        # Certificates hold private keys: a repr (logs, debuggers) shows file names and sizes only.
        files = {
            kind: sorted(getattr(self.aux, kind)) for kind in ("maps", "files", "certificates", "crt_lists")
        }
        return f"RenderResult(config=<{len(self.config)} chars>, aux={files}, warnings={list(self.warnings)})"


# Which spec field each compiled template came from, for error messages.
def _field_of(name: str) -> str:
    if name == HAPROXY_CFG:
        return "haproxyConfig.template"
    kind, sep, rest = name.partition(":")
    if sep and kind in ("map", "file", "cert"):
        return {"map": "maps", "file": "files", "cert": "sslCertificates"}[kind] + f".{rest}.template"
    return f"templateSnippets.{name}.template"


def _template_location(tb: TracebackType | None, names: Mapping[str, Any]) -> tuple[str | None, int | None]:
    found: tuple[str | None, int | None] = (None, None)
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if filename in names:
            found = (filename, tb.tb_lineno)
        tb = tb.tb_next
    return found


class TemplateEngine:
    """Compiles every template up front; ``render`` is repeatable and deterministic."""

    def __init__(
        self,
        templates: TemplateSet,
        *,
        render_timeout: float | None = DEFAULT_RENDER_TIMEOUT,
        clock: Callable[[], float] = time.monotonic,
        fragments: bool = True,
    ) -> None:
        self.templates = templates
        #: ``{% fragment %}`` bodies reused while what they read is unchanged (False: always rendered)
        self.fragments = fragments
        self.fragment_cache = FragmentCache()
        #: render every time a second time without fragments and fail unless identical (tests set it for the
        #: scenario library through ``HAPTIC_VERIFY_FRAGMENTS=1``)
        self.verify_fragments = os.environ.get(VERIFY_FRAGMENTS_ENV) == "1"
        self._roles: dict[str, Any] = {}
        self._role_dicts: frozenset[int] = frozenset()
        self._stable_dicts: dict[str, dict[str, Any]] = {}
        self.render_timeout = render_timeout
        sources: dict[str, str] = dict(templates.snippets)
        sources[HAPROXY_CFG] = templates.haproxy_config.source
        for prefix, group in (("map", templates.maps), ("file", templates.files), ("cert", templates.certificates)):
            for filename, tpl in group.items():
                bad = not filename or filename.startswith(".") or posixpath.basename(filename) != filename
                if bad:
                    raise TemplateCompileError(f"{_field_of(prefix + ':' + filename)}: bad filename {filename!r}")
                sources[f"{prefix}:{filename}"] = tpl.source
        self._sources = sources
        # Server slot assignments of the last completed render, reused for unchanged backends; a new engine (a
        # config change) starts from those of the last render of any engine, and the endpoints it found: both
        # are answers checked against every input they were computed from (the deployed backend and the store
        # objects by identity, the endpoints and settings by value), so they hold whichever engine asks.
        self._slot_memo: SlotMemo = _CARRIED.slots
        self._slot_low_since: Mapping[str, float] = {}
        self._endpoints = EndpointsMemo(_CARRIED.endpoints)
        memo = self._endpoints

        # A plain function (not the memo object) so that the sandbox's fast path for trusted helpers applies.
        def service_endpoints(service: Any, port_ref: Any, slices: Any) -> list[Endpoint]:
            return memo(service, port_ref, slices)

        def ingress_backends(ing: Any, default_backend: Any, resources: Any, shared: Any, slots: Any,
                             settings: Any) -> Iterable[dict[str, Any]]:
            return ingress_lines.ingress_backends(ing, default_backend, resources, shared, slots, settings,
                                                  memo.answer)

        def gateway_servers(backend: Any, resources: Any, slots: Any, settings: Any) -> str:
            return ingress_lines.gateway_servers(backend, resources, slots, settings, memo.answer)

        self._snippet_names = sorted(templates.snippets)
        self.env = HapticSandbox(sources, clock=clock)
        self.env.filters.update(FILTERS)
        self.env.filters.update(FUNCTION_FILTERS)
        self.env.tests.update(TESTS)
        self.env.globals.update(GLOBALS)
        self.env.globals.update(FUNCTIONS)
        self.env.globals.update(
            {
                "snippets": self._snippets_matching,
                "render_glob": self._render_glob,
                "service_endpoints": service_endpoints,
                "ingress_backends": ingress_backends,
                "gateway_servers": gateway_servers,
                "exact_map_entries": ingress_lines.exact_map_entries,
                "prefix_map_entries": ingress_lines.prefix_map_entries,
                "ingress_paths": ingress_paths,
                "ingress_routes": ingress_routes,
                "is_passthrough": is_passthrough,
                "passthrough_routes": passthrough_routes,
                "error_pages": error_pages,
                "regex_routes": regex_routes,
                "weighted_routes": weighted_routes,
                "route_ownership": route_ownership,
                "gateway_model": gateway_model,
                "set_status": set_status,
                "set_statuses": set_statuses,
                "set_ingress_statuses": set_ingress_statuses,
                "published_addresses": published_addresses,
                "request_headers": parse_request_headers,
                "cidrs": parse_cidrs,
                "canary_rules": canary_rules,
                "htpasswd_users": htpasswd_users,
                "auth_problems": auth_problems,
            }
        )
        self.env.filters["with_dialect"] = with_dialect
        self.env.trusted_types = frozenset(
            {StoreView, SharedState, PathResolver, FileRegistry, ServerSlots, ServerSlot, Endpoint, HttpFetcher}
            | {CurrentConfig, CurrentBackend, CurrentServer}
        )
        self.env.trusted_functions = frozenset(
            fn
            for fn in self.env.globals.values()
            if isinstance(fn, FunctionType) and not hasattr(fn, "jinja_pass_arg")
        )
        self.env.render_fragment = self._render_fragment  # type: ignore[attr-defined]
        self.env.render_fragments = self._render_fragments  # type: ignore[attr-defined]
        self._compiled = {name: self._compile(name) for name in sorted(sources)}
        #: ``haproxy.cfg`` joins its fragment loops' item texts into its own text (``loop_splice``)
        self.splice_loops = splice_safe(self.env, sources)
        self._current_cache: tuple[Any, CurrentConfig | None] | None = None
        # the stores' change marks at the last render with fragments, and what was written since (see replay)
        self._store_marks: dict[str, tuple[object, int]] = {}
        self._dirty: dict[str, frozenset[tuple[str, ...]] | None] = {}
        self._skipped_last = False
        self._last_statuses: LastStatuses | None = _CARRIED.statuses

    @property
    def template_names(self) -> tuple[str, ...]:
        """Every compiled template: snippets, ``haproxy.cfg``, ``map:<name>``, ``file:<name>``, ``cert:<name>``."""
        return tuple(sorted(self._sources))

    # -- compile ----------------------------------------------------------------------------------

    def _compile(self, name: str) -> Any:
        try:
            template = self.env.get_template(name)
        except TemplateSyntaxError as exc:
            # TemplateAssertionError (unknown filter/test) is a TemplateSyntaxError too.
            where = exc.name or name
            raise TemplateCompileError(
                exc.message or "syntax error", template=where, line=exc.lineno, field=_field_of(where)
            ) from None
        return template

    # -- snippet helpers ---------------------------------------------------------------------------

    def _snippets_matching(self, pattern: str) -> list[str]:
        """Snippet names matching a glob, in name order: ``{% for s in snippets('backends-*') %}{% include s %}``."""
        return [name for name in self._snippet_names if fnmatch.fnmatchcase(name, pattern)]

    @pass_context
    def _render_glob(self, context: Context, pattern: str) -> str:
        """Renders every snippet matching ``pattern`` in name order with the caller's context."""
        parts = []
        variables = context.get_all()
        token = _SPLICES.set(None)  # a snippet's text is this function's answer, not the output: loops join
        try:
            for name in self._snippets_matching(pattern):
                parts.append(self._compiled[name].render(variables))
        finally:
            _SPLICES.reset(token)
        return "".join(parts)

    # -- fragments --------------------------------------------------------------------------------

    def _caching(self) -> bool:
        state = CURRENT_RENDER.get()
        # not inside ``render`` (whose objects the journals name): no cache
        return state is not None and self.fragments and state is self._roles.get("state")

    def _render_fragment(self, fragment: str, values: dict[str, Any], caller: Callable[[], str]) -> str:
        if not self._caching():
            return caller()
        key, refs = key_of(fragment, values, _ROLE_TYPES, self._role_dicts)
        return self._cached(key, refs, caller)

    def _render_fragments(self, fragment: str, items: Any, values: dict[str, Any],
                          caller: Callable[[Any], str]) -> str:
        """``{% fragment for x in items %}``: the loop's key once, then its items (``fragment_loops``)."""
        if not self._caching():
            return "".join(caller(item) for item in items)
        base, refs = key_of(fragment, values, _ROLE_TYPES, self._role_dicts)
        cache = self.fragment_cache
        state = LoopState(self._roles, self._roles["state"].seen, self._dirty)
        last = cache.loop(base)
        splices = _SPLICES.get()
        if splices is not None and last is not None:
            # the same loop twice in one render: the texts handed out before are about to change in place
            for at, (marker, texts) in list(splices.items()):
                if texts is last.texts:
                    splices[at] = (marker, ["".join(texts)])
        record, worked = render_loop(last, items, refs, direct_body(caller), state, self._cached,
                                     bulk=RECORDING.get() is None)
        cache.keep_loop(base, record)
        cache.hits += len(record.items) - worked
        if splices is None:
            return record.joined
        # A marker of its own (a new object each time), which ``_render_spliced`` finds in the output and puts the
        # item texts in place of.
        marker = f"\x00haptic-fragment-loop-{len(splices)}\x00"
        splices[id(marker)] = (marker, record.texts)
        return marker

    def _cached(self, key: Any, refs: tuple[Any, ...], render: Callable[[], str],
                current: dict[Any, Entry] | None = None, previous: dict[Any, Entry] | None = None) -> str:
        """The entry under ``key`` (in ``current``/``previous``, a loop's entries, or the cache's own) when its
        journal holds, else ``render()`` journalled into a new one."""
        cache = self.fragment_cache
        entry = cache.get(key) if current is None or previous is None else current.get(key) or previous.get(key)
        kept = None if entry is None else replay(entry.ops, self._roles, self._roles["state"].seen, self._dirty)
        if entry is not None and kept is not None:
            if kept is not entry.ops:
                entry = Entry(entry.text, kept, entry.refs)
            self._keep(key, entry, current)
            adopt(kept)
            cache.hits += 1
            return entry.text
        cache.misses += 1
        journal, token, outer = begin()
        try:
            text = render()
        finally:
            end(journal, token, outer)
        if journal.cacheable:
            self._keep(key, Entry(text, tuple(journal.ops), refs), current)
        return text

    def _keep(self, key: Any, entry: Entry, group: dict[Any, Entry] | None) -> None:
        if group is None:
            self.fragment_cache.put(key, entry)
        else:
            group[key] = entry

    def _store_changes(self, inputs: RenderInputs) -> dict[str, frozenset[tuple[str, ...]] | None]:
        """Per store role, the index prefixes written since the last render with fragments (``ResourceStore``'s
        change log; None where a store cannot tell, or where per-object isolation changes the answers)."""
        stores: dict[str, Any] = {f"store:{name}": store for name, store in inputs.stores.items()}
        stores["store:@pods"] = inputs.haproxy_pods
        comparable = not inputs.skip and not self._skipped_last
        self._skipped_last = bool(inputs.skip)
        marks, dirty = self._store_marks, {}
        self._store_marks = {}
        for role, store in stores.items():
            mark = getattr(store, "change_mark", None)
            since = getattr(store, "changed_since", None)
            if not callable(mark) or not callable(since):
                continue
            self._store_marks[role] = mark()
            dirty[role] = since(marks.get(role)) if comparable else None
        return dirty

    # -- render -----------------------------------------------------------------------------------

    def _current(self, value: Any) -> CurrentConfig | None:
        # The deployed config rarely changes between renders; parse it once per distinct object/text.
        # The cache holds the object itself: an id alone could be reused by a newer text once the old is freed.
        if self._current_cache is not None and self._current_cache[0] is value:
            return self._current_cache[1]
        parsed = coerce_current_config(value)
        self._current_cache = (value, parsed)
        return parsed

    def _stable(self, name: str, value: Mapping[str, Any]) -> dict[str, Any]:
        """A copy of ``value``, the same object as the last render's while equal: fragments key on identity
        (templates cannot mutate it: the sandbox is immutable)."""
        last = self._stable_dicts.get(name)
        if last is not None and last == value:
            return last
        self._stable_dicts[name] = copy = dict(value)
        return copy

    def build_context(self, inputs: RenderInputs) -> tuple[dict[str, Any], RenderState, FileRegistry]:
        resolver = PathResolver(inputs.dirs)
        registry = FileRegistry(resolver)
        state = RenderState(wall_time=inputs.wall_time)
        current = self._current(inputs.current_config)
        pods = StoreView(inputs.haproxy_pods if inputs.haproxy_pods is not None else EMPTY_STORE, "store:@pods")
        context: dict[str, Any] = {
            "resources": {
                name: StoreView(SkippingStore(store, inputs.skip, inputs.previous) if inputs.skip else store,
                                f"store:{name}")
                for name, store in sorted(inputs.stores.items())
            },
            "controller": {"haproxy_pods": pods, "publish_address": inputs.publish_address,
                           "isolated": _isolated(inputs)},
            "extraContext": self._stable("extraContext", inputs.extra_context),
            "capabilities": self._stable("capabilities", inputs.capabilities),
            "currentConfig": current,
            "pathResolver": resolver,
            "fileRegistry": registry,
            "templateSnippets": list(self._snippet_names),
            "dataplane": self._stable("dataplane", {
                "maps_dir": inputs.dirs.maps_dir,
                "ssl_certs_dir": inputs.dirs.ssl_certs_dir,
                "general_storage_dir": inputs.dirs.general_storage_dir,
                "config_file": inputs.dirs.config_file,
                "base_dir": inputs.dirs.base_dir,
            }),
            "shared": SharedState(),
            "http": HttpFetcher(inputs.http),
            "server_slots": ServerSlots(current, self._slot_memo, compact=inputs.compact_slots, now=inputs.wall_time,
                                        low_since=self._slot_low_since),
        }
        return context, state, registry

    def render(self, inputs: RenderInputs) -> RenderResult:
        """Renders ``haproxy.cfg`` then maps, files and certificates (name order), sharing one context."""
        result = self._render_pass(inputs)
        if self.fragments and self.verify_fragments:
            self.fragments = False
            # the check leaves the slot assignments as the render left them (fragment loops rely on them)
            slots = self._slot_memo, self._slot_low_since
            try:
                full = self._render_pass(inputs)
            finally:
                self.fragments = True
                self._slot_memo, self._slot_low_since = slots
            _require_same(result, full)
        return result

    def _render_pass(self, inputs: RenderInputs) -> RenderResult:
        context, state, registry = self.build_context(inputs)
        state.skip = inputs.skip
        state.previous = inputs.previous
        self._endpoints.next_render()
        if self.fragments:
            self.fragment_cache.next_render()
            self._dirty = self._store_changes(inputs)
        self._roles = {
            "shared": context["shared"], "state": state, "slots": context["server_slots"], "registry": registry,
            "paths": context["pathResolver"], "store:@pods": context["controller"]["haproxy_pods"],
            **{f"store:{name}": view for name, view in context["resources"].items()},
        }
        # (``controller`` holds plain values too: fragments reading it are keyed on it, by identity)
        self._role_dicts = frozenset({id(context["resources"])})
        self.env.start_deadline(self.render_timeout)
        # A render allocates hundreds of thousands of short-lived objects next to large stores; the
        # cyclic GC would rescan the stores over and over, and a render creates no cycles worth it.
        with gc_paused():
            token = CURRENT_RENDER.set(state)
            try:
                config = self._render_one(HAPROXY_CFG, self.templates.haproxy_config, context)
                maps = {n: self._render_one(f"map:{n}", t, context) for n, t in sorted(self.templates.maps.items())}
                files = {n: self._render_one(f"file:{n}", t, context) for n, t in sorted(self.templates.files.items())}
                certs = {
                    n: self._render_one(f"cert:{n}", t, context) for n, t in sorted(self.templates.certificates.items())
                }
            except TemplatingError:
                # Content not fetched yet renders as "": what failed may be a template reading it.
                context["http"].raise_if_missing()
                raise
            finally:
                CURRENT_RENDER.reset(token)
                self.env.clear_deadline()
        context["http"].raise_if_missing()
        slots = context["server_slots"]
        shrinkable = False
        if isinstance(slots, ServerSlots):
            self._slot_memo, self._slot_low_since = slots.memo, slots.low_since
            shrinkable = slots.shrinkable
            _CARRIED.slots = slots.memo
        _CARRIED.endpoints = self._endpoints.answers()
        for kind, target in (("map", maps), ("file", files), ("cert", certs)):
            for name, content in sorted(registry.files[kind].items()):
                if name in target and target[name] != content:
                    raise TemplateRenderError(f"{kind} {name!r} is both a configured template and a registered file")
                target[name] = content
        aux = AuxFiles(
            maps=dict(sorted(maps.items())),
            files=dict(sorted(files.items())),
            certificates=dict(sorted(certs.items())),
            crt_lists=dict(sorted(registry.files["crt-list"].items())),
        )
        notices = tuple(sorted(state.notices.values()))
        # by key, (kind, namespace, name): the order of ``ObjectStatus``, compared as plain tuples
        statuses = self._sorted_statuses(state.statuses, state.statuses_from)
        return RenderResult(config=config, aux=aux, warnings=tuple(state.warnings), notices=notices,
                            statuses=statuses, context=context, slots_shrinkable=shrinkable)

    def _sorted_statuses(self, declared: dict[tuple[str, str, str], Any], source: Any) -> tuple[Any, ...]:
        """The declared statuses by key; the last render's tuple (of any engine: a config change builds a new one)
        again when the same statuses were declared in the same order (10,000 Ingresses declare theirs on every
        render: sorting them is not free), known at once when both renders' came whole from one ``source`` dict
        (``RenderState.statuses_from``)."""
        last = self._last_statuses
        if source is not None and last is not None and last[3] is source:
            return last[2]
        keys, values = list(declared), list(declared.values())
        if last is not None and same_items(last[1], values) and last[0] == keys:
            self._last_statuses = _CARRIED.statuses = (*last[:3], source)
            return last[2]
        ordered = tuple(status for _, status in sorted(declared.items()))
        self._last_statuses = _CARRIED.statuses = (keys, values, ordered, source)
        return ordered

    def _render_one(self, name: str, template: TemplateFile, context: Mapping[str, Any]) -> str:
        try:
            if name == HAPROXY_CFG and self.splice_loops and self._caching():
                text = self._render_spliced(name, context)
            else:
                text = self._compiled[name].render(context)
        except TemplatingError as exc:
            if exc.template is None:
                where, line = _template_location(exc.__traceback__, self._sources)
                exc.template, exc.line, exc.field = where or name, line, _field_of(where or name)
                exc.args = (exc._format(),)
            raise
        except SecurityError as exc:
            raise self._located(SandboxViolation, f"sandbox violation: {exc}", exc, name) from None
        except TemplateNotFound as exc:
            raise self._located(TemplateRenderError, f"template not found: {exc.name}", exc, name) from None
        except (UndefinedError, TemplateAssertionError) as exc:
            raise self._located(TemplateRenderError, str(exc), exc, name) from None
        except RecursionError:
            raise TemplateRenderError("recursion too deep", template=name, field=_field_of(name)) from None
        except Exception as exc:
            raise self._located(TemplateRenderError, f"{type(exc).__name__}: {exc}", exc, name) from None
        for step in template.post_processing:
            text = step.apply(text)
        return text

    def _render_spliced(self, name: str, context: Mapping[str, Any]) -> str:
        """``Template.render`` (Jinja 3.1's: a new context, the root render function's output joined, errors through
        ``handle_exception``), joining the fragment loops' item texts into the output in place of their markers:
        one join of the config, not the loop's 4 MB text joined and then copied again into the whole."""
        compiled = self._compiled[name]
        splices: dict[int, tuple[str, list[str]]] = {}
        token = _SPLICES.set(splices)
        try:
            try:
                chunks = list(compiled.root_render_func(compiled.new_context(dict(context))))
            except Exception:
                compiled.environment.handle_exception()
        finally:
            _SPLICES.reset(token)
        parts: list[str] = []
        found = 0
        for chunk in chunks:
            hit = splices.get(id(chunk))
            if hit is not None and hit[0] is chunk:
                parts += hit[1]
                found += 1
            else:
                parts.append(chunk)
        text = "".join(parts)
        if found != len(splices):
            # A marker went elsewhere than into the output (``splice_safe`` rules that out): its loop's text in its
            # place, and no splicing from now on.
            self.splice_loops = False
            for marker, texts in splices.values():
                text = text.replace(marker, "".join(texts))
        return text

    def _located(
        self, cls: type[TemplateRenderError], message: str, exc: BaseException, name: str
    ) -> TemplateRenderError:
        where, line = _template_location(exc.__traceback__, self._sources)
        return cls(message, template=where or name, line=line, field=_field_of(where or name))


#: the keys and values of the statuses a render declared, them sorted, and the dict they came whole from (or None)
LastStatuses = tuple[list[Any], list[Any], tuple[Any, ...], Any]


class _Carried:
    """What the last completed render of any engine leaves for a new engine (see ``TemplateEngine.__init__``)."""

    def __init__(self) -> None:
        self.slots: SlotMemo = SlotMemo()
        self.endpoints: EndpointAnswers = {}
        #: the statuses the last render declared, sorted (compared by identity and key before use)
        self.statuses: LastStatuses | None = None


_CARRIED = _Carried()


class FragmentMismatch(AssertionError):
    """A render with fragments differed from the same render without them (a bug in the fragment cache)."""


def _require_same(cached: RenderResult, full: RenderResult) -> None:
    for name in ("config", "aux", "warnings", "notices", "statuses", "slots_shrinkable"):
        if getattr(cached, name) != getattr(full, name):
            raise FragmentMismatch(f"render with fragments differs from the full render in {name}")


_ROLE_TYPES = frozenset({StoreView, SharedState, ServerSlots, FileRegistry, PathResolver, RenderState})


def _isolated(inputs: RenderInputs) -> list[Any]:
    """The current versions of the objects per-object isolation leaves out or holds back
    (``controller.isolated``: templates declare their statuses; the stores hide or replace them)."""
    if not inputs.skip:
        return []
    found = []
    for _, store in sorted(inputs.stores.items()):
        for obj in store.list():
            ref = object_ref(obj)
            if ref is not None and ref.key in inputs.skip:
                found.append(obj)
    return found


def compile_templates(spec: Any, *, render_timeout: float | None = DEFAULT_RENDER_TIMEOUT) -> TemplateEngine:
    """Compiles every template of a ``HAProxyTemplateConfigSpec`` (errors name the field and line)."""
    return TemplateEngine(TemplateSet.from_spec(spec), render_timeout=render_timeout)
