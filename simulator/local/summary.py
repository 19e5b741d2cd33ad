"""Human-readable summaries of what a local HAProxy pod runs (for the demo's output)."""

from __future__ import annotations

from dataclasses import dataclass, field

from simulator.local.pod import LocalHAProxyPod


@dataclass
class Backend:
    name: str
    servers: list[str] = field(default_factory=list)  # "SRV_1 127.1.2.101:8080"
    disabled: int = 0


@dataclass
class ConfigShape:
    frontends: dict[str, list[str]] = field(default_factory=dict)  # name -> bind addresses
    backends: list[Backend] = field(default_factory=list)


def config_shape(text: str) -> ConfigShape:
    """Frontends with their binds, backends with their enabled servers (disabled slots counted)."""
    shape = ConfigShape()
    section, name = "", ""
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].rstrip()
        if not line.strip():
            continue
        words = line.split()
        if not raw[0].isspace():
            section, name = words[0], (words[1] if len(words) > 1 else "")
            if section == "frontend":
                shape.frontends[name] = []
            elif section == "backend":
                shape.backends.append(Backend(name))
            continue
        if section == "frontend" and words[0] == "bind" and len(words) > 1:
            shape.frontends[name].append(words[1])
        elif section == "backend" and words[0] == "server" and len(words) > 2:
            if "disabled" in words[3:]:
                shape.backends[-1].disabled += 1
            else:
                shape.backends[-1].servers.append(f"{words[1]} {words[2]}")
    return shape


def pod_summary(pod: LocalHAProxyPod) -> list[str]:
    """A few lines: config version, reload/runtime counters, frontends, backends, stored files."""
    counters = pod.counters()
    shape = config_shape(pod.fake.raw())
    lines = [f"{pod.name} ({pod.ip}): config version {pod.fake.version}, reloads {counters['reloads']}, "
             f"runtime server updates {counters['runtime_server_updates']}, raw pushes {counters['raw_pushes']}"]
    for frontend, binds in shape.frontends.items():
        lines.append(f"  frontend {frontend}: bind {', '.join(binds) or '-'}")
    for backend in shape.backends:
        servers = ", ".join(backend.servers) or "no servers"
        slots = f" (+{backend.disabled} free slot{'s' if backend.disabled != 1 else ''})" if backend.disabled else ""
        lines.append(f"  backend {backend.name}: {servers}{slots}")
    stored = [f"{kind}/{name}" for kind, files in sorted(pod.storage.files.items()) for name in sorted(files)]
    if stored:
        lines.append(f"  files: {', '.join(stored)}")
    for name, stored_file in sorted(pod.storage.files.get("maps", {}).items()):
        entries = [line.strip() for line in stored_file.content.splitlines() if line.strip()]
        if entries:
            more = f" (+{len(entries) - 3} more)" if len(entries) > 3 else ""
            lines.append(f"  map {name}: {'; '.join(entries[:3])}{more}")
    return lines
