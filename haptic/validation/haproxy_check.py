"""Validation of a rendered config with the real ``haproxy -c``.

The config and every auxiliary file are written into a private temporary directory laid out like
the HAProxy pod: the configured directories (``/etc/haproxy/maps`` …) are recreated under the
temporary root and every mention of them in the config (including ``default-path origin``) is
rewritten to point there, line by line so that HAProxy's line numbers still match the rendered
config. Results are cached by content checksum.

With ``structural=True`` a render that differs from the last config that passed ``haproxy -c`` only
in runtime-eligible server values is proven valid without running HAProxy (see ``structural``); the
result says so in ``method`` and ``structural_reason``.
"""

from __future__ import annotations

import posixpath
import re
import tempfile
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from haptic.dataplane.aux_files import AuxFiles
from haptic.templating.context import StorageDirs, sanitize_filename
from haptic.validation.checksum import content_checksum
from haptic.validation.process import AsyncCommandRunner, CommandRunner, ProcessResult, SubprocessRunner
from haptic.validation.structural import structural_check

#: ``ValidationResult.method`` values.
METHOD_HAPROXY = "haproxy -c"
METHOD_STRUCTURAL = "structural"

_LOCATION = re.compile(r"\[([^\[\]]+?):(\d+)\]")
_LEVEL = re.compile(r"^\[(ALERT|WARNING|NOTICE)\]\s*(?:\(\d+\)\s*)?:\s*(?:config\s*:\s*)?(.*)$")
_SUMMARY = re.compile(r"^(Error\(s\) found in configuration file|Fatal errors found in configuration)")


@dataclass(frozen=True)
class ConfigProblem:
    """One HAProxy complaint, mapped back to the rendered file and line when HAProxy named one."""

    message: str
    file: str | None = None
    line: int | None = None
    source: str | None = None

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}: " if self.file and self.line else ""
        text = f"{where}{self.message}"
        return f"{text}\n    > {self.source}" if self.source is not None else text


@dataclass(frozen=True)
class ValidationResult:
    valid: bool
    checksum: str
    errors: tuple[ConfigProblem, ...] = ()
    warnings: tuple[ConfigProblem, ...] = ()
    output: str = field(default="", repr=False)
    cached: bool = False
    #: how validity was established: ``"haproxy -c"`` or ``"structural"`` (proven from the last pass)
    method: str = METHOD_HAPROXY
    #: for a structural result, what was proven; else why ``haproxy -c`` had to run (empty if not tried)
    structural_reason: str = ""

    def summary(self) -> str:
        if self.valid:
            return "configuration is valid"
        return "\n".join(str(e) for e in self.errors) or "haproxy -c failed"


@dataclass(frozen=True)
class _Prepared:
    root: Path
    config_path: Path
    names: dict[str, str]  # written path (temp) → logical name (haproxy.cfg, maps/host.map …)


class HAProxyValidator:
    """Runs ``haproxy -c`` on rendered output. ``strict`` fails on unresolvable server names."""

    def __init__(
        self,
        binary: str = "haproxy",
        dirs: StorageDirs | None = None,
        *,
        strict: bool = True,
        timeout: float = 30.0,
        runner: CommandRunner | None = None,
        cache_size: int = 64,
        tmp_root: str | None = None,
        structural: bool = False,
    ) -> None:
        self.binary = binary
        self.dirs = dirs or StorageDirs()
        self.strict = strict
        self.timeout = timeout
        self.runner: CommandRunner = runner or SubprocessRunner()
        self._cache: OrderedDict[str, ValidationResult] = OrderedDict()
        self._cache_size = cache_size
        self._tmp_root = tmp_root
        self.structural = structural
        # The last config (and aux files) that haproxy -c itself accepted: the base of structural proofs.
        self._last_passed: tuple[str, AuxFiles] | None = None

    def _without_haproxy(self, config: str, aux: AuxFiles,
                         checksum: str | None) -> tuple[str, ValidationResult | None, str]:
        """The content checksum (``checksum`` when the caller has it), and a result when the cache or a structural
        proof answers without ``haproxy -c`` (else the reason it must run)."""
        checksum = checksum or content_checksum(config, aux)
        hit = self._cached(checksum, config, aux)
        if hit is not None:
            return checksum, hit, ""
        proven, reason = self._structural(checksum, config, aux)
        return checksum, proven, reason

    # -- public API ---------------------------------------------------------------------------------

    def validate(self, config: str, aux: AuxFiles | None = None, *, checksum: str | None = None) -> ValidationResult:
        aux = aux or AuxFiles()
        checksum, known, reason = self._without_haproxy(config, aux, checksum)
        if known is not None:
            return known
        with self._prepared(config, aux) as prepared:
            result = self.runner.run(self._argv(prepared), cwd=str(prepared.root), time_limit=self.timeout)
            return self._remember(self._interpret(result, checksum, config, aux, prepared), config, aux, reason)

    async def avalidate(
        self, config: str, aux: AuxFiles | None = None, *, runner: AsyncCommandRunner, checksum: str | None = None
    ) -> ValidationResult:
        """``validate`` through ``runner``; ``checksum``: the content checksum of ``config`` and ``aux`` when the
        caller worked it out already."""
        aux = aux or AuxFiles()
        checksum, known, reason = self._without_haproxy(config, aux, checksum)
        if known is not None:
            return known
        with self._prepared(config, aux) as prepared:
            result = await runner.run(self._argv(prepared), cwd=str(prepared.root), time_limit=self.timeout)
            return self._remember(self._interpret(result, checksum, config, aux, prepared), config, aux, reason)

    # -- cache ----------------------------------------------------------------------------------------

    def _key(self, checksum: str) -> str:
        return f"{checksum}:{'strict' if self.strict else 'dr'}"

    def _cached(self, checksum: str, config: str, aux: AuxFiles) -> ValidationResult | None:
        hit = self._cache.get(self._key(checksum))
        if hit is None:
            return None
        self._cache.move_to_end(self._key(checksum))
        if hit.valid and hit.method == METHOD_HAPROXY:
            self._last_passed = (config, aux)
        return replace(hit, cached=True)

    def _remember(
        self, result: ValidationResult, config: str, aux: AuxFiles, structural_reason: str = ""
    ) -> ValidationResult:
        if structural_reason:
            result = replace(result, structural_reason=structural_reason)
        self._cache[self._key(result.checksum)] = result
        while len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        if result.valid and result.method == METHOD_HAPROXY:
            self._last_passed = (config, aux)
        return result

    def _structural(self, checksum: str, config: str, aux: AuxFiles) -> tuple[ValidationResult | None, str]:
        """A structurally proven result, or None and the reason haproxy -c must run ("" if not tried)."""
        if not self.structural or self._last_passed is None:
            return None, ""
        verdict = structural_check(self._last_passed[0], self._last_passed[1], config, aux)
        if not verdict.proven:
            return None, verdict.reason
        result = ValidationResult(True, checksum, method=METHOD_STRUCTURAL, structural_reason=verdict.reason)
        # Cached without moving the base: every later proof still starts from a real haproxy -c pass.
        self._cache[self._key(checksum)] = result
        while len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return result, verdict.reason

    # -- layout ---------------------------------------------------------------------------------------

    def _argv(self, prepared: _Prepared) -> list[str]:
        argv = [self.binary, "-c", "-f", str(prepared.config_path)]
        if not self.strict:
            argv.insert(1, "-dr")
        return argv

    def _rewriter(self, root: Path) -> re.Pattern[str]:
        candidates = {
            self.dirs.maps_dir,
            self.dirs.ssl_certs_dir,
            self.dirs.general_storage_dir,
            self.dirs.base_dir,
            posixpath.dirname(self.dirs.config_file),
        }
        dirs = sorted((d.rstrip("/") for d in candidates if d and d.rstrip("/")), key=len, reverse=True)
        # No leading look-behind: the regex engine then scans for the directories' first characters (30x faster
        # over a big config); ``relocate`` checks what precedes each match.
        return re.compile(r"(" + "|".join(re.escape(d) for d in dirs) + r")(?=/|\s|$|\"|')")

    def relocate(self, text: str, root: Path) -> str:
        """Rewrites every configured directory in ``text`` into ``root`` (line count unchanged); a directory
        that continues a path or a word (after a word character, ``.``, ``/`` or ``-``) is not one."""
        pattern = self._rewriter(root)
        prefix = str(root)
        pieces: list[str] = []
        at = copied = 0
        while (match := pattern.search(text, at)) is not None:
            start = match.start()
            if start and (text[start - 1].isalnum() or text[start - 1] in "_./-"):
                at = start + 1
                continue
            pieces += (text[copied:start], prefix, match.group(1))
            copied = at = match.end()
        pieces.append(text[copied:])
        return "".join(pieces)

    @contextmanager
    def _prepared(self, config: str, aux: AuxFiles) -> Iterator[_Prepared]:
        with tempfile.TemporaryDirectory(prefix="haptic-validate-", dir=self._tmp_root) as tmp:
            root = Path(tmp)
            names: dict[str, str] = {}

            def write(directory: str, name: str, content: str) -> None:
                target_dir = root / directory.lstrip("/")
                target_dir.mkdir(parents=True, exist_ok=True)
                target = target_dir / name
                target.write_text(content)
                names[str(target)] = posixpath.join(posixpath.basename(directory.rstrip("/")), name)

            for name, content in aux.maps.items():
                write(self.dirs.maps_dir, posixpath.basename(name), content)
            for name, content in aux.files.items():
                write(self.dirs.general_storage_dir, posixpath.basename(name), content)
            for name, content in aux.certificates.items():
                write(self.dirs.ssl_certs_dir, sanitize_filename(posixpath.basename(name)), content)
            for name, content in aux.crt_lists.items():
                relocated = self.relocate(content, root)
                write(self.dirs.general_storage_dir, sanitize_filename(posixpath.basename(name)), relocated)
            for directory in (self.dirs.maps_dir, self.dirs.ssl_certs_dir, self.dirs.general_storage_dir):
                (root / directory.lstrip("/")).mkdir(parents=True, exist_ok=True)
            config_path = root / "haproxy.cfg"
            config_path.write_text(self.relocate(config, root))
            names[str(config_path)] = "haproxy.cfg"
            yield _Prepared(root, config_path, names)

    # -- output ---------------------------------------------------------------------------------------

    def _interpret(
        self, result: ProcessResult, checksum: str, config: str, aux: AuxFiles, prepared: _Prepared
    ) -> ValidationResult:
        output = (result.stdout + "\n" + result.stderr).strip()
        root = str(prepared.root)
        lines = config.split("\n")
        errors: list[ConfigProblem] = []
        warnings: list[ConfigProblem] = []
        summaries: list[ConfigProblem] = []
        for raw in output.splitlines():
            match = _LEVEL.match(raw.strip())
            if match is None:
                continue
            level, message = match.groups()
            if level == "NOTICE":
                continue
            file = line = source = None
            location = _LOCATION.search(message)
            if location is not None and location.group(1) in prepared.names:
                file = prepared.names[location.group(1)]
                line = int(location.group(2))
                if file == "haproxy.cfg" and 1 <= line <= len(lines):
                    source = lines[line - 1].strip()
                message = message.replace(location.group(0), f"[{file}:{line}]")
                message = re.sub(r"^parsing \[[^\]]+\]\s*:\s*", "", message)
            message = message.replace(root, "")
            problem = ConfigProblem(message, file, line, source)
            if level == "WARNING":
                warnings.append(problem)
            elif _SUMMARY.match(message):
                summaries.append(problem)
            else:
                errors.append(problem)
        valid = result.returncode == 0
        if not valid and not errors:
            fallback = output.replace(root, "") or f"haproxy exited with {result.returncode}"
            errors = summaries or [ConfigProblem(fallback)]
        return ValidationResult(valid, checksum, tuple(errors) if not valid else (), tuple(warnings), output)
