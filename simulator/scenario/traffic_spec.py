"""The ``traffic`` expectation: the request to send through a pod's haproxy and what its answer must show.

Request: ``scheme`` (``http``/``https``), ``port`` or ``listener`` (a frontend name; the frontend
serving ``host`` when neither is given), ``host`` (the ``Host`` header), ``sni`` (``https``; the host by
default), ``method``, ``path``, ``headers``, ``body``, ``repeat`` (that many requests, each on a new
connection), ``concurrency`` (how many of them are in flight at once: a burst; default 1, one after the
other). Checks, on every answer: ``status``, ``response_headers`` (per header: a string for
equality, or ``{equals, contains, regex, absent}``), ``location``, ``backend`` (the endpoint that
answered: its address, or its name: the ``targetRef`` or ``hostname`` of the EndpointSlice endpoint),
``backend_saw`` (method, path, host, headers and the protocol haproxy spoke: ``http/1.1``, ``h2c``,
``https``, ``h2``, as the backend received them), ``certificate`` (``https``: ``subject``, ``issuer``,
``sans``, ``serial``, ``fingerprint``, ``fingerprint_of`` a ``kubernetes.io/tls`` Secret); over all answers:
``backends`` (the share each backend served), ``statuses`` (how many answers had each status: a number, or
``{min, max}``; a status not listed must not occur).

A share is written ``0.8 +- 0.05`` (or ``0.8 ± 0.05``, ``80% +- 5%``, ``{share: 0.8, tolerance: 0.05}``);
a bare number is an exact share.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, model_validator

from .schema_types import Or, StrList
from .schema_types import Strict as _Strict


class HeaderCheck(_Strict):
    """One header: ``equals`` a value, ``contains`` a substring, matches ``regex``, or is ``absent``."""

    equals: str | None = None
    contains: str | None = None
    regex: str | None = None
    absent: bool = False

    @model_validator(mode="after")
    def _one_kind(self) -> HeaderCheck:
        given = [self.equals is not None, self.contains is not None, self.regex is not None, self.absent]
        if sum(given) == 0:
            raise ValueError("give one of 'equals', 'contains', 'regex' or 'absent: true'")
        if self.absent and sum(given) > 1:
            raise ValueError("'absent: true' cannot be combined with a value check")
        if self.regex is not None:
            try:
                re.compile(self.regex)
            except re.error as exc:
                raise ValueError(f"not a valid regular expression: {exc}") from None
        return self


def _header_check(value: Any) -> Any:
    return {"equals": value} if isinstance(value, str) else value


HeaderSpec = Annotated[HeaderCheck, BeforeValidator(_header_check), Or({"type": "string"})]


class SecretRef(_Strict):
    name: str = Field(min_length=1)
    namespace: str = "default"


def _secret_ref(value: Any) -> Any:
    if isinstance(value, str):
        namespace, _, name = value.rpartition("/")
        return {"name": name, "namespace": namespace or "default"}
    return value


class CertificateCheck(_Strict):
    """The certificate the server presented (``https`` only)."""

    subject: str | None = Field(default=None, description="substring of the RFC 4514 subject, e.g. CN=shop.example")
    issuer: str | None = Field(default=None, description="substring of the RFC 4514 issuer")
    sans: StrList = Field(default_factory=list, description="DNS names that must all be among its SANs")
    serial: int | None = None
    fingerprint: str | None = Field(default=None, description="SHA-256 of the DER, hex (colons optional)")
    fingerprint_of: Annotated[SecretRef, BeforeValidator(_secret_ref), Or({"type": "string"})] | None = \
        Field(default=None, description="namespace/name of the kubernetes.io/tls Secret whose tls.crt it must be")

    @model_validator(mode="after")
    def _something(self) -> CertificateCheck:
        if not self.model_fields_set - {"sans"} and not self.sans:
            raise ValueError("give at least one of subject, issuer, sans, serial, fingerprint, fingerprint_of")
        return self


class BackendSaw(_Strict):
    """The request as the backend received it (what haproxy forwarded)."""

    protocol: Literal["http/1.1", "h2c", "https", "h2"] | None = Field(
        default=None, description="how haproxy spoke to it: HTTP/1.1 or HTTP/2, cleartext or over TLS")
    method: str | None = None
    path: str | None = None
    host: str | None = None
    headers: dict[str, HeaderSpec] = Field(default_factory=dict)


_SHARE = re.compile(r"^\s*(?P<share>[0-9.]+)\s*(?P<pct>%?)\s*(?:(?:\+-|±|\+/-)\s*(?P<tol>[0-9.]+)\s*(?P<tpct>%?))?\s*$")


class Share(_Strict):
    share: float = Field(ge=0, le=1)
    tolerance: float = Field(default=0.0, ge=0, le=1)


def _share(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("a share is a number, 'share +- tolerance' or {share, tolerance}")
    if isinstance(value, int | float):
        return {"share": value}
    if isinstance(value, str):
        m = _SHARE.match(value)
        if m is None:
            raise ValueError(f"cannot read share {value!r}: write e.g. '0.8 +- 0.05' or '80% +- 5%'")
        share = float(m["share"]) / (100 if m["pct"] else 1)
        tolerance = float(m["tol"] or 0) / (100 if m["tpct"] or (m["pct"] and m["tol"]) else 1)
        return {"share": share, "tolerance": tolerance}
    return value


class Tally(_Strict):
    """How many answers: at least ``min``, at most ``max``."""

    min: int | None = Field(default=None, ge=0)
    max: int | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _something(self) -> Tally:
        if self.min is None and self.max is None:
            raise ValueError("give 'min', 'max' or both (a bare number is an exact count)")
        return self

    def holds(self, count: int) -> bool:
        return (self.min is None or count >= self.min) and (self.max is None or count <= self.max)

    def describe(self) -> str:
        if self.min == self.max:
            return str(self.min)
        return " and ".join(p for p in (f">= {self.min}" if self.min is not None else "",
                                        f"<= {self.max}" if self.max is not None else "") if p)


def _tally(value: Any) -> Any:
    return {"min": value, "max": value} if isinstance(value, int) and not isinstance(value, bool) else value


TallySpec = Annotated[Tally, BeforeValidator(_tally), Or({"type": "integer", "minimum": 0})]


ShareSpec = Annotated[Share, BeforeValidator(_share),
                      Or({"anyOf": [{"type": "number", "minimum": 0, "maximum": 1},
                                    {"type": "string", "pattern": _SHARE.pattern}]})]


class TrafficExpectation(_Strict):
    """Requests through a pod's haproxy (needs real HAProxy: not applicable on ``sim``). See the module text."""

    pod: str | int = 0
    scheme: Literal["http", "https"] = "http"
    port: int | None = Field(default=None, ge=1, le=65535, description="the haproxy port (as in the config)")
    listener: str | None = Field(default=None, description="the frontend to send to, by name")
    host: str = "localhost"
    sni: str | None = Field(default=None, description="https: the TLS server name (default: host; '' for none)")
    path: str = "/"
    method: str = "GET"
    headers: dict[str, str] = Field(default_factory=dict, description="request headers")
    body: str | None = Field(default=None, description="request body")
    repeat: int = Field(default=1, ge=1, le=1000, description="this many requests, each on a new connection")
    concurrency: int = Field(default=1, ge=1, le=1000,
                             description="how many of the requests are in flight at once (1: one after the other)")
    status: int | None = None
    statuses: dict[int, TallySpec] = Field(default_factory=dict,
                                           description="status -> how many answers had it; others must not occur")
    response_headers: dict[str, HeaderSpec] = Field(default_factory=dict)
    location: str | None = Field(default=None, description="the Location header (redirects)")
    backend: str | None = Field(default=None, description="the endpoint that answered: address or name")
    backend_saw: BackendSaw | None = None
    certificate: CertificateCheck | None = None
    backends: dict[str, ShareSpec] = Field(default_factory=dict,
                                           description="endpoint (address or name) -> share of the answers")

    @model_validator(mode="after")
    def _consistent(self) -> TrafficExpectation:
        if self.port is not None and self.listener is not None:
            raise ValueError("give 'port' or 'listener', not both")
        if self.scheme == "http" and (self.sni is not None or self.certificate is not None):
            raise ValueError("'sni' and 'certificate' need scheme: https")
        if self.backends and self.repeat < 2:
            raise ValueError("'backends' checks a distribution: give 'repeat' (e.g. repeat: 100)")
        if self.concurrency > self.repeat:
            raise ValueError("'concurrency' is how many of the 'repeat' requests are in flight at once: "
                             "give repeat >= concurrency")
        if self.statuses and self.status is not None:
            raise ValueError("give 'status' (every answer) or 'statuses' (how many of each), not both")
        return self

    @property
    def server_name(self) -> str | None:
        """The SNI to send: ``sni`` as given ('' for none), else the host."""
        if self.scheme != "https":
            return None
        if self.sni is not None:
            return self.sni or None
        return self.host

    def label(self) -> str:
        scheme = "" if self.scheme == "http" else "https://"
        return f"traffic[{self.method} {scheme}{self.host}{self.path}]"
