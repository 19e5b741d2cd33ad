"""The scenario format as pydantic v2 models (the JSON Schema published for editors is derived from them).

A scenario file is one YAML mapping: ``name``, ``description``, ``seed``, ``setup``, ``steps``, optional
``invariants`` and ``matrix``. Every step and every expectation is a mapping with exactly one key naming
its kind (``- apply: ...``, ``- advance: 5s``, ``- expect: {reloads: {delta: 0}}``); the key selects the
model, so an unknown step or a misspelt field is reported precisely. Every model forbids extra fields
except inline Kubernetes objects, which are the user's own data.

Paths (``file:``) are relative to the scenario file; the loader resolves and checks them.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    WithJsonSchema,
    field_validator,
    model_validator,
)

from haptic.config.durations import DURATION_PATTERN, parse_duration

from .schema_types import Or as _Or
from .schema_types import Strict as _Strict
from .schema_types import StrList
from .schema_types import as_list as _as_list
from .traffic_spec import TrafficExpectation as TrafficExpectation  # re-exported: the expect model names it


def _seconds(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("a duration must be a string like '2s' or a number of seconds")
    if isinstance(value, int | float):
        if value < 0:
            raise ValueError("negative duration is not allowed")
        return float(value)
    if isinstance(value, str):
        return parse_duration(value).total_seconds()
    return value


#: A virtual-time duration: ``"1m30s"``, ``"250ms"`` or a number of seconds; held as float seconds.
Seconds = Annotated[
    float,
    BeforeValidator(_seconds),
    WithJsonSchema(
        {"anyOf": [{"type": "string", "pattern": DURATION_PATTERN}, {"type": "number", "minimum": 0}]}
    ),
]


# -- objects -------------------------------------------------------------------------------------


class FileRef(_Strict):
    """Objects read from a YAML file (multi-document allowed), relative to the scenario file."""

    file: str = Field(min_length=1)


class ObjectMeta(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)
    name: str = Field(min_length=1)
    namespace: str | None = None


class KubeObject(BaseModel):
    """An inline Kubernetes object. Only ``apiVersion``, ``kind`` and ``metadata.name`` are checked."""

    model_config = ConfigDict(extra="allow", frozen=True)
    apiVersion: str = Field(min_length=1)
    kind: str = Field(min_length=1)
    metadata: ObjectMeta


_IDENTIFIER = r"^[A-Za-z_][A-Za-z0-9_]*$"


class Generate(_Strict):
    """``count`` objects from ``template`` (one object or a list), expanded when the file loads.

    In the template, ``${i}`` is the index (``start``, ``start + 1``, ...) and ``${name}`` a value of
    ``vars``: a list is cycled through (object n gets item ``n % len``), anything else is itself a
    template (``"shop-${i}.example"``). ``${...}`` may hold integer arithmetic (``${i % 250}``,
    ``${i // 250 + 1}``) over those names and the matrix variables, and a format spec after a colon
    (``${i:04d}`` is ``0007``). A whole-string ``${...}`` keeps its type (``port: ${port}`` stays a number).
    """

    count: int = Field(ge=0, le=100_000, description="how many copies")
    start: int = Field(default=0, description="the first value of ${i}")
    vars: dict[Annotated[str, Field(pattern=_IDENTIFIER)], Any] = Field(
        default_factory=dict, description="name -> list (cycled) or template value")
    template: dict[str, Any] | list[dict[str, Any]] = Field(
        description="a Kubernetes object (or a list of them) with ${i} and ${var} references")


class GenerateSource(_Strict):
    generate: Generate


def _object_source_tag(value: Any) -> str | None:
    if isinstance(value, dict):
        return "file" if "file" in value else "generate" if "generate" in value else "object"
    if isinstance(value, FileRef):
        return "file"
    if isinstance(value, GenerateSource):
        return "generate"
    if isinstance(value, KubeObject):
        return "object"
    return None


ObjectSource = Annotated[
    Annotated[FileRef, Tag("file")] | Annotated[GenerateSource, Tag("generate")] | Annotated[KubeObject, Tag("object")],
    Discriminator(
        _object_source_tag,
        custom_error_type="object_source",
        custom_error_message="expected a Kubernetes object, {file: path} or {generate: {...}}",
    ),
]


class ObjectRef(_Strict):
    """Names one object: ``kind`` + ``name`` (+ ``namespace``, ``apiVersion`` when ambiguous)."""

    kind: str = Field(min_length=1)
    name: str = Field(min_length=1)
    namespace: str | None = None
    apiVersion: str | None = None


# -- setup ---------------------------------------------------------------------------------------


class ConfigSource(_Strict):
    """The HAProxyTemplateConfig: a file, or the inline resource."""

    file: str | None = None
    inline: KubeObject | None = None

    @model_validator(mode="after")
    def _one_source(self) -> ConfigSource:
        if (self.file is None) == (self.inline is None):
            raise ValueError("give exactly one of 'file' or 'inline'")
        return self


class TimedContent(_Strict):
    at: Seconds = Field(description="from this time on (since the start of the scenario)")
    content: str


class HttpContent(_Strict):
    """One URL of the simulated HTTP server templates reach with ``http.fetch`` (``sim`` only)."""

    url: str = Field(pattern=r"^https?://[^/@\s]+/\S*$")
    content: str = Field(description="what it serves from the start")
    then: list[TimedContent] = Field(default_factory=list, description="later versions, each from its `at` on")


class Setup(_Strict):
    pods: int = Field(default=2, ge=0, le=64, description="number of HAProxy pods")
    replicas: int = Field(default=1, ge=1, le=8, description="number of controller replicas")
    config: ConfigSource
    objects: list[ObjectSource] = Field(default_factory=list, description="objects present before the start")
    settle: bool = Field(default=True, description="settle after start, before the first step")
    http: list[HttpContent] = Field(default_factory=list, description="URLs the simulated HTTP server serves to "
                                                                      "templates' http.fetch (sim only)")


# -- faults --------------------------------------------------------------------------------------


class _Fault(_Strict):
    """A fault is active from its ``fault`` step until ``duration`` passes (then it clears by itself) or a
    ``fault: {clear: ...}`` step clears it; without ``duration``, until cleared. While active it affects
    every request it applies to; ``count`` (where a fault has one) caps that at the first N."""

    duration: Seconds | None = Field(default=None, description="active for this time, then cleared by itself; "
                                                                "absent: until a `clear` step")


def _signed_seconds(value: Any) -> Any:
    if isinstance(value, str) and value.startswith("-"):
        return -float(_seconds(value[1:]))
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return _seconds(value)


#: a signed duration (``"-30s"``, ``"1h"``, ``-5``): a clock offset
SignedSeconds = Annotated[
    float,
    BeforeValidator(_signed_seconds),
    WithJsonSchema({"anyOf": [{"type": "string", "pattern": "^-?(?:" + DURATION_PATTERN.strip("^$") + ")$"},
                              {"type": "number"}]}),
]

_COUNT_DOC = "at most the first N {what} while active fail; absent: every one while active"


class KubeOutage(_Fault):
    """The Kubernetes API answers 503 to every request (and cuts open watches)."""

    kind: Literal["kube_outage"]


class KubeLatency(_Fault):
    """Every Kubernetes API answer is delayed by ``delay`` (watch events already streaming are not)."""

    kind: Literal["kube_latency"]
    delay: Seconds = Field(description="added to every Kubernetes API answer")


class WatchDrop(_Fault):
    """Open watches are closed by the server (clients must re-watch). Instant: ``duration`` has no effect."""

    kind: Literal["watch_drop"]
    resource: str | None = Field(default=None, description="plural resource name; all when absent")


class Compaction(_Fault):
    """The API compacts its history: re-watching from an old resourceVersion gets 410 Gone. Instant."""

    kind: Literal["compaction"]


class _PodFault(_Fault):
    pod: str | int | None = Field(default=None, description="pod name or index; all pods when absent")


class Dataplane5xx(_PodFault):
    """The pod's Dataplane API answers ``status`` to its requests."""

    kind: Literal["dataplane_5xx"]
    status: int = Field(default=503, ge=500, le=599)
    count: int | None = Field(default=None, ge=1, description=_COUNT_DOC.format(what="requests"))
    path: str = Field(default="", description="only requests whose API path contains this (e.g. /servers/); all "
                                              "when empty")


class DataplaneSlow(_PodFault):
    kind: Literal["dataplane_slow"]
    delay: Seconds = Field(description="every Dataplane answer is delayed by this much virtual time")


class DataplaneUnreachable(_PodFault):
    """Connections to the pod's Dataplane API are refused (the pod's haproxy keeps serving traffic)."""

    kind: Literal["dataplane_unreachable"]


class HAProxyDown(_PodFault):
    """The pod's haproxy process dies while its Dataplane API stays up: runtime calls and reloads fail and
    traffic to the pod is refused; when the fault clears, haproxy starts again from the config on disk."""

    kind: Literal["haproxy_down"]


class Dataplane409Storm(_PodFault):
    """Version-checked writes to the pod's Dataplane API answer 409 (version conflict)."""

    kind: Literal["dataplane_409_storm"]
    count: int | None = Field(default=None, ge=1, description=_COUNT_DOC.format(what="version-checked writes"))


class ReloadFailure(_PodFault):
    """The pod's reloads fail (haproxy keeps the previous configuration)."""

    kind: Literal["reload_failure"]
    count: int | None = Field(default=None, ge=1, description=_COUNT_DOC.format(what="reloads"))


class PodRestart(_PodFault):
    """The HAProxy pod restarts: its Dataplane version counter starts again at 1, its config is empty. Instant."""

    kind: Literal["pod_restart"]


class HttpFetchFailure(_Fault):
    """The simulated HTTP server behind ``http.fetch`` answers ``status`` instead of its content."""

    kind: Literal["http_fetch_failure"]
    status: int = Field(default=503, ge=400, le=599)
    url: str = Field(default="", description="only this URL; every URL when empty")


class LeaderLoss(_Fault):
    """The leader loses leadership: ``crash`` kills its replica (the Lease expires, another takes over;
    restarted after ``duration``), ``lease`` takes the Lease away from it (handed to a follower): the
    leader must notice and step down while its replica keeps running."""

    kind: Literal["leader_loss"]
    mode: Literal["crash", "lease"] = Field(default="crash", description="crash the leader, or take its Lease")
    replica: int | None = Field(
        default=None, ge=0,
        description="crash: the replica to kill (the current leader when absent); lease: the replica the Lease "
                    "is handed to (the first live follower when absent)")


class ClockSkew(_Fault):
    """Replica ``replica``'s wall clock runs ``offset`` ahead (negative: behind) of the others, as with an
    unsynchronized node; its monotonic clock, which times Lease expiry, is unaffected."""

    kind: Literal["clock_skew"]
    replica: int = Field(ge=0, description="the controller replica whose clock is off")
    offset: SignedSeconds = Field(description="how far ahead its wall clock is ('-30s': behind)")


FaultSpec = Annotated[
    KubeOutage
    | KubeLatency
    | WatchDrop
    | Compaction
    | Dataplane5xx
    | DataplaneSlow
    | DataplaneUnreachable
    | HAProxyDown
    | Dataplane409Storm
    | ReloadFailure
    | PodRestart
    | HttpFetchFailure
    | LeaderLoss
    | ClockSkew,
    Field(discriminator="kind"),
]

FAULT_KINDS: tuple[str, ...] = (
    "kube_outage",
    "kube_latency",
    "watch_drop",
    "compaction",
    "dataplane_5xx",
    "dataplane_slow",
    "dataplane_unreachable",
    "haproxy_down",
    "dataplane_409_storm",
    "reload_failure",
    "pod_restart",
    "http_fetch_failure",
    "leader_loss",
    "clock_skew",
)


class FaultAction(_Strict):
    """``inject`` one fault or ``clear`` faults (a kind, or ``all``)."""

    inject: FaultSpec | None = None
    clear: Literal["all", *FAULT_KINDS] | None = None  # type: ignore[valid-type]

    @model_validator(mode="after")
    def _one_action(self) -> FaultAction:
        if (self.inject is None) == (self.clear is None):
            raise ValueError("give exactly one of 'inject' or 'clear'")
        return self


# -- expectations --------------------------------------------------------------------------------


class TextMatch(_Strict):
    """Checks on a text: every ``contains`` present, no ``not_contains``, every ``regex`` found."""

    contains: StrList = Field(default_factory=list)
    not_contains: StrList = Field(default_factory=list)
    regex: StrList = Field(default_factory=list)
    equals_file: str | None = Field(default=None, description="golden file, relative to the scenario")



PodSelector = str | int


class ConfigExpectation(TextMatch):
    """The HAProxy configuration: ``deployed`` on a pod (or every pod), or ``rendered`` by the leader."""

    source: Literal["deployed", "rendered"] = "deployed"
    pod: PodSelector = Field(default="*", description="pod name, index or '*' for every pod")


class AuxFileExpectation(TextMatch):
    """A map or general file by name, deployed on a pod (or every pod); ``absent: true`` requires it gone."""

    name: str = Field(min_length=1)
    pod: PodSelector = "*"
    absent: bool = False


class Count(_Strict):
    """A number check: ``eq``, ``min``, ``max`` (any combination)."""

    eq: float | None = None
    min: float | None = None
    max: float | None = None

    @model_validator(mode="after")
    def _something(self) -> Count:
        if self.eq is None and self.min is None and self.max is None:
            raise ValueError("give at least one of 'eq', 'min', 'max'")
        return self


def _count(value: Any) -> Any:
    return {"eq": value} if isinstance(value, int | float) and not isinstance(value, bool) else value


CountSpec = Annotated[Count, BeforeValidator(_count), _Or({"type": "number"})]


class CounterExpectation(_Strict):
    """Reloads or runtime updates on a pod (or summed over every pod).

    ``total`` checks the absolute count; ``delta`` the change since the previous ``expect`` step (or
    since setup finished, for the first one). A bare number means ``eq``.
    """

    pod: PodSelector = "*"
    total: CountSpec | None = None
    delta: CountSpec | None = None

    @model_validator(mode="after")
    def _something(self) -> CounterExpectation:
        if self.total is None and self.delta is None:
            raise ValueError("give 'total' or 'delta'")
        return self


_VALUE_MATCHER_SCHEMA: dict[str, Any] = {
    "type": "object", "additionalProperties": False, "minProperties": 1,
    "properties": {"not": {"description": "holds when the value is absent or differs"},
                   "in": {"type": "array", "description": "holds when the value equals one of these"}},
}


def _value_matcher(value: Any, where: str) -> Any:
    if isinstance(value, dict) and {"not", "in"} & set(value):
        extra = sorted(set(value) - {"not", "in"})
        if extra:
            raise ValueError(f"{where}: a value matcher has only 'not' and 'in', got also {', '.join(extra)}")
        if "in" in value and not isinstance(value["in"], list):
            raise ValueError(f"{where}: 'in' takes a list of values")
    return value


def _field_matchers(value: Any) -> Any:
    if isinstance(value, dict):
        for key, item in value.items():
            _value_matcher(item, str(key))
    return value


#: a field value: a literal, ``{not: v}`` (absent or different) or ``{in: [a, b]}`` (one of them)
FieldPatterns = Annotated[
    dict[str, Any],
    BeforeValidator(_field_matchers),
    WithJsonSchema({"type": "object", "additionalProperties": {"anyOf": [_VALUE_MATCHER_SCHEMA, {}]}}),
]


def _except(value: Any) -> Any:
    value = [value] if isinstance(value, dict) else value
    if isinstance(value, list):
        for item in value:
            _field_matchers(item)
    return value


class EventMatch(_Strict):
    """A domain event by ``type``, optionally with field values (compared as rendered in the trace).

    ``source`` (the emitter, e.g. ``controller-1``) and each ``fields`` value is a literal, ``{not: v}``
    or ``{in: [a, b]}``; ``except`` excludes the events matching all the fields of one of its mappings.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    type: str = Field(min_length=1)
    source: Annotated[
        str | dict[str, Any],
        BeforeValidator(lambda v: _value_matcher(v, "source")),
        WithJsonSchema({"anyOf": [{"type": "string"}, _VALUE_MATCHER_SCHEMA]}),
    ] | None = Field(default=None, description="the emitter (controller-0, pod/haproxy-1, ...): literal or matcher")
    fields: FieldPatterns = Field(default_factory=dict, description="dotted path -> literal, {not: v} or {in: [..]}")
    except_: Annotated[
        list[FieldPatterns],
        BeforeValidator(_except),
        WithJsonSchema({"anyOf": [{"type": "array", "items": {"type": "object"}}, {"type": "object"}]}),
    ] = Field(default_factory=list, alias="except",
              description="exclude events matching every field of one of these mappings (a mapping or a list)")


def _event_match(value: Any) -> Any:
    return {"type": value} if isinstance(value, str) else value


EventSpec = Annotated[EventMatch, BeforeValidator(_event_match), _Or({"type": "string"})]
EventList = Annotated[list[EventSpec], BeforeValidator(_as_list), _Or()]


class EventsExpectation(_Strict):
    """Domain events in the trace since ``since``: all ``present``, none ``absent``, ``in_order`` in order."""

    since: Literal["start", "previous_expect", "previous_step"] = "previous_expect"
    present: EventList = Field(default_factory=list)
    absent: EventList = Field(default_factory=list)
    in_order: EventList = Field(default_factory=list)
    count: dict[str, CountSpec] = Field(default_factory=dict, description="event type -> count check")


class MetricExpectation(Count):
    """A Prometheus sample of the leader: ``name`` with ``labels`` (a subset), value checked like a count."""

    name: str = Field(min_length=1)
    labels: dict[str, str] = Field(default_factory=dict)


class StatusExpectation(_Strict):
    """Fields of an object (``HAProxyCfg`` or ``HAProxyTemplateConfig``): dotted paths -> expected values.

    ``exists: false`` requires the object to be absent.
    """

    name: str | None = Field(default=None, description="object name; the single one when absent")
    namespace: str | None = None
    exists: bool = True
    fields: dict[str, Any] = Field(default_factory=dict, description="dotted path -> expected value")
    contains: dict[str, str] = Field(default_factory=dict, description="dotted path -> substring of the value")


class ConditionMatch(_Strict):
    """A ``status.conditions`` entry: its ``type``, and optionally ``status``, ``reason`` and a substring of
    its ``message``."""

    type: str = Field(min_length=1)
    status: Literal["True", "False", "Unknown"] | None = None
    reason: str | None = None
    message: str | None = Field(default=None, description="a substring of the condition's message")


class ObjectExpectation(StatusExpectation):
    """Any object by ``kind`` (+ ``apiVersion`` when the kind is not a common one): dotted ``fields``,
    ``contains``, ``absent_fields``, and ``conditions`` that must be in its ``status.conditions``
    (``absent_conditions``: condition types that must not be)."""

    kind: str = Field(min_length=1)
    apiVersion: str | None = None
    conditions: list[ConditionMatch] = Field(default_factory=list)
    absent_conditions: StrList = Field(default_factory=list, description="condition types that must not be set")
    absent_fields: StrList = Field(default_factory=list, description="dotted paths that must not be set")


_OBJECT_REF = r"^[A-Za-z][A-Za-z0-9]*/[a-z0-9.-]+(/[a-z0-9.-]+)?$"


class KubeEventMatch(_Strict):
    """A Kubernetes Event (core/v1 or events.k8s.io/v1): the ``object`` it is about (``Kind/namespace/name``
    or ``Kind/name``), ``reason``, ``type``, a substring of its message (``message``) or a regular
    expression (``regex``), the component that reported it (``source``). Absent keys match anything."""

    object: str | None = Field(default=None, pattern=_OBJECT_REF, description="Kind/namespace/name or Kind/name")
    reason: str | None = None
    type: Literal["Normal", "Warning"] | None = None
    message: str | None = Field(default=None, description="a substring of the message (core/v1) or note")
    regex: str | None = Field(default=None, description="searched in the message")
    source: str | None = Field(default=None, description="reportingController / source.component")

    @field_validator("regex")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"not a valid regular expression: {exc}") from None
        return value


KubeEventList = Annotated[list[KubeEventMatch], BeforeValidator(_as_list), _Or()]


class KubeEventsExpectation(_Strict):
    """Kubernetes Events in the cluster: every ``present`` pattern matches one, no ``absent`` pattern does.

    ``since: start`` looks at every Event there is; ``previous_expect`` at those created (or repeated, a
    higher ``count``) since the previous ``expect`` step."""

    since: Literal["start", "previous_expect"] = "start"
    present: KubeEventList = Field(default_factory=list)
    absent: KubeEventList = Field(default_factory=list)


class ConvergedExpectation(_Strict):
    """Every pod runs the config desired for the current objects, at most ``within`` virtual seconds
    after the last change (mutating step or fault clear); the runner advances time up to that bound."""

    within: Seconds = 60.0


class Expect(_Strict):
    """An ``expect`` step: one or more checks; with ``within``, retried while virtual time advances."""

    within: Seconds | None = Field(default=None, description="poll until true, at most this virtual time")
    config: ConfigExpectation | None = None
    map: AuxFileExpectation | None = None
    file: AuxFileExpectation | None = None
    reloads: CounterExpectation | None = None
    runtime_updates: CounterExpectation | None = None
    events: EventsExpectation | None = None
    metric: MetricExpectation | None = None
    haproxycfg: StatusExpectation | None = None
    config_status: StatusExpectation | None = None
    object: ObjectExpectation | None = None
    k8s_events: KubeEventsExpectation | None = None
    converged: ConvergedExpectation | None = None
    traffic: TrafficExpectation | None = None

    @model_validator(mode="after")
    def _something(self) -> Expect:
        if not self.checks():
            raise ValueError("an expect step needs at least one check (config, map, reloads, events, ...)")
        return self

    def checks(self) -> list[tuple[str, BaseModel]]:
        """The checks of this step in declaration order, as (kind, model)."""
        found: list[tuple[str, BaseModel]] = []
        for name in EXPECTATION_KINDS:
            value = getattr(self, name)
            if value is not None:
                found.append((name, value))
        return found


#: check order within one ``expect``: ``converged`` first, as it may advance time
EXPECTATION_KINDS: tuple[str, ...] = (
    "converged",
    "config",
    "map",
    "file",
    "reloads",
    "runtime_updates",
    "events",
    "metric",
    "haproxycfg",
    "config_status",
    "object",
    "k8s_events",
    "traffic",
)


# -- steps ---------------------------------------------------------------------------------------


class PatchSpec(ObjectRef):
    type: Literal["merge", "json", "strategic"] = "merge"
    patch: Any = Field(description="merge/strategic: a mapping; json: a list of operations")


class RestartSpec(_Strict):
    replica: int | None = Field(default=None, ge=0, description="controller replica index")
    pod: str | int | None = Field(default=None, description="HAProxy pod name or index")

    @model_validator(mode="after")
    def _one_target(self) -> RestartSpec:
        if (self.replica is None) == (self.pod is None):
            raise ValueError("give exactly one of 'replica' or 'pod'")
        return self


class SettleSpec(_Strict):
    timeout: Seconds = Field(default=300.0, description="fail if not idle within this virtual time")


def _settle(value: Any) -> Any:
    if value is None:
        return {}
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        return {"timeout": value}
    return value


class ApplyStep(_Strict):
    apply: Annotated[list[ObjectSource], BeforeValidator(_as_list), _Or()] = Field(min_length=1)
    expect_error: str | None = Field(
        default=None,
        description="the apply must be refused (e.g. by the validating webhook) with an error whose message "
                    "matches this regular expression (searched, not anchored); the step fails if it is accepted")

    @field_validator("expect_error")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"expect_error is not a valid regular expression: {exc}") from None
        return value


def _delete_tag(value: Any) -> str:
    if isinstance(value, dict):
        return "file" if "file" in value else "generate" if "generate" in value else "ref"
    return "file" if isinstance(value, FileRef) else "generate" if isinstance(value, GenerateSource) else "ref"


DeleteTarget = Annotated[
    Annotated[FileRef, Tag("file")] | Annotated[GenerateSource, Tag("generate")] | Annotated[ObjectRef, Tag("ref")],
    Discriminator(_delete_tag),
]


class DeleteStep(_Strict):
    delete: Annotated[list[DeleteTarget], BeforeValidator(_as_list), _Or()] = Field(min_length=1)


class PatchStep(_Strict):
    patch: PatchSpec


class AdvanceStep(_Strict):
    advance: Seconds


class SettleStep(_Strict):
    settle: Annotated[
        SettleSpec,
        BeforeValidator(_settle),
        _Or({"anyOf": [{"type": "null"}, {"type": "number", "minimum": 0},
                       {"type": "string", "pattern": DURATION_PATTERN}]}),
    ]


class FaultStep(_Strict):
    fault: FaultAction


class RestartStep(_Strict):
    restart: RestartSpec


class ExpectStep(_Strict):
    expect: Expect


class RepeatHead(_Strict):
    times: int = Field(ge=1, le=10_000)
    every: Seconds | None = Field(default=None, description="advance this much between iterations")
    var: str = Field(default="iteration", pattern=_IDENTIFIER, description="the name of the iteration number")


class RepeatSpec(RepeatHead):
    """``steps`` ``times`` times, expanded when the file loads. ``${iteration}`` (or the name ``var`` gives)
    is 0, 1, ... in the repeated steps; ``every`` is an ``advance`` inserted between iterations (so on
    ``sim``, where apply/patch/delete take no time, iteration k starts at k * every)."""

    steps: list[Step] = Field(min_length=1)


class RepeatStep(_Strict):
    repeat: RepeatSpec


STEP_KINDS: tuple[str, ...] = ("apply", "delete", "patch", "advance", "settle", "fault", "restart", "expect",
                               "repeat")


def _step_tag(value: Any) -> str | None:
    if isinstance(value, dict):
        keys = [k for k in value if k in STEP_KINDS]
        return keys[0] if len(keys) == 1 else None
    for kind in STEP_KINDS:
        if hasattr(value, kind):
            return kind
    return None


Step = Annotated[
    Annotated[ApplyStep, Tag("apply")]
    | Annotated[DeleteStep, Tag("delete")]
    | Annotated[PatchStep, Tag("patch")]
    | Annotated[AdvanceStep, Tag("advance")]
    | Annotated[SettleStep, Tag("settle")]
    | Annotated[FaultStep, Tag("fault")]
    | Annotated[RestartStep, Tag("restart")]
    | Annotated[ExpectStep, Tag("expect")]
    | Annotated[RepeatStep, Tag("repeat")],
    Discriminator(
        _step_tag,
        custom_error_type="unknown_step",
        custom_error_message="a step is a mapping with exactly one of: " + ", ".join(STEP_KINDS),
    ),
]


RepeatSpec.model_rebuild()


def step_kind(step: BaseModel) -> str:
    for kind in STEP_KINDS:
        if kind in type(step).model_fields:
            return kind
    raise TypeError(f"not a step: {step!r}")


# -- invariants and the scenario -----------------------------------------------------------------


class Invariants(_Strict):
    """Checked after every step; each can be switched off for a scenario that demonstrates a violation."""

    never_deploy_invalid: bool = Field(default=True, description="no config that failed validation is deployed")
    single_deployer: bool = Field(default=True, description="at most one replica deploys at a time")
    converge_after_faults: Seconds | None = Field(
        default=120.0, description="once faults are cleared and objects quiet, converge within this bound"
    )
    deployed_matches_render: bool = Field(
        default=True, description="after a settle, every pod runs the render of the current objects"
    )


MatrixValue = str | int | float | bool
BackendName = Literal["sim", "local", "cluster", "kind"]  # kind: an alias of cluster
BACKEND_NAMES: tuple[BackendName, ...] = ("sim", "local", "cluster", "kind")


class Scenario(_Strict):
    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.\-]+$")
    description: str = Field(min_length=1, description="what a user learns from this scenario")
    seed: int = 0
    setup: Setup
    steps: list[Step] = Field(min_length=1)
    invariants: Invariants = Field(default_factory=Invariants)
    matrix: dict[str, list[MatrixValue]] = Field(
        default_factory=dict, description="variables substituted as ${name}; one run per combination"
    )
    backends: list[BackendName] = Field(
        default_factory=lambda: list(BACKEND_NAMES), description="backends this scenario is meant for"
    )

    @field_validator("matrix")
    @classmethod
    def _matrix_values(cls, value: dict[str, list[MatrixValue]]) -> dict[str, list[MatrixValue]]:
        for key, values in value.items():
            if not values:
                raise ValueError(f"matrix variable {key!r} has no values")
        return value
