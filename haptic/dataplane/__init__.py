"""HAProxy config parser, sync planner, Dataplane API v3 client, synchronizer and auxiliary files.

Pure apart from the httpx client it is handed a transport for. Must not import ``haptic.controller``
or ``haptic.live``.
"""

from haptic.dataplane.errors import ConfigParseError
from haptic.dataplane.operations import Operation, SyncPlan
from haptic.dataplane.parser import Directive, HAProxyConfig, Section, parse_config, parse_config_reusing
from haptic.dataplane.planner import clear_parse_cache, plan, plan_parsed
from haptic.dataplane.server_model import RUNTIME_SERVER_FIELDS, model_to_server_line, server_to_model

__all__ = [
    "RUNTIME_SERVER_FIELDS",
    "ConfigParseError",
    "Directive",
    "HAProxyConfig",
    "Operation",
    "Section",
    "SyncPlan",
    "clear_parse_cache",
    "model_to_server_line",
    "parse_config",
    "parse_config_reusing",
    "plan",
    "plan_parsed",
    "server_to_model",
]
