"""Adapters to a real cluster: the kubernetes client, kopf watches, httpx over TCP, the real clock.

The only package allowed to import kopf and the kubernetes client. Must not import ``simulator``.
"""
