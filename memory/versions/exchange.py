"""Export and import of a whole context as one file (R56); the format is in docs/history.md.

How it works: docs/internals.md, section `memory/versions/exchange.py`."""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from memory.contexts import (
    IssuedToken,
    check_slug,
    check_slug_free,
    create_context,
    issue_token,
    set_frozen,
)
from memory.erasure.lines import erasure_lines, restore_erasures
from memory.errors import ErrorCode, InvalidRequest, MorphzError
from memory.idempotency import check_key
from memory.models import Context, TransactionRecord
from memory.processes import process_alive
from memory.shapes.exports import ExportHeader
from memory.sql import statements
from memory.versions.export_file import (
    FORMAT,
    FORMAT_VERSION,
    READABLE_VERSIONS,
    STEP_TYPES,
    ExportFile,
    InvalidExport,
    export_time,
    read_export,
)
from memory.versions.rejected import RejectedInPlace, rejected_lines
from memory.versions.replay import (
    apply_steps,
    building_scratch,
    unsynchronised_commits,
)
from memory.versions.signing import Signer, check_signature
from memory.versions.snapshot import compare, snapshot
from memory.versions.steps import SETTINGS, ReplayError, history_steps, initial_settings

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "READABLE_VERSIONS",
    "STEP_TYPES",
    "ExportFile",
    "ImportResult",
    "InvalidExport",
    "export_context",
    "import_context",
    "read_export",
]


@dataclass(frozen=True)
class ImportResult:
    context: Context
    token: IssuedToken
    steps: int


def _line(value: Mapping[str, Any]) -> bytes:
    return (json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


@contextmanager
def _export_output(path: str | Path | IO[bytes]) -> Iterator[IO[bytes]]:
    """A gzip writer for an export. To a file name it writes a temporary file beside it,
    flushed to disk and renamed over `path` only when the export completed: a killed or
    failed export leaves the previous file at `path` as it was, and no partial file."""
    if not isinstance(path, (str, Path)):
        with gzip.open(path, "wb") as out:
            yield out  # type: ignore[misc]
        return
    target = Path(path)
    _remove_abandoned_partials(target)
    temporary = target.with_name(f".{target.name}.{os.getpid()}.partial")
    try:
        with open(temporary, "wb") as raw:
            with gzip.open(raw, "wb") as out:
                yield out  # type: ignore[misc]
            raw.flush()
            os.fsync(raw.fileno())
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()
        raise


def _remove_abandoned_partials(target: Path) -> None:
    """Delete the temporary files of exports to `target` whose process is gone (killed)."""
    for partial in target.parent.glob(f".{target.name}.*.partial"):
        pid = partial.name.removeprefix(f".{target.name}.").removesuffix(".partial")
        if pid.isdigit() and not process_alive(int(pid)):
            with contextlib.suppress(FileNotFoundError):
                partial.unlink()


def export_context(
    context: Context,
    path: str | Path | IO[bytes],
    progress: Callable[[Mapping[str, Any]], None] | None = None,
) -> dict[str, int]:
    """Write `context` to `path` (a file name or a binary file object)."""
    checksum, signer = hashlib.sha256(), Signer()
    counts = {"steps": 0, "rejected": 0, "lines": 0}
    with transaction.atomic():
        # One snapshot of the history: REPEATABLE READ would be cleaner, a share lock is
        # simpler (writes to this context wait until the export has read it).
        with connection.cursor() as cur:
            cur.execute(statements("memory.versions")["share_context"], {"ctx": context.pk})
        context.refresh_from_db()
        header: ExportHeader = {
            "type": "header",
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "exported_at": timezone.now().isoformat(),
            "slug": context.slug,
            "name": context.name,
            "settings": initial_settings(context),
            "frozen": context.frozen,
            "version": context.version,
            "tick": context.tick,
            "last_seq": context.last_seq,
            "history_verified": not context.unverified_import,
        }
        with _export_output(path) as out:

            def write(value: Mapping[str, Any]) -> None:
                data = _line(value)
                checksum.update(data)
                signer.update(data)
                out.write(data)
                counts["lines"] += 1

            write(header)
            for step in history_steps(context):
                write(step)
                counts["steps"] += 1
                if progress is not None:
                    progress(step)
            for record in rejected_lines(context):
                write(record)
                counts["rejected"] += 1
            for line in erasure_lines(context):
                write(line)
            write({"type": "state", "state": snapshot(context.pk)})
            end = {"lines": counts["lines"], "sha256": checksum.hexdigest()}
            out.write(_line({"type": "end", **end, "signature": signer.signature()}))
    return counts


def import_context(
    path: str | Path | IO[bytes] | ExportFile,
    slug: str | None = None,
    progress: Callable[[Mapping[str, Any]], None] | None = None,
    *,
    allow_unverified: bool = False,
) -> ImportResult:
    """Rebuild the file's context through the engine as `slug` (default: the exported
    slug) and check it equals the file's state. `path` may be an ExportFile already read
    (`read_export`), so a caller that needs its size reads the file once. Raises InvalidExport (nothing written) when
    the file is broken or the rebuilt state differs, InvalidRequest `context_exists` when
    the slug is taken, UnverifiedExport (`invalid_signature`) when no key of this server
    signed it, unless `allow_unverified` (an admin's explicit choice): the context is then
    marked unverified (`history_verified: false` wherever its history is shown).

    Outside a transaction the rebuild runs in autocommit (see `memory.versions.replay`)
    under a temporary `import-` slug as a scratch context (never listed; removed by the next
    start if this process dies), renamed in the last transaction (which restores the
    times and rejected records, compares and issues the token) and deleted on any failure."""
    exported = path if isinstance(path, ExportFile) else read_export(path)
    check_signature(exported, allow_unverified)
    header = exported.header
    try:
        target = slug or header["slug"]
        check_slug(target)  # the rebuild runs under a scratch slug and is renamed at the end
        check_slug_free(target)
        settings = header.get("settings") or {}
        values = {name: settings[name] for name in SETTINGS if name in settings}
        name = header.get("name") or target
        if connection.in_atomic_block:
            with transaction.atomic():
                context = create_context(target, name=name, **values)
                return _rebuild(context, target, exported, progress)
        with (
            unsynchronised_commits(),
            building_scratch("import", {"name": name, **values}) as context,
        ):
            return _rebuild(context, target, exported, progress)
    except KeyError as exc:
        raise InvalidExport(f"a line lacks the field {exc}") from None


def _rebuild(
    context: Context,
    target: str,
    exported: ExportFile,
    progress: Callable[[Mapping[str, Any]], None] | None,
) -> ImportResult:
    rejected = RejectedInPlace(context, exported.rejected)
    try:
        apply_steps(
            context.pk, exported.steps, progress, compile_inputs=False, before=rejected.before
        )
    except (ReplayError, MorphzError) as exc:
        message = getattr(exc, "message", None) or str(exc)
        raise InvalidExport(f"the history does not replay: {message}") from None
    with transaction.atomic():
        with connection.cursor() as cur:  # this commit flushes the whole rebuild to disk
            cur.execute(statements("memory.versions")["synchronous_commit_local"])
        _restore_times(context, exported.steps)
        _restore_keys(context, exported.steps)
        rejected.rest()
        restore_erasures(context, exported.erasures)
        rebuilt: Mapping[str, Any] = snapshot(context.pk)
        if exported.header.get("format_version") == 1:  # its state lacks the newer parts
            rebuilt = {key: value for key, value in rebuilt.items() if key in exported.state}
        differences = compare(exported.state, rebuilt)
        if differences:
            raise InvalidExport(
                "the rebuilt context differs from the exported state: "
                + "; ".join(differences[:5]),
                details=[{"difference": d} for d in differences[:50]],
            )
        if context.slug != target:
            try:
                with transaction.atomic():
                    Context.objects.filter(pk=context.pk).update(slug=target, scratch=False)
            except IntegrityError:
                raise InvalidRequest(
                    f"a context with slug {target!r} already exists", code=ErrorCode.CONTEXT_EXISTS
                ) from None
        if exported.header.get("frozen"):
            set_frozen(context.pk, True)
        if not exported.verified or exported.header.get("history_verified") is False:
            Context.objects.filter(pk=context.pk).update(unverified_import=True)
        context.refresh_from_db()
        token = issue_token(context, name="import_context")
    return ImportResult(context=context, token=token, steps=len(exported.steps))


def _restore_times(context: Context, steps: list[dict[str, Any]]) -> None:
    """Events, commits and evaluations keep the times they were made at, not the time of
    the import (read by `export_time`: InvalidExport for one that cannot be stored). A
    commit's time is its event's; a file without evaluation times (older) leaves theirs."""
    timed = [s for s in steps if "seq" in s and s.get("created_at")]
    evaluations = [s for s in steps if s["type"] == "evaluation" and s.get("created_at")]
    with connection.cursor() as cur:
        if timed:
            cur.execute(
                statements("memory.versions")["restore_event_times"],
                {
                    "seqs": [s["seq"] for s in timed],
                    "times": [_time(s["created_at"], f"event {s['seq']}") for s in timed],
                    "ctx": context.pk,
                },
            )
            cur.execute(
                statements("memory.versions")["restore_transaction_times"], {"ctx": context.pk}
            )
        if evaluations:
            cur.execute(
                statements("memory.versions")["restore_evaluation_times"],
                {
                    "ordinals": [s["n"] for s in evaluations],
                    "times": [_time(s["created_at"], f"evaluation {s['n']}") for s in evaluations],
                    "ctx": context.pk,
                },
            )


def _time(value: Any, what: str) -> str:
    """A step's `created_at` as an ISO 8601 time to store (InvalidExport naming `what`)."""
    return export_time(value, f"created_at of {what}").isoformat()


def _restore_keys(context: Context, steps: list[dict[str, Any]]) -> None:
    """Commits keep their idempotency keys (R49): a client retrying a transaction after a
    restore gets its receipt again, not a conflict."""
    keyed = [s for s in steps if s["type"] == "transaction" and "idempotency_key" in s]
    if not keyed:
        return
    hash_chars = TransactionRecord._meta.get_field("request_hash").max_length or 0
    for s in keyed:  # a file is only checked where it is used
        where = f"transaction @e{s.get('seq')}"
        try:
            check_key(s["idempotency_key"], field=f"idempotency_key of {where}")
        except InvalidRequest as exc:
            raise InvalidExport(exc.message) from None
        if not isinstance(s.get("request_hash"), str) or len(s["request_hash"]) > hash_chars:
            raise InvalidExport(f"request_hash of {where} must be a string of hex digits")
    with connection.cursor() as cur:
        cur.execute(
            statements("memory.versions")["restore_transaction_keys"],
            {
                "versions": [s["version"] for s in keyed],
                "keys": [s["idempotency_key"] for s in keyed],
                "hashes": [s["request_hash"] for s in keyed],
                "ctx": context.pk,
            },
        )
