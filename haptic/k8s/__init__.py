"""Kubernetes-shaped pure helpers: indexed stores, JSONPath, selectors, the Lease elector and the KubeAPI port.

Talks to Kubernetes only through the ``KubeAPI`` protocol it is handed. Its errors are in ``errors``
(base ``K8sError``). Must not import ``haptic.controller``, ``haptic.live``, kopf or the kubernetes client.
"""
