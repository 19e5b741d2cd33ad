"""Adapters to the world: the kubernetes client (``KubeAPI``), the HTTP servers (debug and metrics, the
admission webhook's HTTPS server, uvicorn on a socket), the webhook runtime and its certificates.

The only package allowed to import kopf and the kubernetes client. Must not import ``simulator``.
"""
