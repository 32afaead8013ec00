"""The context export file (R56) as read: its format constants, its parts, and
`read_export`, which checks a whole file before anything is written. The format is in
docs/history.md; `memory.versions.exchange` writes and imports it.
"""

from __future__ import annotations

import gzip
import hashlib
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import IO, Any, cast

from memory.errors import ErrorCode, InvalidRequest, MorphzError
from memory.shapes.exports import ExportHeader
from memory.strictjson import loads_strict
from memory.times import read_time
from memory.versions.signing import Signer

FORMAT = "morphz-context"
FORMAT_VERSION = 2
READABLE_VERSIONS = (1, 2)  # 1: no settings lines, and the state has no logs of settings
STEP_TYPES = ("event", "evaluation", "transaction", "settings")


class InvalidExport(MorphzError):
    code = ErrorCode.INVALID_EXPORT


def export_time(value: Any, where: str) -> datetime:
    """A time of a line (`memory.times.read_time`: in UTC, as exports write them);
    InvalidExport naming `where` (`created_at of event 3`) when it is no time to store."""
    try:
        return read_time(value, where)
    except InvalidRequest as exc:
        raise InvalidExport(exc.message) from None


@dataclass
class ExportFile:
    header: ExportHeader
    steps: list[dict[str, Any]] = field(default_factory=list)
    rejected: list[dict[str, Any]] = field(default_factory=list)
    state: dict[str, Any] = field(default_factory=dict)
    erasures: list[dict[str, Any]] = field(default_factory=list)
    verified: bool = False  # signed by a key of this server (memory.versions.signing)


def _bounded_lines(source: gzip.GzipFile, max_line: int, max_total: int) -> Iterator[bytes]:
    """The decompressed lines of `source`, each read with at most `max_line` + 1 bytes in
    memory: a longer line, or more than `max_total` bytes in all, is refused as soon as it
    is seen (a small gzip of one 1 GB line once took an import to 3.26 GB)."""
    total = 0
    number = 0
    while True:
        raw = source.readline(max_line + 1)
        if not raw:
            return
        number += 1
        if len(raw) > max_line:
            raise InvalidExport(
                f"line {number} is longer than {max_line} bytes "
                "(MORPHZ_IMPORT_MAX_LINE_BYTES); the file is refused"
            )
        total += len(raw)
        if total > max_total:
            raise InvalidExport(
                f"the file holds more than {max_total} bytes uncompressed "
                "(MORPHZ_IMPORT_MAX_BYTES); the file is refused"
            )
        yield raw


def read_export(
    path: str | Path | IO[bytes],
    *,
    max_line_bytes: int | None = None,
    max_bytes: int | None = None,
) -> ExportFile:
    """The whole file, checked; InvalidExport names what is wrong. Lines longer than
    `max_line_bytes` or files larger than `max_bytes` uncompressed (defaults: settings
    MORPHZ_IMPORT_MAX_LINE_BYTES, MORPHZ_IMPORT_MAX_BYTES) are refused while reading."""
    from django.conf import settings

    max_line = max_line_bytes or settings.MORPHZ_IMPORT_MAX_LINE_BYTES
    max_total = max_bytes or settings.MORPHZ_IMPORT_MAX_BYTES
    checksum, signer = hashlib.sha256(), Signer()
    lines: list[dict[str, Any]] = []
    end: dict[str, Any] | None = None
    try:
        with gzip.open(path, "rb") as source:
            for number, raw in enumerate(_bounded_lines(source, max_line, max_total), start=1):
                if end is not None:
                    raise InvalidExport(f"line {number}: data after the closing line")
                try:
                    value = loads_strict(raw)
                except ValueError as exc:  # malformed, NaN, or a key given twice
                    raise InvalidExport(f"line {number} is not valid JSON: {exc}"[:300]) from None
                if not isinstance(value, dict) or not isinstance(value.get("type"), str):
                    raise InvalidExport(f"line {number} has no type")
                if value["type"] == "end":
                    end = value
                    continue
                checksum.update(raw)
                signer.update(raw)
                lines.append(value)
    except (FileNotFoundError, IsADirectoryError, PermissionError) as exc:
        raise InvalidExport(f"cannot read the file: {exc.strerror}: {exc.filename}") from None
    except (OSError, EOFError, zlib.error) as exc:
        raise InvalidExport(f"the file is not a complete gzip file ({exc})") from None
    header = _checked_header(lines)
    if end is None:
        raise InvalidExport("the file is truncated: its closing line is missing")
    if end.get("lines") != len(lines) or end.get("sha256") != checksum.hexdigest():
        raise InvalidExport(
            "the file was changed or truncated: its checksum does not match its contents"
        )
    exported = ExportFile(header=header, verified=signer.verify(end.get("signature")))
    _sort_lines(exported, lines)
    if not exported.state:
        raise InvalidExport("the file has no state line to verify against")
    return exported


def _checked_header(lines: list[dict[str, Any]]) -> ExportHeader:
    if not lines or lines[0].get("type") != "header":
        raise InvalidExport("the file does not start with a header line")
    header = lines[0]
    if header.get("format") != FORMAT:
        raise InvalidExport(f"not a {FORMAT} file")
    if header.get("format_version") not in READABLE_VERSIONS:
        raise InvalidExport(
            f"format version {header.get('format_version')!r} is not supported "
            f"(this server reads versions {', '.join(map(str, READABLE_VERSIONS))})"
        )
    return cast(ExportHeader, header)  # its other fields are checked where they are read


def _sort_lines(exported: ExportFile, lines: list[dict[str, Any]]) -> None:
    """Put each line after the header in its place; an unknown line type is refused."""
    for number, value in enumerate(lines[1:], start=2):
        kind = value["type"]
        if kind in STEP_TYPES:
            exported.steps.append(value)
        elif kind == "rejected":
            exported.rejected.append(value)
        elif kind == "erasure":
            exported.erasures.append(value)
        elif kind == "state" and isinstance(value.get("state"), dict):
            exported.state = value["state"]
        else:
            raise InvalidExport(f"line {number}: unknown line type {kind!r}")
