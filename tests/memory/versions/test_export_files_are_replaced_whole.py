"""An export is written to a temporary file and renamed over its path only when complete: a
failed or killed export leaves the previous good export untouched and no partial file
(issue 35: a killed export destroyed the previous export at the same path)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memory.contexts import create_context
from memory.tx.engine import submit_transaction
from memory.versions.exchange import export_context, read_export


class Interrupted(Exception):
    pass


def test_a_failed_export_leaves_the_previous_file_as_it_was(db: Any, tmp_path: Path) -> None:
    context = create_context("kept")
    for n in range(3):
        submit_transaction(context.pk, text=f"(context-tx (derive note-{n} (a b)))")
    path = tmp_path / "kept.jsonl.gz"
    export_context(context, path)
    before = path.read_bytes()

    def interrupt(step: dict[str, Any]) -> None:
        raise Interrupted

    with pytest.raises(Interrupted):
        export_context(context, path, progress=interrupt)
    assert path.read_bytes() == before
    assert read_export(path).header["slug"] == "kept"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.jsonl.gz"]


def test_an_export_to_a_new_path_appears_only_complete(db: Any, tmp_path: Path) -> None:
    context = create_context("fresh")
    path = tmp_path / "fresh.jsonl.gz"
    seen: list[bool] = []
    export_context(context, path, progress=lambda _s: seen.append(path.exists()))
    assert path.exists() and not any(seen)
    assert read_export(path).header["slug"] == "fresh"


def test_a_killed_exports_temporary_file_is_removed_by_the_next_export(
    db: Any, tmp_path: Path
) -> None:
    import subprocess
    import sys

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    path = tmp_path / "next.jsonl.gz"
    left = tmp_path / f".next.jsonl.gz.{dead.pid}.partial"
    left.write_bytes(b"half an export")
    export_context(create_context("next"), path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["next.jsonl.gz"]
