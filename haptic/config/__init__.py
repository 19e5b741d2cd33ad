"""Pydantic models of the HAProxyTemplateConfig and HAProxyCfg custom resources, defaults and CRD generation.

Pure: must not import ``haptic.controller``, ``haptic.live``, kopf or the kubernetes client.
"""
