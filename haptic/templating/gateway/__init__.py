"""The Gateway API template library's computations (gateway.networking.k8s.io/v1), done once in Python.

``gateway_model`` turns the watched GatewayClasses, Gateways, HTTPRoutes, ReferenceGrants, Namespaces,
Services and Secrets into what the ``gateway`` library's templates write out: one frontend per
listener port with its routing lines and maps (the spec's match precedence), the Service backends,
the TLS certificates, and the status each object must carry. Modules: ``hostnames`` (wildcards and
intersection), ``safety`` (values that would inject HAProxy directives), ``refs`` (ReferenceGrant and
backend resolution), ``listeners`` (classes, Gateways, listeners, attachment), ``routing`` (precedence
and HAProxy lines), ``model`` (the entry point), ``conditions`` (status conditions).
Pure: imports only ``haptic.templating`` siblings and the standard library; never the controller.
"""

from haptic.templating.gateway.model import CONTROLLER_NAME, gateway_model

__all__ = ["CONTROLLER_NAME", "gateway_model"]
