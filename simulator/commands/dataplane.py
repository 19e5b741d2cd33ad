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
from simulator.dataplane.instance import FakeDataplane, InstanceOptions
from simulator.dataplane.local_version import local_api_version
from simulator.dataplane.process_runner import AsyncProcessRunner
from simulator.dataplane.storage import Storage, StorageDirs


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("dataplane", help="serve a fake HAProxy Dataplane API v3 on 127.0.0.1")
    parser.add_argument("--port", type=int, default=5555, help="port to listen on (0: pick a free one)")
    parser.add_argument("--haproxy", action="store_true", help="drive a real haproxy process (master-worker)")
    parser.add_argument("--haproxy-bin", default=shutil.which("haproxy") or "/usr/sbin/haproxy")
    parser.add_argument("--workdir", type=Path, help="haproxy files and storage (default: a temporary directory)")
    parser.add_argument("--username", default="admin")
    parser.add_argument("--password", default="adminpwd")
    parser.add_argument("--api-version", default=None,
                        help="what /v3/info reports (default: the local haproxy's major.minor, which the controller "
                             "requires)")
    parser.add_argument("--reload-delay", type=float, default=1.0, help="seconds a reload is delayed (coalescing)")
    parser.add_argument("--initial-config", type=Path, help="haproxy.cfg to start from")
    parser.add_argument("--name", default="haproxy-0")
    parser.add_argument("--maps-dir", help="maps storage directory, as the pod sees it (the real API's maps_dir; "
                                           "default <storage>/maps)")
    parser.add_argument("--ssl-certs-dir", help="certificate storage directory (ssl_certs_dir; default <storage>/ssl)")
    parser.add_argument("--general-storage-dir",
                        help="general file storage directory (general_storage_dir; default <storage>/general)")
    parser.set_defaults(func=_run)


def _storage(args: argparse.Namespace, workdir: Path) -> Storage:
    """Storage under ``/etc/haproxy`` in memory, or under the work directory with ``--haproxy`` (a
    real haproxy reads the files); the directories are the given ones, below that root."""
    root = workdir / "storage" if args.haproxy else None
    base = str(root) if root is not None else "/etc/haproxy"
    defaults = StorageDirs.under(base)
    dirs = StorageDirs(args.maps_dir or defaults.maps_dir, args.ssl_certs_dir or defaults.ssl_certs_dir,
                       args.general_storage_dir or defaults.general_storage_dir)
    return Storage(root, virtual_root=base, dirs=dirs)


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
        api_version=args.api_version or local_api_version(args.haproxy_bin),
        reload_delay=args.reload_delay,
        name=args.name,
    )
    if args.initial_config is not None:
        options.initial_config = args.initial_config.read_text()
    with contextlib.ExitStack() as stack:
        workdir = args.workdir or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="haptic-dp-")))
        driver = HAProxyDriver(args.haproxy_bin, workdir / "haproxy", AsyncProcessRunner()) if args.haproxy else None
        storage = _storage(args, workdir)
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
