"""Export and import (R56): one gzip JSON Lines file rebuilds an equal context; a truncated
or tampered file is refused with a clear error and writes nothing."""

from __future__ import annotations

import gzip
import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from memory.contexts import authenticate_token, create_context
from memory.demo.player import DemoPlayer
from memory.errors import InvalidRequest
from memory.models import Context, Event, TransactionRecord
from memory.tx.engine import submit_transaction
from memory.versions.exchange import InvalidExport, export_context, import_context, read_export
from memory.versions.replay import compare, snapshot, verify_context
from memory.versions.signing import UnverifiedExport


@pytest.fixture
def demo(db: Any) -> Context:
    context = create_context("demo", name="demo", grace_ticks=3)
    DemoPlayer(context).play()
    with pytest.raises(Exception):  # noqa: B017 - a rejected transaction travels too
        submit_transaction(context.pk, text="(context-tx (revise nothing (a b)))")
    context.refresh_from_db()
    return context


@pytest.fixture
def exported(demo: Context, tmp_path: Path) -> Path:
    path = tmp_path / "demo.jsonl.gz"
    export_context(demo, path)
    return path


def _lines(path: Path) -> list[bytes]:
    with gzip.open(path, "rb") as f:
        return f.read().splitlines(keepends=True)


def _write(path: Path, lines: list[bytes]) -> None:
    with gzip.open(path, "wb") as f:
        f.write(b"".join(lines))


def test_export_then_import_verifies_equal(demo: Context, exported: Path) -> None:
    lines = _lines(exported)
    header = json.loads(lines[0])
    assert (header["format"], header["format_version"], header["slug"]) == (
        "morphz-context",
        2,
        "demo",
    )
    assert json.loads(lines[-1])["type"] == "end"
    result = import_context(exported, slug="demo-copy")
    copy = result.context
    assert compare(snapshot(demo.pk), snapshot(copy.pk)) == []
    assert verify_context(copy) == []
    assert (copy.version, copy.tick, copy.last_seq) == (demo.version, demo.tick, demo.last_seq)
    assert TransactionRecord.objects.filter(context=copy, status="rejected").count() == 1
    first = Event.objects.get(context=demo, seq=1).created_at
    assert Event.objects.get(context=copy, seq=1).created_at == first
    token = authenticate_token(result.token.raw)
    assert token is not None and token.context.slug == "demo-copy"


def test_import_into_a_taken_slug_is_refused(exported: Path) -> None:
    with pytest.raises(Exception) as caught:
        import_context(exported)
    assert getattr(caught.value, "code", None) == "context_exists"


def _count() -> int:
    return Context.objects.count()


@pytest.mark.parametrize("damage", ["truncate-gzip", "drop-end", "drop-step", "edit-text"])
def test_damaged_files_are_refused_and_write_nothing(
    exported: Path, tmp_path: Path, damage: str
) -> None:
    damaged = tmp_path / "damaged.jsonl.gz"
    lines = _lines(exported)
    if damage == "truncate-gzip":
        raw = exported.read_bytes()
        damaged.write_bytes(raw[: len(raw) // 2])
    elif damage == "drop-end":
        _write(damaged, lines[:-1])
    elif damage == "drop-step":
        _write(damaged, lines[:5] + lines[6:])
    else:
        _write(damaged, [line.replace(b"ship-v1", b"ship-v9") for line in lines])
    before = _count()
    with pytest.raises(InvalidExport) as caught:
        import_context(damaged, slug="broken")
    assert caught.value.code == "invalid_export"
    assert caught.value.message
    assert _count() == before
    assert not Context.objects.filter(slug="broken").exists()


def test_a_consistent_but_false_state_is_refused(exported: Path, tmp_path: Path) -> None:
    """Someone rewrote the state line and fixed the checksum: the replay check catches it."""
    lines = _lines(exported)
    state = json.loads(lines[-2])
    state["state"]["counters"]["used_tokens"] += 1
    lines[-2] = (json.dumps(state, ensure_ascii=False) + "\n").encode()
    import hashlib

    digest = hashlib.sha256(b"".join(lines[:-1])).hexdigest()
    lines[-1] = (
        json.dumps({"type": "end", "lines": len(lines) - 1, "sha256": digest}) + "\n"
    ).encode()
    forged = tmp_path / "forged.jsonl.gz"
    _write(forged, lines)
    read_export(forged)  # the file itself is well formed
    with pytest.raises(InvalidExport) as caught:
        import_context(
            forged, slug="forged", allow_unverified=True
        )  # past the signature: the replay check
    assert "differs" in caught.value.message
    assert not Context.objects.filter(slug="forged").exists()


def test_commands_round_trip(demo: Context, tmp_path: Path) -> None:
    path = tmp_path / "cmd.jsonl.gz"
    out = StringIO()
    call_command("export_context", "demo", str(path), "--quiet", stdout=out)
    assert "exported demo" in out.getvalue()
    out = StringIO()
    call_command("import_context", str(path), "--slug", "demo-2", "--quiet", stdout=out)
    token = authenticate_token(out.getvalue().strip().splitlines()[-1])
    assert token is not None and token.context.slug == "demo-2"
    path.write_bytes(b"not gzip")
    with pytest.raises(CommandError, match="invalid_export"):
        call_command("import_context", str(path), "--slug", "demo-3", "--quiet")


def test_a_format_1_file_still_imports(exported: Path, tmp_path: Path) -> None:
    """Version 1 had no settings lines and no logs in its state; it is still read."""
    import hashlib

    lines = [json.loads(line) for line in _lines(exported)[:-1]]
    assert lines[0]["format_version"] == 2
    lines[0]["format_version"] = 1
    lines = [line for line in lines if line["type"] != "settings"]
    for line in lines:
        if line["type"] == "state":
            del line["state"]["maintenance"], line["state"]["settings"]
    raw = [(json.dumps(line, ensure_ascii=False) + "\n").encode() for line in lines]
    digest = hashlib.sha256(b"".join(raw)).hexdigest()
    raw.append((json.dumps({"type": "end", "lines": len(raw), "sha256": digest}) + "\n").encode())
    old = tmp_path / "v1.jsonl.gz"
    _write(old, raw)
    with pytest.raises(UnverifiedExport):  # unsigned: only on purpose
        import_context(old, slug="demo-v1")
    copy = import_context(old, slug="demo-v1", allow_unverified=True).context
    assert verify_context(copy) == []
    assert copy.unverified_import
    assert copy.grace_ticks == 3


@pytest.mark.parametrize("slug", ["Bad Slug", "a/b", ""])
def test_an_import_under_a_bad_slug_is_refused_before_anything_is_written(
    exported: Path, slug: str
) -> None:
    # "" means the exported slug (taken here); the others would make unreachable URLs.
    before = _count()
    with pytest.raises(InvalidRequest) as caught:
        import_context(exported, slug=slug or "Bad Slug")
    assert "slug" in caught.value.message
    assert _count() == before


def test_a_missing_file_is_named_as_missing(tmp_path: Path) -> None:
    with pytest.raises(InvalidExport) as caught:
        read_export(tmp_path / "nowhere.jsonl.gz")
    assert "No such file" in caught.value.message
    assert "gzip" not in caught.value.message


def test_a_line_with_a_key_given_twice_is_refused(exported: Path, tmp_path: Path) -> None:
    lines = _lines(exported)
    doubled = tmp_path / "doubled.jsonl.gz"
    _write(
        doubled,
        [lines[0].replace(b'{"type":"header"', b'{"type":"header","type":"header"'), *lines[1:]],
    )
    with pytest.raises(InvalidExport) as caught:
        read_export(doubled)
    assert "line 1" in caught.value.message
