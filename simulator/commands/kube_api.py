"""``haptic-sim kube-api``: serve the fake Kubernetes API on 127.0.0.1 and write a kubeconfig."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import signal
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from haptic.k8s.api import ApiError
from simulator.kube import FakeKubeAPI, KubeHTTPServer, load_yaml, write_kubeconfig
from simulator.kube.gateway_api import gateway_api_crds
from simulator.kube.tls import serving_tls


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("kube-api", help="serve the fake Kubernetes API over HTTP on 127.0.0.1",
                                   description="Serve the fake Kubernetes API on 127.0.0.1. kubectl, the official "
                                               "kubernetes client and kopf work against it with the kubeconfig "
                                               "written by --kubeconfig.")
    parser.add_argument("--port", type=int, default=0, help="TCP port (0 picks a free one; default)")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (loopback only; default 127.0.0.1)")
    parser.add_argument("--load", action="append", default=[], metavar="FILE.yaml",
                        help="create the objects of this YAML file at start (repeatable)")
    parser.add_argument("--gateway-api", action="store_true",
                        help="serve the Gateway API's standard-channel CRDs (gateway.networking.k8s.io) from the start")
    parser.add_argument("--kubeconfig", metavar="PATH", help="write a kubeconfig for the server to PATH")
    parser.add_argument("--bookmark-interval", type=float, default=30.0, help="seconds between watch BOOKMARKs")
    parser.add_argument("--seed", type=int, default=0, help="seed of uids and generated names")
    parser.add_argument("--authorization", action="store_true",
                        help="enforce RBAC as the API server does: serve HTTPS (kubectl sends tokens only over TLS), "
                             "authenticate bearer tokens (ServiceAccount tokens from `kubectl create token`) and "
                             "write the admin's token into --kubeconfig")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        print(f"kube-api: refusing to bind {args.host!r}: only loopback addresses are allowed", file=sys.stderr)
        return 2
    # The store keeps every object as long-lived dicts; the default young-generation threshold makes the
    # cyclic collector rescan them constantly under write load (bench/kube_api.py shows about 2x).
    gc.set_threshold(100_000, 20, 100)
    try:
        return asyncio.run(_serve(args))
    except KeyboardInterrupt:
        return 0


async def _serve(args: argparse.Namespace) -> int:
    # Served to humans and real clients: wall-clock timestamps make kubectl's AGE column meaningful.
    api = FakeKubeAPI(now=lambda: datetime.now(UTC), seed=args.seed, bookmark_interval=args.bookmark_interval)
    if args.gateway_api:
        crd_type = api.types.resolve("apiextensions.k8s.io/v1", "customresourcedefinitions")
        for crd in gateway_api_crds().values():
            api.create(crd_type, None, crd)
    for path in args.load:
        try:
            created = load_yaml(api, Path(path))
        except (OSError, ApiError) as exc:
            print(f"kube-api: cannot load {path}: {exc}", file=sys.stderr)
            return 1
        print(f"kube-api: loaded {len(created)} object(s) from {path}", flush=True)
    tls = serving_tls(datetime.now(UTC)) if args.authorization else None
    server = KubeHTTPServer(api, args.host, args.port, tls=tls)
    admin_token = server.auth.enable() if args.authorization else None
    await server.start()
    print(f"kube-api: serving on {server.url}" + (" (RBAC enforced)" if admin_token else ""), flush=True)
    if args.kubeconfig:
        write_kubeconfig(args.kubeconfig, server.url, token=admin_token, ca_pem=tls.ca_pem if tls else None)
        print(f"kube-api: kubeconfig written to {args.kubeconfig}", flush=True)
    elif admin_token:
        print("kube-api: pass --kubeconfig to get the admin's credentials", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await server.stop()
    return 0
