"""Replay and import outside a database transaction (how the commands run them): steps in
autocommit into a scratch context that is gone afterwards, whatever the outcome."""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

import pytest
from django.db import connection

from memory.contexts import create_context
from memory.demo.player import DemoPlayer
from memory.models import Context
from memory.versions.exchange import InvalidExport, export_context, import_context
from memory.versions.replay import verify_context

pytestmark = pytest.mark.django_db(transaction=True)


def _demo() -> Context:
    context = create_context("demo", name="demo")
    DemoPlayer(context).play()
    context.refresh_from_db()
    return context


def _slugs() -> set[str]:
    return set(Context.objects.values_list("slug", flat=True))


@pytest.mark.no_replay_check("it changes stored state behind the engine to see it reported")
def test_verify_in_autocommit_leaves_no_scratch_context() -> None:
    demo = _demo()
    assert not connection.in_atomic_block
    assert verify_context(demo) == []
    with connection.cursor() as cur:
        cur.execute("UPDATE memory_frame SET protected = NOT protected WHERE frame_id = 'release'")
    differences = verify_context(demo)
    assert any(d.startswith("frames.release.protected") for d in differences), differences
    assert _slugs() == {"demo"}
    with connection.cursor() as cur:
        cur.execute("SHOW synchronous_commit")
        assert cur.fetchone() == ("on",)


def test_import_in_autocommit_renames_on_success_and_deletes_on_failure(tmp_path: Path) -> None:
    demo = _demo()
    path = tmp_path / "demo.jsonl.gz"
    export_context(demo, path)
    result = import_context(path, slug="demo-copy")
    assert result.context.slug == "demo-copy"
    assert _slugs() == {"demo", "demo-copy"}
    assert verify_context(result.context) == []

    with gzip.open(path, "rb") as f:
        lines = f.read().splitlines(keepends=True)
    state = json.loads(lines[-2])
    state["state"]["counters"]["tick"] += 1
    lines[-2] = (json.dumps(state, ensure_ascii=False) + "\n").encode()
    digest = hashlib.sha256(b"".join(lines[:-1])).hexdigest()
    lines[-1] = (
        json.dumps({"type": "end", "lines": len(lines) - 1, "sha256": digest}) + "\n"
    ).encode()
    forged = tmp_path / "forged.jsonl.gz"
    with gzip.open(forged, "wb") as f:
        f.write(b"".join(lines))
    with pytest.raises(InvalidExport, match="differs"):
        import_context(
            forged, slug="forged", allow_unverified=True
        )  # past the signature: the replay check
    assert _slugs() == {"demo", "demo-copy"}
