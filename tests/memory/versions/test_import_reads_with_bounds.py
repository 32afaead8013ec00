"""Import reads an export file once, line by line with bounded memory: a line longer than
MORPHZ_IMPORT_MAX_LINE_BYTES, or more than MORPHZ_IMPORT_MAX_BYTES uncompressed, is refused
as soon as it is seen (issue 35: a 4.3 MB gzip of one 1 GB line took import to 3.26 GB
before it was refused, and the command read the file twice)."""

from __future__ import annotations

import gzip
import tracemalloc
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from memory.contexts import create_context
from memory.tx.engine import submit_transaction
from memory.versions import exchange
from memory.versions.exchange import InvalidExport, export_context, read_export

MB = 1024 * 1024


def bomb(path: Path, size: int) -> Path:
    with gzip.open(path, "wb") as out:
        out.write(b'{"type":"header","x":"')
        chunk = b"a" * MB
        for _ in range(size // MB):
            out.write(chunk)
        out.write(b'"}\n')
    return path


def test_a_line_over_the_limit_is_refused_with_bounded_memory(tmp_path: Path) -> None:
    path = bomb(tmp_path / "bomb.jsonl.gz", 64 * MB)
    tracemalloc.start()
    try:
        with pytest.raises(InvalidExport, match="longer than 2097152 bytes"):
            read_export(path, max_line_bytes=2 * MB)
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 12 * MB  # the 64 MB line was never held


def test_a_file_over_the_total_limit_is_refused(db: Any, tmp_path: Path) -> None:
    context = create_context("many")
    for n in range(20):
        submit_transaction(context.pk, text=f"(context-tx (derive note-{n} (a b)))")
    path = tmp_path / "many.jsonl.gz"
    export_context(context, path)
    with pytest.raises(InvalidExport, match="more than 1000 bytes uncompressed"):
        read_export(path, max_bytes=1000, max_line_bytes=MB)
    assert read_export(path).header["slug"] == "many"


def test_the_import_command_reads_the_file_once(
    db: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    context = create_context("once")
    submit_transaction(context.pk, text="(context-tx (derive note (a b)))")
    path = tmp_path / "once.jsonl.gz"
    export_context(context, path)
    opened: list[Any] = []
    real_open = gzip.open

    def counting_open(*args: Any, **kwargs: Any) -> Any:
        opened.append(args[0])
        return real_open(*args, **kwargs)

    monkeypatch.setattr(exchange.gzip, "open", counting_open)
    call_command("import_context", str(path), "--slug", "once-2", "--quiet", stdout=StringIO())
    assert len(opened) == 1
