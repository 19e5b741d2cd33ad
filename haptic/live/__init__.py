"""Adapters to a real cluster: the kubernetes client, kopf watches, httpx over TCP, the real clock, and the
admission webhook's HTTPS server, runtime and certificates.

The only package allowed to import kopf and the kubernetes client. Must not import ``simulator``.
"""
