"""Pydantic models of the HAProxyTemplateConfig and HAProxyCfg custom resources, defaults and CRD generation.

Entry points: ``models.load_config``, ``models.load_credentials``, ``crds.all_crds``.
Pure: builds on pydantic, PyYAML and the pure helpers of ``haptic.k8s`` (JSONPath, selectors,
stores); must not import ``haptic.controller``, ``haptic.live``, kopf or the kubernetes client.
"""
