"""Names shared across the tree, written once: the CRD group and version, the label and annotation
keys under that group, the store name of the HAProxy pods.

Plain constants at the bottom of the layers: imports nothing, so every package may use it.
"""

from __future__ import annotations

API_GROUP = "haproxy-haptic.org"
API_VERSION = "v1alpha1"
#: ``apiVersion`` of the HAProxyTemplateConfig and HAProxyCfg custom resources.
GROUP_VERSION = f"{API_GROUP}/{API_VERSION}"

#: Our annotations and labels all live under the group (templates refuse control characters in them).
ANNOTATION_PREFIX = f"{API_GROUP}/"
TEMPLATE_CONFIG_LABEL = f"{ANNOTATION_PREFIX}template-config"
LIBRARIES_ANNOTATION = f"{ANNOTATION_PREFIX}template-libraries"
#: The webhook names end in this domain: ``<plural>.<group>.validate.haproxy-haptic.org``.
WEBHOOK_DOMAIN = f"validate.{API_GROUP}"

#: The store (and reserved watched-resource name) of the HAProxy pods the controller discovers.
HAPROXY_PODS = "haproxy-pods"
