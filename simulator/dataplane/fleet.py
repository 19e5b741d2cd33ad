"""Several fake Dataplane instances (one per simulated HAProxy pod), created and closed together.

In-process by default; with ``haproxy_bin`` each instance drives its own real haproxy under
``workdir/<name>``, through the given process runner (blocking for the sim backend, async for the
local tier). Counters add up across instances for scenario expectations.
"""

from __future__ import annotations

from pathlib import Path

from haptic.dataplane.client import DataplaneClient, SleepFn
from simulator.dataplane.haproxy_driver import HAProxyDriver
from simulator.dataplane.inprocess import client_for
from simulator.dataplane.instance import Counters, FakeDataplane, InstanceOptions
from simulator.dataplane.local_version import local_api_version
from simulator.dataplane.process_runner import BlockingProcessRunner, ProcessRunner
from simulator.dataplane.storage import Storage


class DataplaneFleet:
    def __init__(
        self,
        *,
        haproxy_bin: str | None = None,
        workdir: Path | None = None,
        runner: ProcessRunner | None = None,
        reload_delay: float = 1.0,
    ) -> None:
        if haproxy_bin is not None and workdir is None:
            raise ValueError("a fleet driving haproxy needs a workdir")
        self.haproxy_bin = haproxy_bin
        self.workdir = workdir
        self.runner: ProcessRunner = runner or BlockingProcessRunner()
        self.reload_delay = reload_delay
        self.instances: dict[str, FakeDataplane] = {}

    async def add(self, name: str, options: InstanceOptions | None = None) -> FakeDataplane:
        if name in self.instances:
            raise ValueError(f"instance {name!r} already exists")
        opts = options or InstanceOptions(reload_delay=self.reload_delay)
        if options is None and self.haproxy_bin is not None:
            # Like a real sidecar, a fake driving haproxy reports that haproxy's version (the
            # controller admits only its own major.minor).
            opts.api_version = local_api_version(self.haproxy_bin)
        opts.name = name
        driver, storage = None, Storage()
        if self.haproxy_bin is not None and self.workdir is not None:
            driver = HAProxyDriver(self.haproxy_bin, self.workdir / name / "haproxy", self.runner)
            storage = Storage(self.workdir / name / "storage")
        fake = FakeDataplane(opts, driver=driver, storage=storage)
        self.instances[name] = fake
        await fake.start()
        return fake

    async def remove(self, name: str) -> None:
        """The pod is gone: its instance stops (and its haproxy with it)."""
        await self.instances.pop(name).aclose()

    def client(self, name: str, *, sleep: SleepFn | None = None) -> DataplaneClient:
        return client_for(self.instances[name], sleep=sleep)

    def totals(self) -> Counters:
        total = Counters()
        for name in sorted(self.instances):
            for key, value in self.instances[name].counters.as_json().items():
                setattr(total, key, getattr(total, key) + value)
        return total

    async def aclose(self) -> None:
        for name in sorted(self.instances):
            await self.instances[name].aclose()
        self.instances.clear()
