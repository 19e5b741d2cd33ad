"""``haptic-sim dataplane``: serve a fake Dataplane API over HTTP, optionally driving real haproxy."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import shutil
import signal
import sys
import tempfile
from pathlib import Path
from typing import Any

from simulator.dataplane.haproxy_driver import HAProxyDriver
from simulator.dataplane.http_server import serve
from simulator.dataplane.instance import DEFAULT_API_VERSION, FakeDataplane, InstanceOptions
from simulator.dataplane.process_runner import AsyncProcessRunner
from simulator.dataplane.storage import Storage


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("dataplane", help="serve a fake HAProxy Dataplane API v3 on 127.0.0.1")
    parser.add_argument("--port", type=int, default=5555, help="port to listen on (0: pick a free one)")
    parser.add_argument("--haproxy", action="store_true", help="drive a real haproxy process (master-worker)")
    parser.add_argument("--haproxy-bin", default=shutil.which("haproxy") or "/usr/sbin/haproxy")
    parser.add_argument("--workdir", type=Path, help="haproxy files and storage (default: a temporary directory)")
    parser.add_argument("--username", default="admin")
    parser.add_argument("--password", default="adminpwd")
    parser.add_argument("--api-version", default=DEFAULT_API_VERSION)
    parser.add_argument("--reload-delay", type=float, default=1.0, help="seconds a reload is delayed (coalescing)")
    parser.add_argument("--initial-config", type=Path, help="haproxy.cfg to start from")
    parser.add_argument("--name", default="haproxy-0")
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    try:
        asyncio.run(_serve(args))
    except KeyboardInterrupt:
        return 0
    return 0


async def _serve(args: argparse.Namespace) -> None:
    options = InstanceOptions(
        username=args.username,
        password=args.password,
        api_version=args.api_version,
        reload_delay=args.reload_delay,
        name=args.name,
    )
    if args.initial_config is not None:
        options.initial_config = args.initial_config.read_text()
    with contextlib.ExitStack() as stack:
        workdir = args.workdir or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="haptic-dp-")))
        driver = HAProxyDriver(args.haproxy_bin, workdir / "haproxy", AsyncProcessRunner()) if args.haproxy else None
        storage = Storage(workdir / "storage") if args.haproxy else Storage()
        fake = FakeDataplane(options, driver=driver, storage=storage)
        await fake.start()
        running = await serve(fake, port=args.port)
        print(f"fake dataplane {args.name} listening on {running.url}/v3", flush=True)
        if driver is not None:
            print(f"haproxy master socket {driver.master_socket}, storage {storage.directory('maps')}", flush=True)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        try:
            await stop.wait()
        finally:
            await running.stop()
            await fake.aclose()
    sys.stdout.flush()
