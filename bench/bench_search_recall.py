"""Search and recall benchmark.

    .venv/bin/python bench/bench_search_recall.py                 # full: 10 passes, 100k frames
    .venv/bin/python bench/bench_search_recall.py --repeat 1 --frames 10000   # quick run

1. Ingest the STATE-Bench train trajectories (../shared/benchdata/state-bench) `--repeat`
   times over as events (user / agent messages, tool results) through `append_event`, then
   drain the outbox with the index worker: index throughput in characters per second, next
   to raw ICU word segmentation of the same text (the limit). Target: >= 50 %.
2. Search p50/p95 over that corpus, with queries taken from the *test* tasks' opening
   messages (its longest word, two content words, and the whole message), plus single
   frequent words, as context (search against the bare count of its documents, and flat in
   history, are the scaling table's: bench/run_all.py). (The table is ANALYZEd after the bulk load, as
   autovacuum would within a minute.)
3. Graph recall p50 (ancestors, depth 4, max_nodes 128) on a `--frames` graph (each frame
   cites three earlier frames, every tenth also an event and a relation), next to a
   hand-written recursive SQL query doing the same walk (checked: same nodes, same order)
   and returning the same rows (frame rows, event previews, relations), run unprepared
   and prepared. Target: within 1.2x of the hand-written query (the p50 is context).
4. Storage choice: the same queries against a token table (doc, token) with a btree index,
   built from the same ICU tokens, next to the tsvector/GIN index actually used.

Uses its own database (MORPHZ_BENCH_DB, default morphz_bench), dropped and re-created.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import random
import statistics
import time
from pathlib import Path

from common import percentile, setup_django, timed

DATA = Path(__file__).resolve().parents[2] / "shared" / "benchdata" / "state-bench"


def load_trajectories() -> list[tuple[str, str, str]]:
    """(kind, content, thread) for every message and tool call of the train trajectories."""
    rows = []
    for path in sorted(glob.glob(str(DATA / "train_trajectories" / "*" / "*.json"))):
        thread = "t-" + Path(path).stem[:60].replace(" ", "-")
        for message in json.loads(Path(path).read_text(encoding="utf-8"))["conversation"]:
            role, content = message.get("role"), message.get("content") or ""
            if role == "user" and content:
                rows.append(("user_message", content, thread))
            elif role == "assistant":
                for call in message.get("tool_calls") or []:
                    text = json.dumps(call, ensure_ascii=False)
                    rows.append(("tool_result", text, thread))
                if content:
                    rows.append(("agent_message", content, thread))
    return rows


def test_queries() -> list[str]:
    queries = []
    for splits in sorted(glob.glob(str(DATA / "tasks" / "*" / "splits.json"))):
        folder = Path(splits).parent
        for task_id in json.loads(Path(splits).read_text())["splits"]["test"]:
            task = json.loads((folder / f"{task_id}.json").read_text(encoding="utf-8"))
            queries.append(task["opening_message"])
    return queries


def content_words(message: str, n: int = 2) -> str:
    from memory.search.textindex import tokens

    words = sorted(
        {t for t in tokens(message) if len(t) > 3 and t.isalpha()}, key=lambda w: (-len(w), w)
    )
    return " ".join(words[:n])


def bench_index(repeat: int) -> int:
    from django.db import connection
    from icu4py.breakers import WordBreaker

    from memory.contexts import create_context
    from memory.models import SearchDocument
    from memory.search.indexer import drain
    from memory.timeline.events import append_event

    rows = load_trajectories()
    context = create_context("bench-search", capacity_tokens=2_000_000_000)
    total_chars = 0
    started = time.perf_counter()
    for n in range(repeat):
        for kind, content, thread in rows:
            append_event(context.pk, kind=kind, content=content, thread=f"{thread}-{n}")
            total_chars += len(content)
    append_seconds = time.perf_counter() - started
    print(
        f"ingest: {len(rows) * repeat} events, {total_chars:,} chars appended in {append_seconds:.1f} s"
    )

    started = time.perf_counter()
    applied = drain(batch_size=500)
    index_seconds = time.perf_counter() - started
    # What autovacuum does within a minute of a bulk load; without statistics the planner
    # takes a context of 48,000 documents for a few hundred and filters it row by row.
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memory_searchdocument")
    # Every appended event is indexed (these events have no payload): their text is the content.
    assert SearchDocument.objects.filter(context_id=context.pk).count() == len(rows) * repeat
    indexed_chars = total_chars
    texts = [content for _, content, _ in rows] * repeat
    started = time.perf_counter()
    for text in texts:
        for _ in WordBreaker(text, "root"):
            pass
    raw_seconds = time.perf_counter() - started
    index_rate, raw_rate = indexed_chars / index_seconds, total_chars / raw_seconds
    print(
        f"index: {applied} intents in {index_seconds:.1f} s = {index_rate / 1e6:.2f} M chars/s; "
        f"raw ICU segmentation {raw_rate / 1e6:.2f} M chars/s; ratio {index_rate / raw_rate:.0%} (target >= 50%)"
    )
    return context.pk


def bench_search(context_id: int, runs: int) -> dict[str, list[str]]:
    from memory.search.query import search

    messages = test_queries()
    sets = {
        "rare word": [content_words(m, 1) for m in messages if content_words(m, 1)],
        "two words": [content_words(m) for m in messages if content_words(m)],
        "whole message": messages,
        "frequent word": ["flight", "order", "refund", "customer", "booking", "the"],
    }
    for name, queries in sets.items():
        samples, hits = [], []
        for _ in range(runs):
            for q in queries:
                start = time.perf_counter()
                result = search(context_id, q)
                samples.append((time.perf_counter() - start) * 1000)
                hits.append(len(result["hits"]))
        print(
            f"search ({name}, {len(queries)} queries x {runs}): p50 {statistics.median(samples):.2f} ms, "
            f"p95 {percentile(samples, 95):.2f} ms, max {max(samples):.1f} ms, mean hits {statistics.mean(hits):.1f}"
        )
    return sets


def bench_token_table(context_id: int, sets: dict[str, list[str]]) -> None:
    """The alternative storage: one row per (document, token), btree on (context, token)."""
    from django.db import connection

    from memory.search import textindex

    with connection.cursor() as cursor:
        started = time.perf_counter()
        cursor.execute("DROP TABLE IF EXISTS bench_token")
        cursor.execute(
            "CREATE TABLE bench_token (context_id bigint, token text, doc_id bigint, tf int)"
        )
        cursor.execute(
            "INSERT INTO bench_token SELECT d.context_id, t.token, d.id, count(*) FROM memory_searchdocument d, "
            "unnest(tsvector_to_array(d.tokens)) t(token) GROUP BY 1, 2, 3"
        )
        cursor.execute("CREATE INDEX ON bench_token (context_id, token, doc_id)")
        cursor.execute("ANALYZE bench_token")
        cursor.execute(
            "SELECT pg_total_relation_size('bench_token'), pg_relation_size('search_tokens_gin')"
        )
        table_bytes, gin_bytes = cursor.fetchone()
        print(
            f"token table: built in {time.perf_counter() - started:.1f} s, {table_bytes / 1e6:.1f} MB "
            f"(GIN index on tsvector: {gin_bytes / 1e6:.1f} MB)"
        )
        for name, queries in sets.items():
            samples = []
            for q in queries:
                toks = list(dict.fromkeys(textindex.tokens(q)))[:32]
                start = time.perf_counter()
                cursor.execute(
                    "SELECT doc_id, sum(tf) AS score FROM bench_token WHERE context_id = %s AND token = ANY(%s) "
                    "GROUP BY doc_id HAVING count(*) = %s ORDER BY score DESC LIMIT 20",
                    [context_id, toks, len(toks)],
                )
                cursor.fetchall()
                samples.append((time.perf_counter() - start) * 1000)
            print(
                f"token table query ({name}): p50 {statistics.median(samples):.2f} ms, "
                f"p95 {percentile(samples, 95):.2f} ms (ids only, no snippet)"
            )
        cursor.execute("DROP TABLE bench_token")


# The same walk as memory.recall, written the textbook way: every path up to depth 4 with its
# sort key (group, position at each step), then each node at its shortest depth and smallest
# key (= breadth-first, nearest first, in the order recall lists them, each node once), the
# first 129 (a page of 128 and one to know whether there is more), with the same columns
# (frame rows, event previews) and the live relations between the nodes. Not bounded like
# recall (it enumerates every path), which is fine on this graph and gives the limit.
HAND_WRITTEN = """
WITH RECURSIVE paths(kind, id, depth, key) AS (
  SELECT 'f'::text, f.id, 0, '{}'::bigint[] FROM memory_frame f
  WHERE f.context_id = %(ctx)s AND f.frame_id = %(root)s
  UNION ALL
  SELECT n.kind, n.id, p.depth + 1, p.key || ARRAY[n.grp, n.ord]
  FROM paths p
  CROSS JOIN LATERAL (
    SELECT 0::bigint AS grp, s.i AS ord,
           CASE WHEN s.ref ~ '^@e[0-9]+$' THEN 'e' ELSE 'f' END AS kind,
           CASE WHEN s.ref ~ '^@e[0-9]+$' THEN substr(s.ref, 3)::bigint
                ELSE (SELECT f2.id FROM memory_frame f2
                      WHERE f2.context_id = %(ctx)s AND f2.frame_id = s.ref) END AS id
    FROM memory_frame src, jsonb_array_elements_text(src.sources) WITH ORDINALITY s(ref, i)
    WHERE src.id = p.id
    UNION ALL
    SELECT 1, r.id, 'f', r.object_id FROM memory_relation r
    WHERE r.subject_id = p.id AND r.removed_version IS NULL
  ) n
  WHERE p.kind = 'f' AND p.depth < 4 AND n.id IS NOT NULL
),
firsts AS (
  SELECT DISTINCT ON (kind, id) kind, id, depth, key FROM paths ORDER BY kind, id, depth, key
),
walk AS (
  SELECT row_number() OVER (ORDER BY depth, key) AS n, kind, id, depth
  FROM firsts ORDER BY depth, key LIMIT 129
)
SELECT x.n, x.kind, x.depth, f.frame_id, f.revision, f.status, f.protected, f.sources::text,
       f.body::text, f.retire_requested_tick, f.retire_due_tick, f.retire_reason,
       e.seq, e.kind, e.thread, e.is_observation, e.active, e.created_at, left(e.content, 280),
       char_length(e.content),
       (SELECT json_agg(json_build_array(r.id, r.subject_id, r.name, r.object_id))::text
        FROM memory_relation r
        WHERE r.removed_version IS NULL AND x.kind = 'f' AND r.subject_id = x.id
          AND r.object_id IN (SELECT id FROM walk WHERE kind = 'f'))
FROM walk x
LEFT JOIN memory_frame f ON x.kind = 'f' AND f.id = x.id
LEFT JOIN memory_event e ON x.kind = 'e' AND e.context_id = %(ctx)s AND e.seq = x.id
ORDER BY x.n
"""


def seed_graph(frames: int) -> int:
    from memory.contexts import create_context
    from memory.timeline.events import append_event
    from memory.tx.engine import submit_transaction

    context = create_context("bench-recall", capacity_tokens=2_000_000_000)
    rng = random.Random(4)
    logs = [
        append_event(context.pk, kind="tool_result", content=f"log {i}: " + "ok " * 50).event.ref
        for i in range(max(1, frames // 10))
    ]
    started = time.perf_counter()
    for start in range(0, frames, 400):
        ops: list[dict] = []
        for i in range(start, min(frames, start + 400)):
            sources = (
                sorted({f"g-{rng.randrange(max(0, i - 2000), i)}" for _ in range(3)}) if i else []
            )
            if i % 10 == 0:
                sources.append(logs[(i // 10) % len(logs)])
            body = {
                "n": str(i),
                "note": f"frame {i} of the recall benchmark",
                "steps": ["a", "b", "c"],
            }
            ops.append({"op": "derive", "id": f"g-{i}", "from": sources, "body": body})
            if i % 10 == 5 and i > 1:
                ops.append(
                    {
                        "op": "relate",
                        "subject": f"g-{i}",
                        "name": "depends-on",
                        "object": f"g-{rng.randrange(max(0, i - 2000), i)}",
                    }
                )
        submit_transaction(context.pk, data={"base_version": None, "reason": "seed", "ops": ops})
    print(f"recall graph: {frames} frames seeded in {time.perf_counter() - started:.1f} s")
    # Statistics, as autovacuum would gather them shortly after a bulk load: without them the
    # hand-written query got plans ~20x slower (recall's own statement does not depend on them).
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memory_frame, memory_event, memory_relation")
    return context.pk


def bench_recall(context_id: int, frames: int, runs: int) -> None:
    from django.db import connection

    from memory.models import Context
    from memory.recall.graph import recall

    context = Context.objects.get(pk=context_id)
    rng = random.Random(7)
    roots = [f"g-{rng.randrange(frames // 2, frames)}" for _ in range(runs)]
    sizes = []
    for root in roots[:20]:  # warm-up, and the size of what is returned
        sizes.append(len(recall(context, frame_id=root, depth=4, max_nodes=128)["nodes"]))

    def ours(root: str) -> None:
        recall(context, frame_id=root, depth=4, max_nodes=128)

    def hand(root: str) -> None:
        with connection.cursor() as cursor:
            cursor.execute(HAND_WRITTEN, {"ctx": context_id, "root": root})
            cursor.fetchall()

    # Like with like: the hand-written query lists the same nodes in the same order.
    for root in roots[:20]:
        ours_keys = [
            n["id"] if n["type"] == "frame" else n["ref"]
            for n in recall(context, frame_id=root, depth=4, max_nodes=128)["nodes"]
        ]
        with connection.cursor() as cursor:
            cursor.execute(HAND_WRITTEN, {"ctx": context_id, "root": root})
            rows = cursor.fetchall()
        hand_keys = [r[3] if r[1] == "f" else f"@e{r[12]}" for r in rows][:128]
        assert ours_keys == hand_keys, (root, ours_keys, hand_keys)
    # recall runs its statement prepared (once per session); for the record, the hand-written
    # query prepared the same way too.
    with connection.cursor() as cursor:
        cursor.execute(
            "PREPARE bench_hand (bigint, text) AS "
            + HAND_WRITTEN.replace("%(ctx)s", "$1").replace("%(root)s", "$2")
        )

    def hand_prepared(root: str) -> None:
        with connection.cursor() as cursor:
            cursor.execute("EXECUTE bench_hand (%s, %s)", [context_id, root])
            cursor.fetchall()

    samples_ours, samples_hand, samples_prepared = [], [], []
    for root in roots:
        samples_hand += timed(lambda r=root: hand(r), 1)
        samples_ours += timed(lambda r=root: ours(r), 1)
        samples_prepared += timed(lambda r=root: hand_prepared(r), 1)
    p50_ours, p50_hand = statistics.median(samples_ours), statistics.median(samples_hand)
    p50_prepared = statistics.median(samples_prepared)
    print(
        f"recall (ancestors, depth 4, max_nodes 128, mean {statistics.mean(sizes):.0f} nodes/page, "
        f"n={runs}): p50 {p50_ours:.2f} ms, p95 {percentile(samples_ours, 95):.2f} ms; hand-written "
        f"recursive SQL p50 {p50_hand:.2f} ms; ratio {p50_ours / p50_hand:.2f}x (target <= 1.2x); "
        f"hand-written prepared p50 {p50_prepared:.2f} ms (ratio {p50_ours / p50_prepared:.2f}x)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--repeat", type=int, default=10, help="passes over the trajectories (default 10)"
    )
    parser.add_argument("--frames", type=int, default=100_000, help="frames in the recall graph")
    parser.add_argument("--search-runs", type=int, default=3)
    parser.add_argument("--recall-runs", type=int, default=300)
    parser.add_argument("--skip-search", action="store_true")
    parser.add_argument("--skip-recall", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("MORPHZ_INDEXER_IN_PROCESS", "0")
    setup_django(fresh=True)
    if not args.skip_search:
        context_id = bench_index(args.repeat)
        sets = bench_search(context_id, args.search_runs)
        bench_token_table(context_id, sets)
    if not args.skip_recall:
        graph = seed_graph(args.frames)
        bench_recall(graph, args.frames, args.recall_runs)


if __name__ == "__main__":
    main()
