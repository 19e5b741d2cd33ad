"""``haptic-sim demo``: the demo stack — fake Kubernetes API, real HAProxy, the controller, traffic."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import shlex
import signal
import sys
from typing import Any

from simulator.local.demo import Demo, DemoOptions


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "demo", help="run the demo stack: fake Kubernetes API, real HAProxy, the controller, an Ingress, traffic",
        description="Starts the fake Kubernetes API on 127.0.0.1, HAProxy pods (a fake Dataplane API driving a "
                    "real haproxy each, on their own 127.a.b.c address), echo backends and the controller "
                    "(`haptic run`) as a subprocess; creates an Ingress, sends traffic through every HAProxy, "
                    "scales the EndpointSlice (runtime update, no reload) and shuts everything down. Exit code 0 "
                    "when traffic flowed at every step, non-zero otherwise.")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--once", action="store_true",
                      help="run the story once and exit (the default; spelled out for scripts and CI)")
    mode.add_argument("--stay", action="store_true",
                      help="after the story, keep the stack running (kubectl/curl hints printed) until Ctrl-C")
    parser.add_argument("--pods", type=int, default=2, help="HAProxy pods (default 2)")
    parser.add_argument("--timeout", type=float, default=90.0,
                        help="seconds to wait for the first deployment's traffic (default 90; later steps: half)")
    parser.add_argument("--requests", type=int, default=6, help="requests per traffic check and pod (default 6)")
    parser.add_argument("--log-level", default="info", help="the controller's LOG_LEVEL (default info)")
    parser.add_argument("--quiet", action="store_true", help="do not stream the controller's log")
    parser.add_argument("--haproxy-log", action="store_true",
                        help="also stream each HAProxy pod's log (one line per request: frontend, backend/server)")
    parser.add_argument("--controller-command", default=None,
                        help="command line that starts the controller (default: this Python's `haptic run "
                             "--bind-address 127.0.0.1 --haproxy-binary <haproxy>`)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.pods < 1:
        print("demo: --pods must be at least 1", file=sys.stderr)
        return 2
    command = shlex.split(args.controller_command) if args.controller_command else None
    options = DemoOptions(pods=args.pods, timeout=args.timeout, stay=args.stay, show_controller_log=not args.quiet,
                          show_haproxy_log=args.haproxy_log,
                          log_level=args.log_level, controller_command=command,
                          requests=max(args.requests, 1))
    try:
        return asyncio.run(_main(options))
    except KeyboardInterrupt:
        return 130


def _print(line: str) -> None:
    # A closed stdout (`haptic-sim demo | head`) must not cut the shutdown short.
    with contextlib.suppress(BrokenPipeError, ValueError):
        print(line, flush=True)


async def _main(options: DemoOptions) -> int:
    task = asyncio.current_task()
    assert task is not None
    loop = asyncio.get_running_loop()
    interrupted: list[int] = []

    def interrupt(signum: int) -> None:
        # The first signal stops the story; cleanup then runs to the end (bounded by the controller's
        # grace period), so later signals change nothing.
        if not interrupted:
            interrupted.append(signum)
            task.cancel()

    def install() -> None:
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(signal.SIGTERM, interrupt, signal.SIGTERM)
            loop.add_signal_handler(signal.SIGINT, interrupt, signal.SIGINT)

    install()
    options.after_start = install
    try:
        return await Demo(options, _print).run()
    except asyncio.CancelledError:
        if not interrupted:
            raise
        _print("demo: interrupted")
        return 130 if options.stay and interrupted[0] == signal.SIGINT else 128 + interrupted[0]
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
