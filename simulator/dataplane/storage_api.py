"""The fake's storage endpoints: maps, general files, SSL certificates and crt-lists.

Statuses follow the real handlers: an upload of a map or general file is 201 without a reload (the
config does not change); replacing one schedules a reload (202 + ``Reload-ID``; 204 with
``skip_reload`` or after a ``force_reload``); a certificate is pushed through the runtime API when
haproxy knows it (200 / 201), otherwise a reload is scheduled; deleting a certificate reloads;
deleting a file the configuration references by its full path is refused (409).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from simulator.dataplane.api_model import Answer, ApiError
from simulator.dataplane.storage import InvalidCertificateError, StoredFile, certificate_info, sanitize_name

if TYPE_CHECKING:
    from simulator.dataplane.instance import FakeDataplane

__all__ = ["CRT_LISTS", "StorageEndpoints"]

# crt-list files have their own storage endpoints; they live in the certificates directory (a file
# there without a PEM block is a crt-list, one with it a certificate).
CRT_LISTS = "ssl_crt_lists"


def is_crt_list(content: str) -> bool:
    return "-----BEGIN" not in content


def crt_list_entries(content: str) -> list[dict[str, Any]]:
    """A crt-list's lines as the API's ``ssl_crt_list_entry`` models."""
    entries: list[dict[str, Any]] = []
    for number, raw in enumerate(content.split("\n"), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        file, _, rest = line.partition(" ")
        entry: dict[str, Any] = {"file": file, "line_number": number}
        rest = rest.strip()
        if rest.startswith("["):
            config, _, rest = rest[1:].partition("]")
            entry["ssl_bind_config"] = config.strip()
        filters = rest.split()
        if filters:
            entry["sni_filter"] = filters
        entries.append(entry)
    return entries


class StorageEndpoints:
    def __init__(self, fake: FakeDataplane) -> None:
        self.fake = fake

    def _kind_dir(self, kind: str) -> str:
        return "ssl_certificates" if kind == CRT_LISTS else kind

    def _check_certificate(self, content: str) -> dict[str, Any]:
        try:
            return certificate_info(content)
        except InvalidCertificateError as exc:
            raise ApiError(400, str(exc)) from exc

    def _body(self, kind: str, name: str, content: str, description: str) -> dict[str, Any]:
        body: dict[str, Any] = {
            "storage_name": name,
            "file": self.fake.storage.pod_path(self._kind_dir(kind), name),
            "description": description,
            "size": len(content.encode()),
        }
        if kind == "ssl_certificates":
            body.update(self._check_certificate(content))
        return body

    def listing(self, kind: str) -> list[dict[str, Any]]:
        if kind not in (CRT_LISTS, "ssl_certificates"):
            return self.fake.storage.listing(kind)
        wanted = kind == CRT_LISTS
        out = []
        for item in self.fake.storage.listing("ssl_certificates"):
            stored = self.fake.storage.get("ssl_certificates", item["storage_name"])
            if stored is not None and is_crt_list(stored.content) == wanted:
                out.append({**item, "description": "managed certificate list"} if wanted else item)
        return out

    def crt_list_entries(self, name: str) -> list[dict[str, Any]]:
        stored = self.fake.storage.get("ssl_certificates", name)
        if stored is None or not is_crt_list(stored.content):
            raise ApiError(404, f"crt-list {name} not found")
        return crt_list_entries(stored.content)

    async def add_crt_list_entry(self, name: str, entry: dict[str, Any], *, force_reload: bool = False) -> Answer:
        file = str(entry.get("file") or "")
        if not file:
            raise ApiError(400, "missing certificate file name")
        line = file
        if entry.get("ssl_bind_config"):
            line += f" [{entry['ssl_bind_config']}]"
        if entry.get("sni_filter"):
            line += " " + " ".join(str(f) for f in entry["sni_filter"])
        stored = self.fake.storage.get("ssl_certificates", name)
        self.fake.storage.put("ssl_certificates", name, (stored.content if stored else "") + line + "\n")
        # The fake does not add crt-list entries at runtime: the API then forces a reload.
        await self.fake.force_reload()
        return Answer(201, body=entry)

    async def delete_crt_list_entry(self, name: str, certificate: str, line_number: int | None,
                                    *, force_reload: bool = False) -> Answer:
        stored = self.fake.storage.get("ssl_certificates", name)
        if stored is None or not is_crt_list(stored.content):
            raise ApiError(404, f"crt-list {name} not found")
        kept, removed = [], False
        for number, line in enumerate(stored.content.split("\n"), start=1):
            if not removed and line.startswith(certificate) and line_number in (None, number):
                removed = True
                continue
            kept.append(line)
        self.fake.storage.put("ssl_certificates", name, "\n".join(kept))
        await self.fake.force_reload()
        return Answer(204)

    async def create(self, kind: str, name: str, content: str, *, skip_reload: bool = False,
                     force_reload: bool = False) -> Answer:
        fake = self.fake
        directory = self._kind_dir(kind)
        name = sanitize_name(directory, name)
        if fake.storage.get(directory, name) is not None:
            raise ApiError(409, f"file {name} already exists")
        if kind == "ssl_certificates":
            self._check_certificate(content)
        fake.storage.put(directory, name, content)
        if kind == "maps":
            return Answer(201, body=self._body(kind, name, content, "managed but not loaded map file (no runtime ID)"))
        if kind == "general":
            return Answer(201, body=self._body(kind, name, content, "managed general use file"))
        description = "managed SSL file" if kind == "ssl_certificates" else "managed certificate list"
        body = self._body(kind, name, content, description)
        if kind == CRT_LISTS:
            return await fake.after_write(201, body, force=force_reload)
        if skip_reload or force_reload:
            return await fake.after_write(201, body, skip=skip_reload, force=force_reload)
        # ``new ssl cert`` + ``set`` + ``commit``: haproxy knows the certificate from now on.
        path = fake.storage.pod_path(directory, name)
        if await self._push_certificate(path, content, new=True):
            return Answer(201, body=body)
        return await fake.after_write(201, body)

    async def _push_certificate(self, path: str, content: str, *, new: bool) -> bool:
        fake = self.fake
        if not fake.runtime_available or (not new and path not in fake.haproxy.certificates):
            return False
        if fake.driver is not None:
            if new and await fake.driver.runtime([f"new ssl cert {path}"]) is not None:
                return False
            if await fake.driver.set_certificate(path, content) is not None:
                return False
        fake.haproxy.certificates.add(path)
        fake.counters.runtime_cert_updates += 1
        return True

    def _existing(self, kind: str, name: str) -> tuple[str, StoredFile]:
        directory = self._kind_dir(kind)
        stored = self.fake.storage.get(directory, name)
        if stored is None:
            raise ApiError(404, f"file {name} not found")
        return directory, stored

    async def replace(self, kind: str, name: str, content: str, *, skip_reload: bool = False,
                      force_reload: bool = False) -> Answer:
        fake = self.fake
        directory, stored = self._existing(kind, name)
        if kind == "ssl_certificates":
            self._check_certificate(content)
        fake.storage.put(directory, name, content)
        if kind != "ssl_certificates":
            if kind == CRT_LISTS:
                body = self._body(kind, name, content, "managed certificate list")
                return await fake.after_write(200, body, skip=skip_reload, force=force_reload)
            return await fake.after_write(204, skip=skip_reload, force=force_reload)
        body = self._body(kind, name, content, "managed SSL file")
        if skip_reload or force_reload:
            return await fake.after_write(200, body, skip=skip_reload, force=force_reload)
        # A certificate haproxy loaded (directly or through a crt-list) under the path the API
        # uses is replaced at runtime; any other change takes effect at the next reload.
        if await self._push_certificate(stored.path, content, new=False):
            return Answer(200, body=body)
        return await fake.after_write(200, body)

    async def delete(self, kind: str, name: str, *, skip_reload: bool = False, force_reload: bool = False) -> Answer:
        fake = self.fake
        directory, stored = self._existing(kind, name)
        referencing = fake.document.referencing_line(stored.path)
        if referencing is not None:
            number, line = referencing
            raise ApiError(409, f"rejecting attempt to delete file {stored.path} referenced in haproxy conf "
                                f"at line {number}: {line}")
        fake.storage.delete(directory, name)
        if kind in ("maps", "general"):
            return Answer(204)
        return await fake.after_write(204, skip=skip_reload, force=force_reload)

    def get(self, kind: str, name: str) -> Answer:
        _, stored = self._existing(kind, name)
        if kind == "ssl_certificates":
            return Answer(200, body=self._body(kind, name, stored.content, "managed SSL file"))
        return Answer(200, text=stored.content, media_type="application/octet-stream")
