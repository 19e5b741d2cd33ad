"""Admission of the controller's own HAProxyTemplateConfig: would this generation be adopted?

Checks, in order, and stops at the first that fails: the template libraries it names expand; the
spec loads (schema); every template compiles; the templates render against the live stores (a
resource the running config does not watch renders empty) and the result passes ``haproxy -c``
(strict: DNS too); its embedded validationTests pass (``run_tests``: the controller's adoption gate,
so the webhook and the controller agree). A ``haproxy -c`` error the running config's own render of
the same stores also has is not the new generation's fault (an object the controller holds back):
it is passed on as a warning, so one tenant's bad object cannot block a config change.

The webhook is registered with ``failurePolicy: Ignore`` for this resource (``configuration.py``): the
config is how an operator repairs a controller that is down; the controller checks every generation
again before adopting it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from haptic.config.errors import ConfigError
from haptic.config.models import HAProxyTemplateConfigSpec, load_config
from haptic.k8s.store import ResourceStore
from haptic.names import HAPROXY_PODS
from haptic.templating.context import EMPTY_STORE, StoreLike
from haptic.templating.engine import compile_templates
from haptic.templating.errors import TemplatingError
from haptic.templating.libraries import LibraryError, expand_libraries
from haptic.validation.render_check import render_and_validate
from haptic.webhook.admission import ConfigVerdict
from haptic.webhook.proposal_check import DryRunCheck, problem_text, without_location

#: makes the dry-run check of a spec (the webhook binding's factory: ports, capabilities, clock)
CheckFactory = Callable[[HAProxyTemplateConfigSpec], DryRunCheck]
#: a spec's failing validationTests, one line each (the controller's own gate, so both agree)
TestsRunner = Callable[[HAProxyTemplateConfigSpec], Awaitable[list[str]]]



async def review_config(obj: Mapping[str, Any], stores: Mapping[str, ResourceStore], make_check: CheckFactory,
                        run_tests: TestsRunner, current: DryRunCheck | None = None) -> ConfigVerdict:
    """Whether the HAProxyTemplateConfig ``obj`` would be adopted by the controller watching ``stores``."""
    try:
        expanded = expand_libraries(dict(obj))
        config = load_config(expanded)
    except (LibraryError, ConfigError) as exc:
        return ConfigVerdict((str(exc),))
    try:
        compile_templates(config.spec)
    except TemplatingError as exc:
        return ConfigVerdict((f"templates: {exc}",))
    check = make_check(config.spec)
    views: dict[str, StoreLike] = {name: stores.get(name, EMPTY_STORE) for name in config.spec.watched_resources}
    inputs = check.inputs(views)
    try:
        checked = await render_and_validate(check.engine, inputs, check.validator, runner=check.runner,
                                            render_runner=check.render_runner)
    except TemplatingError as exc:
        return ConfigVerdict((f"rendering failed: {exc}",))
    warnings: list[str] = list(checked.render.warnings)
    if not checked.valid:
        errors = list(checked.validation.errors)
        known = await _known_errors(current, stores) if current is not None else set()
        new = [e for e in errors if without_location(e.message) not in known]
        if new or not errors:
            texts = [problem_text(e) for e in new] or [checked.validation.summary()]
            return ConfigVerdict(("haproxy -c: " + "; ".join(texts[:5]),), tuple(warnings))
        warnings.append("haproxy -c rejects the running configuration's render too (an object is at fault): "
                        + "; ".join(problem_text(e) for e in errors[:2]))
    failures = await run_tests(config.spec)
    return ConfigVerdict(tuple(failures), tuple(warnings))


async def _known_errors(current: DryRunCheck, stores: Mapping[str, ResourceStore]) -> set[str]:
    views: dict[str, StoreLike] = {n: s for n, s in stores.items() if n != HAPROXY_PODS}
    try:
        before = await render_and_validate(current.engine, current.inputs(views), current.validator,
                                           runner=current.runner, render_runner=current.render_runner)
    except TemplatingError:
        return set()
    return {without_location(e.message) for e in before.validation.errors}
