"""Search's meaning stage with pgvector against the Python fallback, in one run.

    .venv/bin/python bench/bench_pgvector.py [--copies 2] [--questions 300]

Loads the LoCoMo dev file's turns (`bench_locomo.load`) `--copies` times into one context
(so the context holds more than `semantic.NEAR_SCAN` documents), then asks its questions,
each three ways interleaved: search as configured (nearest documents found in SQL,
`vector_column.used`), the same with the Python path (MORPHZ_SEARCH_PGVECTOR off) and the
lexical ranking alone. Prints p50/p95 of the nearest-neighbour step (`near.closest`) and
of the whole search for each, their ratios, and how many answers agree hit for hit.
Uses its own database (MORPHZ_BENCH_DB, default morphz_bench_pgvector), re-created."""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path
from typing import Any

from bench_locomo import DATA, load
from common import percentile, setup_django


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--copies", type=int, default=2)
    parser.add_argument("--questions", type=int, default=300)
    args = parser.parse_args()
    os.environ.setdefault("MORPHZ_BENCH_DB", "morphz_bench_pgvector")
    conversations = load(args.data, set(), set())
    setup_django(fresh=True)
    from django.db import connection
    from django.test.utils import override_settings

    from memory.contexts import create_context
    from memory.search import near as near_step
    from memory.search import semantic, vector_column
    from memory.search.indexer import drain
    from memory.search.query import forget_statistics, search
    from memory.timeline.events import append_event

    if not vector_column.available():
        raise SystemExit("this database has no pgvector: nothing to compare")
    context = create_context("locomo-all", capacity_tokens=10**9)
    for copy in range(args.copies):
        for conv in conversations:
            for _, content, payload in conv.turns:
                append_event(
                    context.pk,
                    kind="user_message",
                    content=content,
                    payload={**payload, "copy": copy},
                )
    drain(batch_size=500)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memory_searchdocument")
        cursor.execute("SELECT count(*) FROM memory_searchdocument")
        (documents,) = cursor.fetchone()
    forget_statistics()
    questions = [q for conv in conversations for q, _, _ in conv.questions][: args.questions]

    near_ms: list[float] = []
    original = near_step.closest

    def timed(*a: Any, **kw: Any) -> Any:
        began = time.perf_counter()
        try:
            return original(*a, **kw)
        finally:
            near_ms.append((time.perf_counter() - began) * 1000)

    near_step.closest = timed

    def lexical(q: str) -> Any:
        words, semantic.MIN_WORDS = semantic.MIN_WORDS, 1 << 30
        try:
            return search(context.pk, q)
        finally:
            semantic.MIN_WORDS = words

    def python(q: str) -> Any:
        with override_settings(MORPHZ_SEARCH_PGVECTOR=False):
            return search(context.pk, q)

    systems = {"pgvector": lambda q: search(context.pk, q), "python": python, "lexical": lexical}
    whole: dict[str, list[float]] = {name: [] for name in systems}
    near: dict[str, list[float]] = {"pgvector": [], "python": []}
    agree = 0
    for q in questions:
        answers = {}
        for name, run in systems.items():
            near_ms.clear()
            began = time.perf_counter()
            answers[name] = [(h["ref"], round(h["score"], 6)) for h in run(q)["hits"]]
            whole[name].append((time.perf_counter() - began) * 1000)
            if name in near and near_ms:
                near[name].append(near_ms[0])
        agree += answers["pgvector"] == answers["python"]

    def p(values: list[float], q: float) -> float:
        return statistics.median(values) if q == 50 else percentile(values, q)

    print(f"{documents} documents in one context, {len(questions)} questions")
    for label, table in (("nearest-neighbour step", near), ("whole search", whole)):
        for name, values in table.items():
            print(f"  {label}, {name}: p50 {p(values, 50):.2f} ms, p95 {p(values, 95):.2f} ms")
        a, b = table["pgvector"], table["python"]
        print(
            f"  {label}, pgvector / python: p50 {p(a, 50) / p(b, 50):.2f}x, "
            f"p95 {p(a, 95) / p(b, 95):.2f}x"
        )
    print(f"answers identical hit for hit: {agree} / {len(questions)}")


if __name__ == "__main__":
    main()
