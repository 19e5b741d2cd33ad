"""Stand-in for the controller's render-and-deploy step in local-tier tests that do not need it:
renders the stack's HAProxyTemplateConfig (library expanded) from objects and syncs every pod with
the real synchronizer."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from haptic.config.models import load_config
from haptic.dataplane.client import DataplaneClient
from haptic.dataplane.synchronizer import SyncResult, sync
from haptic.templating.libraries import expand_libraries
from haptic.validation.config_file import compile_config
from haptic.validation.setup import build_stores, render_inputs
from simulator.local import LocalStack


async def render_and_sync(stack: LocalStack, fixtures: Mapping[str, Sequence[Any]]) -> list[SyncResult]:
    config = load_config(expand_libraries(stack.template_config()))
    engine = compile_config(config, object_name="local-test")
    results = []
    for pod in stack.pods:
        stores, pods = build_stores(config.spec, fixtures)
        rendered = engine.render(render_inputs(config.spec, stores, pods, current_config=pod.fake.raw()))
        async with DataplaneClient(pod.url, stack.options.username, stack.password) as client:
            results.append(await sync(client, rendered.config, rendered.aux))
    return results
