"""The ``local`` tier: the controller as a real subprocess against HTTP fakes and real HAProxy processes.

Everything listens on loopback only. Each HAProxy "pod" gets its own loopback address (a random
``127.a.b.0/24`` block per stack, so parallel stacks do not collide): the fake Dataplane API listens on
``<podIP>:<dataplane port>`` and its haproxy binds ``<podIP>:<port>`` for every wildcard ``bind`` of the
pushed config, so the controller's usual endpoint ``http://<podIP>:<port>/v3`` reaches the right pod
and traffic can be sent to each pod separately. Echo backends get addresses of the same block.

``LocalStack`` (stack.py) assembles the whole thing and is what ``haptic-sim demo`` and the scenario
runner's ``local`` backend drive. May import ``simulator.kube``, ``simulator.dataplane`` and the pure
``haptic`` libraries; must not import ``haptic.controller``/``haptic.live`` (the controller runs as a
subprocess), kopf or the kubernetes client.
"""

from .echo import EchoServer
from .events import LoggedEvent, events_from_log
from .network import LoopbackNetwork
from .pod import LocalHAProxyPod
from .process import ControllerProcess
from .stack import LocalStack, StackOptions
from .traffic import TrafficReport, probe

__all__ = [
    "ControllerProcess",
    "EchoServer",
    "LocalHAProxyPod",
    "LocalStack",
    "LoggedEvent",
    "LoopbackNetwork",
    "StackOptions",
    "TrafficReport",
    "events_from_log",
    "probe",
]
