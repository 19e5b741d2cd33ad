"""The Gateway API's standard-channel CRDs (gateway.networking.k8s.io, bundle v1.2), built from Python.

``gateway_api_crds()`` gives the CustomResourceDefinitions of GatewayClass, Gateway, HTTPRoute and
GRPCRoute (``v1``, also served as ``v1beta1`` where the upstream bundle serves it) and ReferenceGrant
(``v1beta1``), with structural ``openAPIV3Schema``s: the field types, enums, bounds, patterns,
defaults and the CEL rules (``x-kubernetes-validations``) the upstream bundle declares for the fields
a controller reads, so the fake API refuses what a cluster refuses and defaults what a cluster defaults.
Written from the Gateway API specification (gateway-api.sigs.k8s.io/reference/spec); descriptions
are short. Fields outside the standard channel (experimental) are not served: they are pruned, as
a cluster with the standard bundle prunes them. Pure data: imports nothing of the store.
"""

from __future__ import annotations

import copy
from typing import Any

from haptic.names import LIBRARIES_ANNOTATION

JSON = dict[str, Any]

GROUP = "gateway.networking.k8s.io"
BUNDLE_VERSION = "v1.2.1"
CHANNEL = "standard"

_DNS1123_SUBDOMAIN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
_HEADER_NAME = r"^[A-Za-z0-9!#$%&'*+\-.^_\x60|~]+$"
_DURATION = r"^([0-9]{1,5}(h|m|s|ms)){1,4}$"


def _s(description: str = "", /, **more: Any) -> JSON:
    return {"type": "string", **({"description": description} if description else {}), **more}


def _obj(properties: JSON, required: list[str] | None = None, description: str = "", /, **more: Any) -> JSON:
    out: JSON = {"type": "object", "properties": properties}
    if required:
        out["required"] = required
    if description:
        out["description"] = description
    out.update(more)
    return out


def _arr(items: JSON, description: str = "", /, **more: Any) -> JSON:
    return {"type": "array", "items": items, **({"description": description} if description else {}), **more}


def _group(default: str | None = None) -> JSON:
    out = _s("API group of the referent (\"\": the core group)", maxLength=253,
             pattern=r"^$|^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
    if default is not None:
        out["default"] = default
    return out


def _kind(default: str | None = None) -> JSON:
    out = _s("kind of the referent", maxLength=63, minLength=1, pattern=r"^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$")
    if default is not None:
        out["default"] = default
    return out


def _name() -> JSON:
    return _s("name of the referent", maxLength=253, minLength=1)


def _namespace() -> JSON:
    return _s("namespace of the referent", maxLength=63, minLength=1, pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def _section_name() -> JSON:
    return _s("name of a section (a Gateway listener)", maxLength=253, minLength=1, pattern=_DNS1123_SUBDOMAIN)


def _port() -> JSON:
    return {"type": "integer", "format": "int32", "minimum": 1, "maximum": 65535}


def _hostname(precise: bool = False) -> JSON:
    wildcard = r"^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
    pattern = _DNS1123_SUBDOMAIN if precise else wildcard
    return _s("a DNS name" + ("" if precise else ", optionally with a leading \"*.\" wildcard label"),
              maxLength=253, minLength=1, pattern=pattern)


def _conditions(defaults: list[JSON] | None = None) -> JSON:
    condition = _obj(
        {
            "type": _s("type of condition in CamelCase", maxLength=316,
                       pattern=r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
                               r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"),
            "status": _s("True, False or Unknown", enum=["True", "False", "Unknown"]),
            "observedGeneration": {"type": "integer", "format": "int64", "minimum": 0},
            "lastTransitionTime": _s("when the condition last changed status", format="date-time"),
            "reason": _s("CamelCase reason of the last transition", maxLength=1024, minLength=1,
                         pattern=r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$"),
            "message": _s("human-readable detail", maxLength=32768),
        },
        ["lastTransitionTime", "message", "reason", "status", "type"],
    )
    out = _arr(condition, "the current state of the object", maxItems=8,
               **{"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"]})
    if defaults is not None:
        out["default"] = defaults
    return out


def _pending(*types: str) -> list[JSON]:
    return [{"type": t, "status": "Unknown", "reason": "Pending", "message": "Waiting for controller",
             "lastTransitionTime": "1970-01-01T00:00:00Z"} for t in types]


def _label_selector() -> JSON:
    requirement = _obj({"key": _s(), "operator": _s(), "values": _arr(_s(), **{"x-kubernetes-list-type": "atomic"})},
                       ["key", "operator"])
    return _obj({"matchExpressions": _arr(requirement, **{"x-kubernetes-list-type": "atomic"}),
                 "matchLabels": {"type": "object", "additionalProperties": _s()}},
                description="a label selector", **{"x-kubernetes-map-type": "atomic"})


def _parent_ref() -> JSON:
    return _obj({"group": _group(GROUP), "kind": _kind("Gateway"), "namespace": _namespace(), "name": _name(),
                 "sectionName": _section_name(), "port": _port()}, ["name"],
                "a resource (usually a Gateway) the Route wants to be attached to")


def _backend_ref(weighted: bool = True, filters: JSON | None = None) -> JSON:
    props: JSON = {"group": _group(""), "kind": _kind("Service"), "name": _name(), "namespace": _namespace(),
                   "port": _port()}
    if weighted:
        props["weight"] = {"type": "integer", "format": "int32", "default": 1, "minimum": 0, "maximum": 1000000}
    if filters is not None:
        props["filters"] = filters
    return _obj(props, ["name"], "a backend (a Service by default) to forward requests to",
                **{"x-kubernetes-validations": [
                    {"message": "Must have port for Service reference",
                     "rule": "(size(self.group) == 0 && self.kind == 'Service') ? has(self.port) : true"}]})


def _header_modifier() -> JSON:
    header = _obj({"name": _s(maxLength=256, minLength=1, pattern=_HEADER_NAME),
                   "value": _s(maxLength=4096, minLength=1)}, ["name", "value"])
    listed = _arr(header, maxItems=16, **{"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"]})
    return _obj({"set": copy.deepcopy(listed), "add": copy.deepcopy(listed),
                 "remove": _arr(_s(), maxItems=16, **{"x-kubernetes-list-type": "set"})},
                description="headers to set, add and remove")


def _path_modifier() -> JSON:
    return _obj(
        {"type": _s(enum=["ReplaceFullPath", "ReplacePrefixMatch"]),
         "replaceFullPath": _s(maxLength=1024), "replacePrefixMatch": _s(maxLength=1024)},
        ["type"], "how to modify the request path",
        **{"x-kubernetes-validations": [
            {"message": "replaceFullPath must be specified when type is set to 'ReplaceFullPath'",
             "rule": "self.type == 'ReplaceFullPath' ? has(self.replaceFullPath) : true"},
            {"message": "type must be 'ReplaceFullPath' when replaceFullPath is set",
             "rule": "has(self.replaceFullPath) ? self.type == 'ReplaceFullPath' : true"},
            {"message": "replacePrefixMatch must be specified when type is set to 'ReplacePrefixMatch'",
             "rule": "self.type == 'ReplacePrefixMatch' ? has(self.replacePrefixMatch) : true"},
            {"message": "type must be 'ReplacePrefixMatch' when replacePrefixMatch is set",
             "rule": "has(self.replacePrefixMatch) ? self.type == 'ReplacePrefixMatch' : true"}]})


_FILTER_FIELDS = {"RequestHeaderModifier": "requestHeaderModifier", "ResponseHeaderModifier": "responseHeaderModifier",
                  "RequestMirror": "requestMirror", "RequestRedirect": "requestRedirect", "URLRewrite": "urlRewrite",
                  "ExtensionRef": "extensionRef"}


def _filter_rules(types: list[str]) -> list[JSON]:
    rules = []
    for kind in types:
        field = _FILTER_FIELDS[kind]
        rules.append({"message": f"filter.{field} must be nil if the filter.type is not {kind}",
                      "rule": f"!(has(self.{field}) && self.type != '{kind}')"})
        rules.append({"message": f"filter.{field} must be specified for {kind} filter.type",
                      "rule": f"!(!has(self.{field}) && self.type == '{kind}')"})
    return rules


def _http_filter() -> JSON:
    types = ["RequestHeaderModifier", "ResponseHeaderModifier", "RequestMirror", "RequestRedirect", "URLRewrite",
             "ExtensionRef"]
    local_ref = _obj({"group": _group(), "kind": _kind(), "name": _name()}, ["group", "kind", "name"])
    mirror = _obj({"backendRef": _backend_ref(weighted=False)}, ["backendRef"])
    redirect = _obj({"scheme": _s(enum=["http", "https"]), "hostname": _hostname(precise=True),
                     "path": _path_modifier(), "port": _port(),
                     "statusCode": {"type": "integer", "default": 302, "enum": [301, 302]}},
                    description="answers the request with a redirect")
    rewrite = _obj({"hostname": _hostname(precise=True), "path": _path_modifier()},
                   description="rewrites the request before it is forwarded")
    return _obj({"type": _s(enum=types), "requestHeaderModifier": _header_modifier(),
                 "responseHeaderModifier": _header_modifier(), "requestMirror": mirror,
                 "requestRedirect": redirect, "urlRewrite": rewrite, "extensionRef": local_ref},
                ["type"], "processing applied to requests (or responses) of a rule",
                **{"x-kubernetes-validations": _filter_rules(types)})


def _grpc_filter() -> JSON:
    types = ["RequestHeaderModifier", "ResponseHeaderModifier", "RequestMirror", "ExtensionRef"]
    full = _http_filter()["properties"]
    props = {"type": _s(enum=types), **{_FILTER_FIELDS[t]: full[_FILTER_FIELDS[t]] for t in types}}
    return _obj(props, ["type"], **{"x-kubernetes-validations": _filter_rules(types)})


def _http_path_match() -> JSON:
    bad = [("must not contain '//'", "!self.value.contains('//')"),
           ("must not contain '/./'", "!self.value.contains('/./')"),
           ("must not contain '/../'", "!self.value.contains('/../')"),
           ("must not contain '%2f'", "!self.value.contains('%2f')"),
           ("must not contain '%2F'", "!self.value.contains('%2F')"),
           ("must not contain '#'", "!self.value.contains('#')"),
           ("must not end with '/..'", "!self.value.endsWith('/..')"),
           ("must not end with '/.'", "!self.value.endsWith('/.')")]
    rules = [{"message": "value must be an absolute path and start with '/' when type one of ['Exact', 'PathPrefix']",
              "rule": "(self.type in ['Exact','PathPrefix']) ? self.value.startsWith('/') : true"}]
    rules += [{"message": message, "rule": f"(self.type in ['Exact','PathPrefix']) ? {rule} : true"}
              for message, rule in bad]
    rules.append({"message": "type must be one of ['Exact', 'PathPrefix', 'RegularExpression']",
                  "rule": "self.type in ['Exact','PathPrefix'] || self.type == 'RegularExpression'"})
    return _obj({"type": _s(default="PathPrefix", enum=["Exact", "PathPrefix", "RegularExpression"]),
                 "value": _s(default="/", maxLength=1024)},
                description="a path match (default: PathPrefix /)",
                default={"type": "PathPrefix", "value": "/"}, **{"x-kubernetes-validations": rules})


def _name_value_match(name_pattern: str = _HEADER_NAME) -> JSON:
    return _obj({"type": _s(default="Exact", enum=["Exact", "RegularExpression"]),
                 "name": _s(maxLength=256, minLength=1, pattern=name_pattern),
                 "value": _s(maxLength=4096, minLength=1)}, ["name", "value"])


def _http_match() -> JSON:
    methods = ["GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"]
    keyed = {"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"]}
    return _obj({"path": _http_path_match(),
                 "headers": _arr(_name_value_match(), maxItems=16, **keyed),
                 "queryParams": _arr(_name_value_match(), maxItems=16, **keyed),
                 "method": _s(enum=methods)},
                description="conditions a request must all meet to match the rule")


def _route_status() -> JSON:
    parent = _obj({"parentRef": _parent_ref(),
                   "controllerName": _s(maxLength=253, minLength=1,
                                        pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
                                                r"\/[A-Za-z0-9\/\-._~%!$&'()*+,;=:]+$"),
                   "conditions": _conditions()},
                  ["controllerName", "parentRef"])
    parent["properties"]["conditions"]["minItems"] = 1
    return _obj({"parents": _arr(parent, maxItems=32)}, ["parents"])


def _http_route_spec() -> JSON:
    default_match = [{"path": {"type": "PathPrefix", "value": "/"}}]
    rule = _obj(
        {"matches": _arr(_http_match(), maxItems=64, default=default_match),
         "filters": _arr(_http_filter(), maxItems=16, **{"x-kubernetes-validations": [
             {"message": "May specify either httpRouteFilterRequestRedirect or httpRouteFilterRequestRewrite, but "
                         "not both", "rule": "!(self.exists(f, f.type == 'RequestRedirect') && "
                                             "self.exists(f, f.type == 'URLRewrite'))"},
             {"message": "RequestHeaderModifier filter cannot be repeated",
              "rule": "self.filter(f, f.type == 'RequestHeaderModifier').size() <= 1"},
             {"message": "ResponseHeaderModifier filter cannot be repeated",
              "rule": "self.filter(f, f.type == 'ResponseHeaderModifier').size() <= 1"},
             {"message": "RequestRedirect filter cannot be repeated",
              "rule": "self.filter(f, f.type == 'RequestRedirect').size() <= 1"},
             {"message": "URLRewrite filter cannot be repeated",
              "rule": "self.filter(f, f.type == 'URLRewrite').size() <= 1"}]}),
         "backendRefs": _arr(_backend_ref(filters=_arr(_http_filter(), maxItems=16)), maxItems=16),
         "timeouts": _obj({"request": _s(pattern=_DURATION), "backendRequest": _s(pattern=_DURATION)})},
        description="a routing rule: matches, filters and backends",
        **{"x-kubernetes-validations": [
            {"message": "RequestRedirect filter must not be used together with backendRefs",
             "rule": "(has(self.backendRefs) && size(self.backendRefs) > 0) ? (!has(self.filters) || "
                     "self.filters.all(f, !has(f.requestRedirect))): true"},
            {"message": "When using RequestRedirect filter with path.replacePrefixMatch, exactly one PathPrefix "
                        "match must be specified",
             "rule": "(has(self.filters) && self.filters.exists_one(f, has(f.requestRedirect) && "
                     "has(f.requestRedirect.path) && f.requestRedirect.path.type == 'ReplacePrefixMatch' && "
                     "has(f.requestRedirect.path.replacePrefixMatch))) ? ((size(self.matches) != 1 || "
                     "!has(self.matches[0].path) || self.matches[0].path.type != 'PathPrefix') ? false : true) : "
                     "true"},
            {"message": "When using URLRewrite filter with path.replacePrefixMatch, exactly one PathPrefix match "
                        "must be specified",
             "rule": "(has(self.filters) && self.filters.exists_one(f, has(f.urlRewrite) && has(f.urlRewrite.path) "
                     "&& f.urlRewrite.path.type == 'ReplacePrefixMatch' && "
                     "has(f.urlRewrite.path.replacePrefixMatch))) ? ((size(self.matches) != 1 || "
                     "!has(self.matches[0].path) || self.matches[0].path.type != 'PathPrefix') ? false : true) : "
                     "true"}]})
    return _obj({"parentRefs": _arr(_parent_ref(), maxItems=32),
                 "hostnames": _arr(_hostname(), maxItems=16),
                 "rules": _arr(rule, maxItems=16, default=[{"matches": default_match}])},
                description="the desired state of an HTTPRoute")


def _grpc_route_spec() -> JSON:
    method = _obj({"type": _s(default="Exact", enum=["Exact", "RegularExpression"]),
                   "service": _s(maxLength=1024), "method": _s(maxLength=1024)},
                  description="a gRPC service and/or method",
                  **{"x-kubernetes-validations": [
                      {"message": "One or both of 'service' or 'method' must be specified",
                       "rule": "has(self.service) || has(self.method)"},
                      {"message": "service must only contain valid characters (matching ^(?i)\\.?[a-z_][a-z_0-9]*"
                                  "(\\.[a-z_][a-z_0-9]*)*$)",
                       "rule": "self.type == 'Exact' && has(self.service) ? "
                               "self.service.matches(r\"\"\"^(?i)\\.?[a-z_][a-z_0-9]*(\\.[a-z_][a-z_0-9]*)*$\"\"\")"
                               ": true"},
                      {"message": "method must only contain valid characters (matching ^[A-Za-z_][A-Za-z_0-9]*$)",
                       "rule": "self.type == 'Exact' && has(self.method) ? "
                               "self.method.matches(r\"\"\"^[A-Za-z_][A-Za-z_0-9]*$\"\"\"): true"}]})
    keyed = {"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"]}
    match = _obj({"method": method, "headers": _arr(_name_value_match(), maxItems=16, **keyed)})
    rule = _obj({"matches": _arr(match, maxItems=8),
                 "filters": _arr(_grpc_filter(), maxItems=16),
                 "backendRefs": _arr(_backend_ref(filters=_arr(_grpc_filter(), maxItems=16)), maxItems=16)})
    return _obj({"parentRefs": _arr(_parent_ref(), maxItems=32),
                 "hostnames": _arr(_hostname(), maxItems=16),
                 "rules": _arr(rule, maxItems=16)}, description="the desired state of a GRPCRoute")


def _listener() -> JSON:
    secret_ref = _obj({"group": _group(""), "kind": _kind("Secret"), "name": _name(), "namespace": _namespace()},
                      ["name"], "a Secret holding a certificate and key")
    tls = _obj({"mode": _s(default="Terminate", enum=["Terminate", "Passthrough"]),
                "certificateRefs": _arr(secret_ref, maxItems=64),
                "options": {"type": "object", "additionalProperties": _s(maxLength=4096), "maxProperties": 16}},
               description="TLS settings of the listener",
               **{"x-kubernetes-validations": [
                   {"message": "certificateRefs or options must be specified when mode is Terminate",
                    "rule": "self.mode == 'Terminate' ? size(self.certificateRefs) > 0 || size(self.options) > 0 "
                            ": true"}]})
    namespaces = _obj({"from": _s(default="Same", enum=["All", "Selector", "Same"]), "selector": _label_selector()},
                      description="namespaces whose Routes may attach", default={"from": "Same"})
    kinds = _arr(_obj({"group": _group(), "kind": _kind()}, ["kind"]), maxItems=8)
    allowed = _obj({"namespaces": namespaces, "kinds": kinds}, description="which Routes may attach",
                   default={"namespaces": {"from": "Same"}})
    protocol = _s("HTTP, HTTPS, TLS, TCP, UDP or a domain-prefixed protocol", maxLength=255, minLength=1,
                  pattern=r"^[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?$|[a-z0-9]([-a-z0-9]*[a-z0-9])?"
                          r"(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/[A-Za-z0-9]+$")
    return _obj({"name": _section_name(), "hostname": _hostname(), "port": _port(), "protocol": protocol,
                 "tls": tls, "allowedRoutes": allowed}, ["name", "port", "protocol"],
                "a logical endpoint where the Gateway accepts connections")


def _gateway_spec() -> JSON:
    listeners = _arr(_listener(), minItems=1, maxItems=64, **{
        "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
        "x-kubernetes-validations": [
            {"message": "tls must not be specified for protocols ['HTTP', 'TCP', 'UDP']",
             "rule": "self.all(l, l.protocol in ['HTTP', 'TCP', 'UDP'] ? !has(l.tls) : true)"},
            {"message": "tls mode must be Terminate for protocol HTTPS",
             "rule": "self.all(l, (l.protocol == 'HTTPS' && has(l.tls)) ? (l.tls.mode == '' || "
                     "l.tls.mode == 'Terminate') : true)"},
            {"message": "hostname must not be specified for protocols ['TCP', 'UDP']",
             "rule": "self.all(l, l.protocol in ['TCP', 'UDP']  ? (!has(l.hostname) || l.hostname == '') : true)"},
            {"message": "Listener name must be unique within the Gateway",
             "rule": "self.all(l1, self.exists_one(l2, l1.name == l2.name))"},
            {"message": "Combination of port, protocol and hostname must be unique for each listener",
             "rule": "self.all(l1, self.exists_one(l2, l1.port == l2.port && l1.protocol == l2.protocol && "
                     "(has(l1.hostname) && has(l2.hostname) ? l1.hostname == l2.hostname : !has(l1.hostname) && "
                     "!has(l2.hostname))))"}]})
    address = _obj({"type": _s(default="IPAddress", maxLength=253, minLength=1,
                               pattern=r"^Hostname|IPAddress|NamedAddress|[a-z0-9]([-a-z0-9]*[a-z0-9])?"
                                       r"(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/[A-Za-z0-9\/\-._~%!$&'()*+,;=:]+$"),
                    "value": _s(maxLength=253, minLength=1)}, ["value"])
    return _obj({"gatewayClassName": _s("the GatewayClass of this Gateway", maxLength=253, minLength=1),
                 "listeners": listeners,
                 "addresses": _arr(address, maxItems=16),
                 "infrastructure": _obj({"labels": {"type": "object", "additionalProperties": _s(), "maxProperties": 8},
                                         "annotations": {"type": "object", "additionalProperties": _s(),
                                                         "maxProperties": 8}})},
                ["gatewayClassName", "listeners"], "the desired state of a Gateway")


def _gateway_status() -> JSON:
    address = _obj({"type": _s(default="IPAddress", maxLength=253, minLength=1), "value": _s(maxLength=253,
                                                                                              minLength=1)},
                   ["value"])
    listener = _obj({"name": _section_name(),
                     "supportedKinds": _arr(_obj({"group": _group(), "kind": _kind()}, ["kind"]), maxItems=8),
                     "attachedRoutes": {"type": "integer", "format": "int32"},
                     "conditions": _conditions()},
                    ["attachedRoutes", "conditions", "name", "supportedKinds"])
    return _obj({"addresses": _arr(address, maxItems=16),
                 "conditions": _conditions(_pending("Accepted", "Programmed")),
                 "listeners": _arr(listener, maxItems=64,
                                   **{"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"]})},
                description="the observed state of a Gateway",
                default={"conditions": _pending("Accepted", "Programmed")})


def _gateway_class() -> tuple[JSON, JSON]:
    params = _obj({"group": _group(), "kind": _kind(), "name": _name(), "namespace": _namespace()},
                  ["group", "kind", "name"])
    spec = _obj({"controllerName": _s("the controller that manages Gateways of this class", maxLength=253,
                                      minLength=1,
                                      pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
                                              r"\/[A-Za-z0-9\/\-._~%!$&'()*+,;=:]+$",
                                      **{"x-kubernetes-validations": [
                                          {"message": "Value is immutable", "rule": "self == oldSelf"}]}),
                 "parametersRef": params, "description": _s(maxLength=64)},
                ["controllerName"], "the desired state of a GatewayClass")
    status = _obj({"conditions": _conditions(_pending("Accepted"))}, description="the observed state",
                  default={"conditions": _pending("Accepted")})
    return spec, status


def _reference_grant_spec() -> JSON:
    from_item = _obj({"group": _group(), "kind": _kind(), "namespace": _namespace()}, ["group", "kind", "namespace"])
    to_item = _obj({"group": _group(), "kind": _kind(), "name": _name()}, ["group", "kind"])
    return _obj({"from": _arr(from_item, minItems=1, maxItems=16), "to": _arr(to_item, minItems=1, maxItems=16)},
                ["from", "to"], "who may refer to what in the ReferenceGrant's namespace")


def _root(spec: JSON, status: JSON | None, required_spec: bool = True) -> JSON:
    props: JSON = {"apiVersion": {"type": "string"}, "kind": {"type": "string"}, "metadata": {"type": "object"},
                   "spec": spec}
    if status is not None:
        props["status"] = status
    return {"type": "object", "properties": props, **({"required": ["spec"]} if required_spec else {})}


def _crd(kind: str, plural: str, scope: str, versions: list[tuple[str, bool]], schema: JSON,
         short_names: list[str], columns: list[JSON], status: bool) -> JSON:
    age = {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{GROUP}",
                     "annotations": {"gateway.networking.k8s.io/bundle-version": BUNDLE_VERSION,
                                     "gateway.networking.k8s.io/channel": CHANNEL}},
        "spec": {
            "group": GROUP,
            "names": {"kind": kind, "listKind": f"{kind}List", "plural": plural, "singular": kind.lower(),
                      "categories": ["gateway-api"], **({"shortNames": short_names} if short_names else {})},
            "scope": scope,
            "versions": [
                {"name": name, "served": True, "storage": storage, "schema": {"openAPIV3Schema": copy.deepcopy(schema)},
                 "additionalPrinterColumns": [*columns, age],
                 **({"subresources": {"status": {}}} if status else {})}
                for name, storage in versions],
        },
    }


def gateway_api_crds() -> dict[str, JSON]:
    """``{CRD name: CRD object}`` of the standard channel."""
    class_spec, class_status = _gateway_class()
    gateways = _root(_gateway_spec(), _gateway_status())
    classes = _root(class_spec, class_status)
    http_routes = _root(_http_route_spec(), _route_status())
    grpc_routes = _root(_grpc_route_spec(), _route_status())
    grants = _root(_reference_grant_spec(), None, required_spec=False)
    both = [("v1", True), ("v1beta1", False)]
    crds = [
        _crd("GatewayClass", "gatewayclasses", "Cluster", both, classes, ["gc"],
             [{"name": "Controller", "type": "string", "jsonPath": ".spec.controllerName"},
              {"name": "Accepted", "type": "string", "jsonPath": '.status.conditions[?(@.type=="Accepted")].status'},
              {"name": "Description", "type": "string", "jsonPath": ".spec.description", "priority": 1}], True),
        _crd("Gateway", "gateways", "Namespaced", both, gateways, ["gtw"],
             [{"name": "Class", "type": "string", "jsonPath": ".spec.gatewayClassName"},
              {"name": "Address", "type": "string", "jsonPath": ".status.addresses[*].value"},
              {"name": "Programmed", "type": "string",
               "jsonPath": '.status.conditions[?(@.type=="Programmed")].status'}], True),
        _crd("HTTPRoute", "httproutes", "Namespaced", both, http_routes, [],
             [{"name": "Hostnames", "type": "string", "jsonPath": ".spec.hostnames"}], True),
        _crd("GRPCRoute", "grpcroutes", "Namespaced", [("v1", True)], grpc_routes, [],
             [{"name": "Hostnames", "type": "string", "jsonPath": ".spec.hostnames"}], True),
        _crd("ReferenceGrant", "referencegrants", "Namespaced", [("v1beta1", True)], grants, ["refgrant"], [],
             False),
    ]
    return {c["metadata"]["name"]: c for c in crds}


def wants_gateway_api(config: Any) -> bool:
    """Whether a HAProxyTemplateConfig object reads Gateway API objects: it selects the ``gateway`` template
    library or watches a resource of the group. Simulated clusters serve the CRDs for such configs only, so
    that the other scenarios' clusters (and their resourceVersions) stay as they were."""
    if not isinstance(config, dict):
        return False
    annotations = (config.get("metadata") or {}).get("annotations") or {}
    libraries = str(annotations.get(LIBRARIES_ANNOTATION, ""))
    if "gateway" in [name.strip() for name in libraries.split(",")]:
        return True
    watched = (config.get("spec") or {}).get("watchedResources") or {}
    return any(isinstance(w, dict) and str(w.get("apiVersion", "")).startswith(GROUP + "/") for w in watched.values())


def serve_gateway_api_for(api: Any, config: Any) -> bool:
    """Creates the Gateway API CRDs in the fake ``api`` (a ``FakeKubeAPI``) that it does not hold yet, when
    ``config`` (a HAProxyTemplateConfig about to be applied) reads Gateway API objects. True when it did."""
    if not wants_gateway_api(config):
        return False
    crd_type = api.types.resolve("apiextensions.k8s.io/v1", "customresourcedefinitions")
    held = {str(o["metadata"]["name"]) for o in api.objects(crd_type)}
    missing = [crd for name, crd in gateway_api_crds().items() if name not in held]
    for crd in missing:
        api.create(crd_type, None, crd)
    return bool(missing)
