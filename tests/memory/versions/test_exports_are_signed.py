"""Signed exports (R65): an edited export with its checksum recomputed is refused; rotated
keys still verify; an unverified import happens only on purpose and is marked; tombstones
travel with the export."""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest
from django.test import override_settings

from memory.contexts import create_context
from memory.erasure.erase import erase
from memory.models import Context, Erasure
from memory.shapes import context_json
from memory.timeline.events import append_event
from memory.tx.engine import Author, submit_transaction
from memory.versions.exchange import export_context, import_context, read_export
from memory.versions.signing import UnverifiedExport


@pytest.fixture
def small(db: Any) -> Context:
    ctx = create_context("small")
    append_event(ctx.pk, kind="user_message", content="secret plan: launch at dawn")
    submit_transaction(
        ctx.pk,
        text="(context-tx (derive plan (from @e1) (when dawn)))",
        author=Author("a", "agent"),
    )
    return Context.objects.get(pk=ctx.pk)


def _lines(path: Path) -> list[bytes]:
    return gzip.decompress(path.read_bytes()).splitlines(keepends=True)


def _forge_author(path: Path, out: Path) -> None:
    """Back-date the history (times are not in the state) and recompute the plain
    checksum, as a forger would."""
    lines = [re.sub(rb'"created_at":"\d{4}', b'"created_at":"2019', line) for line in _lines(path)]
    body = lines[:-1]
    end = {"type": "end", "lines": len(body), "sha256": hashlib.sha256(b"".join(body)).hexdigest()}
    out.write_bytes(gzip.compress(b"".join(body) + json.dumps(end).encode() + b"\n"))


def test_a_forged_export_is_refused(small: Context, tmp_path: Path) -> None:
    path, forged = tmp_path / "a.gz", tmp_path / "forged.gz"
    export_context(small, path)
    assert read_export(path).verified
    _forge_author(path, forged)
    assert b"2019" in gzip.decompress(forged.read_bytes())
    assert not read_export(forged).verified
    with pytest.raises(UnverifiedExport) as caught:
        import_context(forged, slug="forged")
    assert caught.value.code == "invalid_signature"
    assert not Context.objects.filter(slug="forged").exists()


def test_an_unverified_import_is_explicit_and_marked(small: Context, tmp_path: Path) -> None:
    path, forged = tmp_path / "a.gz", tmp_path / "forged.gz"
    export_context(small, path)
    _forge_author(path, forged)
    copy = import_context(forged, slug="forged", allow_unverified=True).context
    assert copy.unverified_import
    assert context_json(copy)["history_verified"] is False
    assert context_json(small)["history_verified"] is True
    again = tmp_path / "again.gz"
    export_context(copy, again)  # re-exported, the mark stays
    assert read_export(again).header["history_verified"] is False


def test_rotated_keys_still_verify(small: Context, tmp_path: Path) -> None:
    path = tmp_path / "a.gz"
    with override_settings(MORPHZ_EXPORT_KEYS=["old-key"]):
        export_context(small, path)
    with override_settings(MORPHZ_EXPORT_KEYS=["new-key", "old-key"]):
        assert read_export(path).verified
        copy = import_context(path, slug="rotated").context
        assert not copy.unverified_import
    with override_settings(MORPHZ_EXPORT_KEYS=["new-key"]):
        assert not read_export(path).verified


def test_tombstones_travel_with_an_export(small: Context, tmp_path: Path) -> None:
    erase(small.pk, refs=["@e1", "plan"], reason="asked", erased_by="dpo")
    path = tmp_path / "a.gz"
    export_context(small, path)
    text = gzip.decompress(path.read_bytes()).decode()
    assert "launch at dawn" not in text and "dawn" not in text.replace("█", "")
    copy = import_context(path, slug="copy").context
    kept = Erasure.objects.filter(context=copy).order_by("ref")
    assert [(t.target, t.ref, t.reason) for t in kept] == [
        ("event", "@e1", "asked"),
        ("frame", "plan", "asked"),
    ]
