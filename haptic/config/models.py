"""Pydantic models of the ``HAProxyTemplateConfig`` custom resource (``haproxy-haptic.org/v1alpha1``).

Field names are snake_case in Python and camelCase on the wire (``populate_by_name=True``, dump
with ``by_alias=True``). Objects the CRD describes structurally forbid unknown fields; free-form
objects (``extraContext``, fixtures) accept anything JSON-shaped.

Defaults follow the original controller's **code** (``pkg/core/config/defaults.go``,
``converter.go``) where its docs disagree:

* leader election lease/renew/retry are 15s/10s/2s (docs say 60s/15s/5s);
* except ``dataplane.sslCertsDir``: ``/etc/haproxy/ssl``, the real dataplaneapi's default
  storage directory for certificates (its ``ssl_certs_dir``), which the original's docs and chart
  use too; its code's ``/etc/haproxy/certs`` matched no Dataplane API, so every TLS config that
  kept the default was refused by the pod;
* ``configPublishing.compressionThreshold: 0`` means the 1 MiB default, as the converter does
  (the CRD doc says 0 disables compression);
* ``dataplane.rawPushThreshold: 0`` means the default of 100, as ``SetDefaults`` does.

``load_config`` is the entry point for untrusted input; it raises ``ConfigError`` naming the
object (``namespace/name`` when known) and the field path. The credentials Secret and the
published ``HAProxyCfg`` models live in ``credentials`` and ``haproxycfg`` and are re-exported here.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, ValidationError, field_validator, model_validator
from pydantic.alias_generators import to_camel

from haptic.config.credentials import Credentials, load_credentials
from haptic.config.durations import Duration
from haptic.config.errors import ConfigError, FieldProblem
from haptic.config.haproxycfg import (
    AuxiliaryFileRef,
    AuxiliaryFiles,
    HAProxyCfg,
    HAProxyCfgMetadata,
    HAProxyCfgSpec,
    HAProxyCfgStatus,
    OperationSummary,
    PodDeploymentStatus,
)
from haptic.config.meta import CamelModel, Condition, ObjectMeta
from haptic.core.linear_regex import PatternError, compile_pattern
from haptic.k8s.jsonpath import JSONPathError, compile_jsonpath
from haptic.k8s.selectors import LabelSelector, SelectorError, parse_field_selector, parse_label_selector
from haptic.k8s.store import ResourceStore
from haptic.names import HAPROXY_PODS

__all__ = [
    "HAPROXY_PODS_INDEX_BY",
    "KIND",
    "AuxiliaryFileRef",
    "AuxiliaryFiles",
    "Condition",
    "ConfigError",
    "ConfigPublishing",
    "ControllerSettings",
    "Credentials",
    "CredentialsSecretRef",
    "DataplaneSettings",
    "FieldProblem",
    "HAProxyCfg",
    "HAProxyCfgMetadata",
    "HAProxyCfgSpec",
    "HAProxyCfgStatus",
    "HAProxyTemplateConfig",
    "HAProxyTemplateConfigSpec",
    "HAProxyTemplateConfigStatus",
    "HttpResourceFixture",
    "LeaderElection",
    "LoggingSettings",
    "ObjectMeta",
    "OperationSummary",
    "PodDeploymentStatus",
    "PodSelector",
    "PostProcessing",
    "RegexReplaceParams",
    "TemplateFile",
    "TemplateSnippet",
    "TemplatingSettings",
    "ValidationAssertion",
    "ValidationTest",
    "WatchedResource",
    "load_config",
    "load_credentials",
]

KIND = "HAProxyTemplateConfig"
HAPROXY_PODS_INDEX_BY = ("metadata.namespace", "metadata.name")

DEFAULT_COMPRESSION_THRESHOLD = 1_048_576
DEFAULT_RAW_PUSH_THRESHOLD = 100


def _check_jsonpath(expression: str) -> str:
    try:
        compile_jsonpath(expression)
    except JSONPathError as exc:
        raise ValueError(str(exc)) from None
    return expression


def _check_removable_jsonpath(expression: str) -> str:
    try:
        path = compile_jsonpath(expression)
    except JSONPathError as exc:
        raise ValueError(str(exc)) from None
    if not path.removable:
        raise ValueError(f"JSONPath {expression!r} uses recursive descent, which cannot remove fields")
    return expression


JSONPathStr = Annotated[str, AfterValidator(_check_jsonpath)]
RemovableJSONPathStr = Annotated[str, AfterValidator(_check_removable_jsonpath)]
NonEmptyStr = Annotated[str, Field(min_length=1)]


class CredentialsSecretRef(CamelModel):
    """The Secret holding ``dataplane_username`` / ``dataplane_password``."""

    name: NonEmptyStr
    namespace: str | None = None
    """Defaults to the namespace of the HAProxyTemplateConfig."""


class PodSelector(CamelModel):
    """Selects the HAProxy pods to configure (in the controller's namespace)."""

    match_labels: dict[str, str] = Field(min_length=1)

    @field_validator("match_labels")
    @classmethod
    def _non_empty_labels(cls, value: dict[str, str]) -> dict[str, str]:
        for key, label in value.items():
            if not key or not label:
                raise ValueError(f"label {key!r} must have a non-empty key and value")
        # Reuse the selector grammar so that keys/values the API would reject fail here.
        try:
            parse_label_selector(",".join(f"{k}={v}" for k, v in sorted(value.items())))
        except SelectorError as exc:
            raise ValueError(str(exc)) from None
        return value

    @property
    def label_selector(self) -> str:
        """The selector in the API's string syntax (``app=haproxy,tier=edge``, keys sorted)."""
        return str(LabelSelector.from_match_labels(self.match_labels))


class LeaderElection(CamelModel):
    """Kubernetes Lease based leader election. Defaults are the original code's (docs say 60s/15s/5s)."""

    enabled: bool = True
    lease_name: NonEmptyStr = "haptic-leader"
    lease_duration: Duration = timedelta(seconds=15)
    renew_deadline: Duration = timedelta(seconds=10)
    retry_period: Duration = timedelta(seconds=2)


class ConfigPublishing(CamelModel):
    """How the rendered configuration is published back as HAProxyCfg resources."""

    compression_threshold: int = Field(default=DEFAULT_COMPRESSION_THRESHOLD, ge=0)
    """Content above this many bytes is stored zstd-compressed; 0 means the 1 MiB default (as the code)."""

    @field_validator("compression_threshold")
    @classmethod
    def _zero_is_default(cls, value: int) -> int:
        return value or DEFAULT_COMPRESSION_THRESHOLD


class ControllerSettings(CamelModel):
    leader_election: LeaderElection = Field(default_factory=LeaderElection)
    config_publishing: ConfigPublishing = Field(default_factory=ConfigPublishing)


_LOG_LEVELS = ("", "TRACE", "DEBUG", "INFO", "WARN", "WARNING", "ERROR")


class LoggingSettings(CamelModel):
    level: str = ""
    """TRACE, DEBUG, INFO, WARN(ING) or ERROR in any case. As in the original, a level set here wins and
    is applied whenever a config is validated; empty means the process level (``--log-level``, else the
    ``LOG_LEVEL`` env var, else INFO)."""

    @field_validator("level")
    @classmethod
    def _known_level(cls, value: str) -> str:
        upper = value.strip().upper()
        if upper not in _LOG_LEVELS:
            raise ValueError(f"unknown log level {value!r} (use TRACE, DEBUG, INFO, WARN or ERROR)")
        return upper


class DataplaneSettings(CamelModel):
    """How the controller reaches the Dataplane API of every HAProxy pod, and where files live there."""

    port: int = Field(default=5555, ge=1, le=65535)
    min_deployment_interval: Duration = timedelta(seconds=2)
    drift_prevention_interval: Duration = timedelta(seconds=60)
    deployment_timeout: Duration = timedelta(seconds=30)
    maps_dir: NonEmptyStr = "/etc/haproxy/maps"
    ssl_certs_dir: NonEmptyStr = "/etc/haproxy/ssl"
    """The Dataplane API's certificate storage directory (its ``ssl_certs_dir``, default ``/etc/haproxy/ssl``)."""
    general_storage_dir: NonEmptyStr = "/etc/haproxy/general"
    config_file: NonEmptyStr = "/etc/haproxy/haproxy.cfg"
    max_parallel: int = Field(default=0, ge=0)
    """HAProxy pods written at once by a deployment; 0 means all at once."""
    raw_push_threshold: int = Field(default=DEFAULT_RAW_PUSH_THRESHOLD, ge=0)
    """Above this many planned operations the whole config is pushed raw; 0 means the default 100. At or
    below it, a change made only of server creates, updates and deletes goes as those operations in one
    Dataplane transaction; any other structural change is one raw push whatever its size."""

    @field_validator("raw_push_threshold")
    @classmethod
    def _zero_is_default(cls, value: int) -> int:
        return value or DEFAULT_RAW_PUSH_THRESHOLD


TEMPLATE_ENGINE = "jinja2"


def _not_supported_yet(field: str, hint: str) -> ValueError:
    # One wording for every field the original has and we do not implement yet, so that a config
    # written for the original fails loudly instead of being accepted and silently ignored.
    return ValueError(f"{field} is not supported yet: {hint}")


class TemplatingSettings(CamelModel):
    engine: str = TEMPLATE_ENGINE
    """``jinja2`` (the only engine here). The original's ``scriggo`` templates are a different language."""
    extra_context: dict[str, Any] = Field(default_factory=dict)
    """Free-form values exposed to templates as ``extraContext``."""

    @field_validator("engine")
    @classmethod
    def _known_engine(cls, value: str) -> str:
        if value == TEMPLATE_ENGINE:
            return value
        if value.strip().lower() == "scriggo":
            raise ValueError(
                "engine 'scriggo' is not supported: this controller renders Jinja2 templates; port the "
                "templates to Jinja2 and set engine to 'jinja2' (or omit it)"
            )
        raise ValueError(f"unknown template engine {value!r} (the only engine is {TEMPLATE_ENGINE!r})")


class WatchedResource(CamelModel):
    """One Kubernetes resource type to watch and index; templates see it as ``resources.<name>``."""

    api_version: NonEmptyStr
    resources: NonEmptyStr
    """Plural resource name, e.g. ``ingresses``."""
    index_by: list[JSONPathStr] = Field(min_length=1)
    """JSONPath keys of the composite index, in lookup order (``fetch`` accepts a prefix)."""
    label_selector: str | None = None
    """Server-side label selector in the API's string syntax."""
    field_selector: str | None = None
    """Client-side ``jsonpath=value`` filter; objects without the field do not match."""
    namespace_selector: str | None = None
    """Label selector on Namespaces: only objects in the namespaces it matches are watched."""
    store: Literal["full", "on-demand"] = "full"
    """Only ``full`` acts; ``on-demand`` (fetch objects on access) is refused as not supported yet."""
    enable_validation_webhook: bool = False

    @field_validator("namespace_selector")
    @classmethod
    def _namespace_selector(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                parse_label_selector(value)
            except SelectorError as exc:
                raise ValueError(f"invalid namespace selector: {exc}") from None
        return value

    @field_validator("store")
    @classmethod
    def _store(cls, value: str) -> str:
        if value != "full":
            raise _not_supported_yet(
                f"store {value!r}", "every watched object is kept in memory; use store 'full' (or omit it)"
            )
        return value

    @field_validator("label_selector")
    @classmethod
    def _label_selector(cls, value: str | None) -> str | None:
        try:
            parse_label_selector(value)
        except SelectorError as exc:
            raise ValueError(str(exc)) from None
        return value

    @field_validator("field_selector")
    @classmethod
    def _field_selector(cls, value: str | None) -> str | None:
        try:
            parse_field_selector(value)
        except SelectorError as exc:
            raise ValueError(str(exc)) from None
        return value


class TemplateSnippet(CamelModel):
    template: NonEmptyStr


def _linear_pattern(value: str, field: str = "", *, multiline: bool = False) -> str:
    """``value`` when RE2 (linear time) can run it; else a ValueError naming the field and the reason."""
    try:
        compile_pattern(value, multiline=multiline)
    except PatternError as exc:
        where = f"{field}: " if field else ""
        raise ValueError(f"{where}{exc}") from None
    return value


class RegexReplaceParams(CamelModel):
    pattern: NonEmptyStr
    """Regular expression applied to every line of the rendered output."""
    replace: str
    """Replacement (Go syntax, as in the original: ``$1`` / ``${name}`` group references, ``$$`` a dollar)."""

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        return _linear_pattern(value)


class PostProcessing(CamelModel):
    """A step applied to rendered output, in order. Only ``regex_replace`` exists."""

    type: Literal["regex_replace"]
    params: RegexReplaceParams


class TemplateFile(CamelModel):
    """A template producing one file (haproxy.cfg, a map, a general file, a certificate)."""

    template: NonEmptyStr
    post_processing: list[PostProcessing] = Field(default_factory=list)


AssertionType = Literal[
    "haproxy_valid", "contains", "not_contains", "match_count", "equals", "jsonpath", "match_order", "deterministic"
]


class ValidationAssertion(CamelModel):
    type: AssertionType
    description: str = ""
    target: str = ""
    """``haproxy.cfg`` (default), ``map:<name>``, ``file:<name>``, ``cert:<name>``, ``crt-list:<name>``,
    ``rendering_error``."""
    pattern: str = ""
    # Authors write match_count's integer unquoted: the CRD must let the API server store an int or a string.
    expected: str = Field("", json_schema_extra={"x-kubernetes-int-or-string": True})
    jsonpath: str = ""
    patterns: list[str] = Field(default_factory=list)

    @field_validator("expected", mode="before")
    @classmethod
    def _scalar_to_text(cls, value: Any) -> Any:
        # match_count takes an integer; YAML authors write it unquoted.
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, int | float):
            return str(value)
        return value

    @model_validator(mode="after")
    def _needs(self) -> ValidationAssertion:
        needed = {
            "contains": "pattern",
            "not_contains": "pattern",
            "match_count": "pattern",
            "jsonpath": "jsonpath",
            "match_order": "patterns",
        }.get(self.type)
        if needed and not getattr(self, needed):
            raise ValueError(f"assertion type {self.type!r} needs {to_camel(needed)!r}")
        if self.type == "match_count":
            try:
                int(self.expected)
            except ValueError:
                raise ValueError(f"match_count needs an integer 'expected', got {self.expected!r}") from None
        if self.jsonpath:
            _check_jsonpath(self.jsonpath)
        # Run multi-line (``^``/``$`` at every line) on RE2, like the validationTests runner runs them.
        if self.pattern:
            _linear_pattern(self.pattern, "pattern", multiline=True)
        for i, pattern in enumerate(self.patterns):
            _linear_pattern(pattern, f"patterns[{i}]", multiline=True)
        return self


class HttpResourceFixture(CamelModel):
    """A mocked answer for a URL fetched by templates during a validation test."""

    url: NonEmptyStr
    content: str


class ValidationTest(CamelModel):
    """An embedded test: fixtures in, assertions over the rendered output. ``_global`` merges into all."""

    description: str = ""
    fixtures: dict[str, list[dict[str, Any]]]
    """Resource name (as in ``watchedResources``, or ``haproxy-pods``) -> objects."""
    http_resources: list[HttpResourceFixture] = Field(default_factory=list)
    """What ``http.fetch`` returns in this test, per URL (merged over ``_global``'s); unmocked URLs fail."""
    current_config: str | None = None
    """A deployed haproxy.cfg, for tests of slot preservation."""
    extra_context: dict[str, Any] | None = None
    """Replaces ``templatingSettings.extraContext`` for this test."""
    assertions: list[ValidationAssertion] = Field(min_length=1)

    @field_validator("http_resources")
    @classmethod
    def _http_resources(cls, value: list[HttpResourceFixture]) -> list[HttpResourceFixture]:
        urls = [r.url for r in value]
        duplicates = sorted({u for u in urls if urls.count(u) > 1})
        if duplicates:
            raise ValueError(f"httpResources: URL(s) given twice: {', '.join(duplicates)}")
        return value


class HAProxyTemplateConfigSpec(CamelModel):
    credentials_secret_ref: CredentialsSecretRef
    pod_selector: PodSelector
    controller: ControllerSettings = Field(default_factory=ControllerSettings)
    logging: LoggingSettings = Field(default_factory=LoggingSettings)
    dataplane: DataplaneSettings = Field(default_factory=DataplaneSettings)
    templating_settings: TemplatingSettings = Field(default_factory=TemplatingSettings)
    watched_resources_ignore_fields: list[RemovableJSONPathStr] = Field(default_factory=list)
    """JSONPaths stripped from every watched object before it is stored (e.g. ``metadata.managedFields``)."""
    watched_resources: dict[str, WatchedResource] = Field(min_length=1)
    template_snippets: dict[str, TemplateSnippet] = Field(default_factory=dict)
    maps: dict[str, TemplateFile] = Field(default_factory=dict)
    files: dict[str, TemplateFile] = Field(default_factory=dict)
    ssl_certificates: dict[str, TemplateFile] = Field(default_factory=dict)
    haproxy_config: TemplateFile
    validation_tests: dict[str, ValidationTest] = Field(default_factory=dict)

    @field_validator("watched_resources")
    @classmethod
    def _reserved_names(cls, value: dict[str, WatchedResource]) -> dict[str, WatchedResource]:
        if HAPROXY_PODS in value:
            raise ValueError(f"{HAPROXY_PODS!r} is reserved for the HAProxy pods the controller watches")
        for name in value:
            if not name:
                raise ValueError("watched resource names must not be empty")
        return value

    def make_store(self, name: str) -> ResourceStore:
        """An empty store for watched resource ``name`` (or ``haproxy-pods``), with its index, selector and
        the global ignore fields."""
        if name == HAPROXY_PODS:
            return ResourceStore(name, list(HAPROXY_PODS_INDEX_BY), ignore_fields=self.watched_resources_ignore_fields)
        watched = self.watched_resources[name]
        return ResourceStore(
            name,
            watched.index_by,
            field_selector=watched.field_selector,
            ignore_fields=self.watched_resources_ignore_fields,
        )

    def make_stores(self) -> dict[str, ResourceStore]:
        """One empty store per watched resource plus ``haproxy-pods``, keyed by name (sorted)."""
        names = sorted([*self.watched_resources, HAPROXY_PODS])
        return {name: self.make_store(name) for name in names}


class HAProxyTemplateConfigStatus(CamelModel):
    observed_generation: int | None = None
    last_validated: datetime | None = None
    validation_status: Literal["Valid", "Invalid", "Unknown"] | None = None
    validation_message: str | None = None
    validation_errors: list[str] = Field(default_factory=list)
    conditions: list[Condition] = Field(default_factory=list)


class HAProxyTemplateConfig(CamelModel):
    """The whole custom resource (short names ``htplcfg``, ``haptpl``)."""

    api_version: Literal["haproxy-haptic.org/v1alpha1"] = "haproxy-haptic.org/v1alpha1"
    kind: Literal["HAProxyTemplateConfig"] = "HAProxyTemplateConfig"
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: HAProxyTemplateConfigSpec
    status: HAProxyTemplateConfigStatus | None = None

    def to_json(self) -> dict[str, Any]:
        """The wire form: camelCase, unset optionals omitted."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


def _object_name(obj: Mapping[str, Any]) -> str:
    metadata = obj.get("metadata")
    if isinstance(metadata, Mapping):
        name = metadata.get("name")
        namespace = metadata.get("namespace")
        if name:
            return f"{KIND} {namespace}/{name}" if namespace else f"{KIND} {name}"
    return KIND


def load_config(obj: Mapping[str, Any], name: str | None = None) -> HAProxyTemplateConfig:
    """Validates a full ``HAProxyTemplateConfig`` object or a bare spec (no ``spec``/``apiVersion``/``kind``).

    ``name`` overrides the object name used in errors (e.g. a file name for a bare spec).
    Raises ``ConfigError`` listing each bad field as ``spec.<path>``. An unreadable ``status`` never
    rejects the object (the status is ours to rewrite); it is dropped instead.
    """
    if not isinstance(obj, Mapping):
        raise ConfigError(name or KIND, [FieldProblem("", f"expected a mapping, got {type(obj).__name__}")])
    is_full = any(key in obj for key in ("spec", "apiVersion", "kind"))
    object_name = name or _object_name(obj)
    try:
        if not is_full:
            return HAProxyTemplateConfig(spec=HAProxyTemplateConfigSpec.model_validate(dict(obj)))
        body = {k: v for k, v in obj.items() if k != "status"}
        config = HAProxyTemplateConfig.model_validate(body)
    except ValidationError as exc:
        raise ConfigError.from_validation_error(object_name, exc, prefix="" if is_full else "spec") from None
    if obj.get("status") is not None:
        try:
            config.status = HAProxyTemplateConfigStatus.model_validate(obj["status"])
        except ValidationError:
            config.status = None
    return config
