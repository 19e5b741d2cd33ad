"""A fake Kubernetes API server: object store, watch, patch, apply, discovery, faults; in-process and over HTTP.

``FakeKubeAPI`` (store and semantics), ``InProcessKubeClient`` (the ``haptic.k8s.api.KubeAPI`` port without
sockets), ``KubeHTTPServer``/``serve`` (aiohttp on 127.0.0.1), ``BackgroundServer`` (the HTTP server in a
thread, for synchronous clients), ``load_yaml``, ``apply_fault``. Must not import kopf or the kubernetes
client; the store (``store``) never imports its front-ends (HTTP app, admin, loading, in-process client).
"""

from .admin import apply_fault
from .background import BackgroundServer
from .http_app import KubeHTTPServer, serve
from .inprocess import InProcessKubeClient
from .kubeconfig import kubeconfig_text, write_kubeconfig
from .loading import load_documents, load_yaml
from .store import FakeKubeAPI

__all__ = [
    "BackgroundServer",
    "FakeKubeAPI",
    "InProcessKubeClient",
    "KubeHTTPServer",
    "apply_fault",
    "kubeconfig_text",
    "load_documents",
    "load_yaml",
    "serve",
    "write_kubeconfig",
]
