"""Relevance benchmark: does search find what a person means?

    .venv/bin/python bench/bench_relevance.py            # every group, the tokenizer choice,
                                                          # the large-event timing
    .venv/bin/python bench/bench_relevance.py --skip-kiwi --skip-large   # quicker

Four query groups, each over its own context (labels in bench/relevance_queries.py):
- demo: the demo context (`memory/demo`), queries a person would type in the explorer;
- statebench: memory built from the STATE-Bench train trajectories
  (../shared/benchdata/state-bench: every user and agent message and tool call appended
  as an event, one thread per trajectory); each *test* task's opening message is a query,
  and the relevant documents are the train trajectories of the same domain and
  `task_type` (a trajectory is ranked where its first event is);
- multilingual: Korean, Chinese, Japanese and Thai documents and queries;
- inflected: French, German, Spanish, Italian, Portuguese, Russian, Dutch, Swedish and
  English documents, each query another form of their words (`canceladas` / `cancelada`);
- code: identifiers and log lines (snake_case, camelCase, dotted, `::`, paths, versions).

For each group, side by side over the same documents (frames and non-transaction events,
what search returns by default): Morphz search (`memory.search.query.search`, pages of
100; a question's best 50 hits reordered by meaning, `memory.search.semantic`), BM25 from `bm25s` (its tokenizer with English stop words, scores > 0), and vector
retrieval with `wordllama` (its bundled 256-dimension model, cosine similarity, offline).
Printed: MRR, nDCG@10 (graded labels) and recall@10 per group and system, and for each
group a 95% paired bootstrap interval of Morphz minus BM25 over its queries.

Latency: Morphz search (first page of 20, snippets included) over every benchmark query,
p50/p95, next to the same search with the reordering by meaning off, the previous search (AND of every word, newest 400 ranked) and a
bare SQL count of the documents holding any query word, run on the same queries and the
same index in the same process, interleaved: the ratios are printed.

Korean tokenizer choice: ICU words alone, ICU words plus syllable pairs (what the index
does), and kiwipiepy morphemes (nouns, verb and adjective stems), each through the same
BM25 over the multilingual group's Korean documents and queries, with tokenising speed.

Large events: a 3.5 MB tool result appended while the index worker runs (a thread polling
like `manage.py run_indexer`); the time until search finds it, next to PostgreSQL's own
`to_tsvector('simple')` of the same text in the same run (`--only-large` runs this alone).

Uses its own database (MORPHZ_BENCH_DB, default morphz_bench), dropped and re-created.
"""

from __future__ import annotations

import argparse
import glob
import json
import math
import random
import statistics
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from common import percentile, setup_django
from relevance_queries import (
    CODE_DOCS,
    CODE_QUERIES,
    DEMO_QUERIES,
    INFLECTED_DOCS,
    INFLECTED_QUERIES,
    MULTILINGUAL_DOCS,
    MULTILINGUAL_QUERIES,
)

DATA = Path(__file__).resolve().parents[2] / "shared" / "benchdata" / "state-bench"
Labels = dict[str, int]


# -- metrics ----------------------------------------------------------------------------------
def metrics(ranked: list[str], labels: Labels) -> tuple[float, float, float]:
    """(reciprocal rank, nDCG@10, recall@10) of one ranked list of distinct units."""
    rr = next((1.0 / (i + 1) for i, unit in enumerate(ranked) if labels.get(unit, 0) > 0), 0.0)
    dcg = sum((2 ** labels.get(u, 0) - 1) / math.log2(i + 2) for i, u in enumerate(ranked[:10]))
    ideal = sorted(labels.values(), reverse=True)[:10]
    idcg = sum((2**g - 1) / math.log2(i + 2) for i, g in enumerate(ideal))
    relevant = {u for u, g in labels.items() if g > 0}
    recall = len(relevant & set(ranked[:10])) / len(relevant) if relevant else 0.0
    return rr, (dcg / idcg if idcg else 0.0), recall


def distinct(units: list[str]) -> list[str]:
    return list(dict.fromkeys(units))


# -- corpora --------------------------------------------------------------------------------
class Group:
    """A context, its documents as the baselines see them, and labelled queries."""

    def __init__(self, name: str, context_id: int) -> None:
        self.name = name
        self.context_id = context_id
        self.doc_refs: list[str] = []  # Morphz refs (frame id or @eN), in document order
        self.doc_texts: list[str] = []
        self.unit_of: dict[str, str] = {}  # ref -> labelled unit
        self.queries: list[tuple[str, Labels]] = []
        self.depth = 100  # ranked documents looked at per query
        self.own: list[str] = []  # per query: a unit to leave out of its ranking (dev sets)

    def load_documents(self) -> None:
        """The same documents search covers by default, read back from the facts."""
        from memory.models import Event, Frame
        from memory.search import vectors

        for frame_id, body in (
            Frame.objects.filter(context_id=self.context_id)
            .order_by("pk")
            .values_list("frame_id", "body")
        ):
            self.doc_refs.append(frame_id)
            self.doc_texts.append(vectors.frame_text(frame_id, body))
        for seq, content, payload in (
            Event.objects.filter(context_id=self.context_id)
            .exclude(kind="transaction")
            .order_by("seq")
            .values_list("seq", "content", "payload")
        ):
            self.doc_refs.append(f"@e{seq}")
            self.doc_texts.append(vectors.event_text(content, payload))
        for ref in self.doc_refs:
            self.unit_of.setdefault(ref, ref)

    def resolve(self, labels: Labels) -> Labels:
        """`~text` labels name the event whose content contains the text."""
        resolved: Labels = {}
        units = set(self.unit_of.values())
        for key, grade in labels.items():
            if key.startswith("~"):
                found = [
                    r
                    for r, t in zip(self.doc_refs, self.doc_texts, strict=True)
                    if r.startswith("@e") and key[1:] in t
                ]
                if not found:
                    raise SystemExit(f"{self.name}: no event contains {key[1:]!r}")
                for ref in found:
                    resolved[self.unit_of[ref]] = grade
            else:
                if key not in units:
                    raise SystemExit(f"{self.name}: no document {key!r}")
                resolved[key] = grade
        return resolved


def demo_group() -> Group:
    import tempfile

    from memory.demo.player import load_demo
    from memory.models import Context

    load_demo(Path(tempfile.mkdtemp()))
    group = Group("demo", Context.objects.get(slug="demo").pk)
    group.queries = [(q, labels) for q, labels in DEMO_QUERIES]
    return group


def events_group(name: str, docs: list[tuple[str, str]], queries: list) -> Group:
    from memory.contexts import create_context
    from memory.timeline.events import append_event

    context = create_context(f"bench-{name}")
    group = Group(name, context.pk)
    keys = {}
    for key, text in docs:
        keys[key] = append_event(context.pk, kind="tool_result", content=text).event.ref
    group.queries = [(q, {keys[k]: g for k, g in labels.items()}) for q, labels in queries]
    return group


def statebench_tasks(
    queries_from: str = "test",
) -> tuple[dict[str, str], list[tuple[str, str, str, str]]]:
    """STATE-Bench's tasks: each task's "domain/task_type" by "domain/task_id", and the
    queries of the `queries_from` split ("test" or "train") as (domain, opening message,
    task_type, task_id), in file order."""
    task_type: dict[str, str] = {}
    tests: list[tuple[str, str, str, str]] = []
    for splits in sorted(glob.glob(str(DATA / "tasks" / "*" / "splits.json"))):
        folder = Path(splits).parent
        domain = folder.name
        split = json.loads(Path(splits).read_text())["splits"]
        for task_id in split["train"] + split["test"]:
            task = json.loads((folder / f"{task_id}.json").read_text(encoding="utf-8"))
            task_type[f"{domain}/{task_id}"] = f"{domain}/{task['task_type']}"
            if task_id in split[queries_from]:
                tests.append((domain, task["opening_message"], task["task_type"], task_id))
    return task_type, tests


def label_queries(group: Group, trained: set[str], queries_from: str) -> None:
    """Add to `group` the opening messages of the `queries_from` split's tasks, each with
    the `trained` trajectories of its domain and task type as relevant (its own left out,
    and named in `group.own`)."""
    task_type, tasks = statebench_tasks(queries_from)
    for domain, message, kind, task_id in tasks:
        own = f"{domain}/{task_id}"
        labels = {u: 1 for u in trained if task_type[u] == f"{domain}/{kind}" and u != own}
        if labels:
            group.queries.append((message, labels))
            group.own.append(own)


def statebench_group(queries_from: str = "test") -> Group:
    """The train trajectories as memory; queries: each test task's opening message, or with
    `queries_from="train"` each train task's own (a development set for choosing ranking
    constants without looking at the test queries; `group.own[i]` is query i's own
    trajectory, which a ranking must leave out)."""
    from memory.contexts import create_context
    from memory.timeline.events import append_event

    context = create_context("bench-statebench", capacity_tokens=2_000_000_000)
    group = Group("statebench", context.pk)
    group.depth = 300
    thread_unit: dict[str, str] = {}
    refs_unit: dict[str, str] = {}
    events = 0
    for path in sorted(glob.glob(str(DATA / "train_trajectories" / "*" / "*.json"))):
        domain, task_id = Path(path).parent.name, Path(path).stem
        unit = f"{domain}/{task_id}"
        thread = f"t{len(thread_unit)}"
        thread_unit[thread] = unit
        for message in json.loads(Path(path).read_text(encoding="utf-8"))["conversation"]:
            role, content = message.get("role"), message.get("content") or ""
            rows = []
            if role == "user" and content:
                rows.append(("user_message", content))
            elif role == "assistant":
                rows += [
                    ("tool_result", json.dumps(call, ensure_ascii=False))
                    for call in message.get("tool_calls") or []
                ]
                if content:
                    rows.append(("agent_message", content))
            for kind, text in rows:
                ref = append_event(context.pk, kind=kind, content=text, thread=thread).event.ref
                refs_unit[ref] = unit
                events += 1
    group.unit_of = refs_unit
    trained = set(thread_unit.values())
    label_queries(group, trained, queries_from)
    print(
        f"statebench: {events} events from {len(trained)} train trajectories, {len(group.queries)} queries"
    )
    return group


# -- the three systems ----------------------------------------------------------------------
def morphz_ranking(group: Group, q: str) -> list[str]:
    from memory.search.query import search

    refs: list[str] = []
    offset: int | None = 0
    while offset is not None and len(refs) < group.depth:
        result = search(group.context_id, q, limit=100, offset=offset)
        refs += [h["ref"] for h in result["hits"]]
        offset = result["next_offset"]
    return distinct([group.unit_of.get(r, r) for r in refs])


class Bm25:
    def __init__(self, group: Group) -> None:
        import bm25s

        self.bm25s = bm25s
        self.group = group
        self.retriever = bm25s.BM25()
        self.retriever.index(
            bm25s.tokenize(group.doc_texts, stopwords="en", show_progress=False),
            show_progress=False,
        )

    def ranking(self, q: str) -> list[str]:
        tokens = self.bm25s.tokenize([q], stopwords="en", return_ids=False, show_progress=False)
        if not tokens[0]:
            return []
        k = min(len(self.group.doc_refs), max(self.group.depth, 100))
        docs, scores = self.retriever.retrieve(tokens, k=k, show_progress=False)
        refs = [self.group.doc_refs[d] for d, s in zip(docs[0], scores[0], strict=True) if s > 0]
        return distinct([self.group.unit_of.get(r, r) for r in refs])


class Vectors:
    model: Any = None

    def __init__(self, group: Group) -> None:
        import numpy as np

        if Vectors.model is None:
            import wordllama
            from wordllama import WordLlama

            Vectors.model = WordLlama.load(
                cache_dir=Path(wordllama.__file__).parent, disable_download=True
            )
        self.np = np
        self.group = group
        self.matrix = self._embed(group.doc_texts)

    def _embed(self, texts: list[str]) -> Any:
        vectors = self.np.asarray(self.model.embed(texts), dtype="float32")
        norms = self.np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / self.np.maximum(norms, 1e-9)

    def ranking(self, q: str) -> list[str]:
        scores = self.matrix @ self._embed([q])[0]
        order = self.np.argsort(-scores)[: max(self.group.depth, 100)]
        return distinct([self.group.unit_of.get(self.group.doc_refs[i], "") for i in order])


# -- the previous search (AND of every word), as the latency baseline -----------------------------------
PREVIOUS_SQL = """
WITH pool AS (
  SELECT d.id, d.tokens, d.created_at FROM memory_searchdocument d
  WHERE d.context_id = %(ctx)s AND d.tokens @@ %(query)s::tsquery
  ORDER BY d.created_at DESC, d.id DESC LIMIT 400
),
hits AS (
  SELECT p.id, ts_rank(p.tokens, %(query)s::tsquery) AS score, p.created_at FROM pool p
  ORDER BY score DESC, p.created_at DESC, p.id DESC LIMIT 20
)
SELECT h.score, d.ref, f.body::text, substr(ev.content, greatest(1, strpos(lower(ev.content), %(first)s) - 60), 400)
FROM hits h JOIN memory_searchdocument d ON d.id = h.id
LEFT JOIN memory_frame f ON f.id = d.frame_id
LEFT JOIN memory_event ev ON ev.id = d.event_id
ORDER BY h.score DESC, d.created_at DESC, d.id DESC
"""


def previous_search(context_id: int, q: str) -> int:
    """The previous search (AND of every word), the same round trips (context, query, lag)."""
    from django.db import connection

    from memory.read.history import resolve_context
    from memory.search import snippets, textindex, vectors
    from memory.search.indexer import index_lag

    tokens = list(dict.fromkeys(textindex.tokens(q)))[:32]
    if not tokens:
        return 0
    context_id = resolve_context(context_id).pk
    index_lag(context_id)
    with connection.cursor() as cursor:
        cursor.execute(
            PREVIOUS_SQL,
            {"ctx": context_id, "query": vectors.tsquery_literal(tokens), "first": tokens[0]},
        )
        rows = cursor.fetchall()
        for _, _, body, _ in rows:  # what the old search did with each hit's text, roughly
            if body:
                snippets.snippet(body, tokens)
        return len(rows)


BARE_SQL = """
SELECT count(*) FROM memory_searchdocument d
WHERE d.context_id = %(ctx)s AND d.kind <> 'transaction' AND d.tokens @@ %(query)s::tsquery
"""


def bare_search(context_id: int, q: str) -> int:
    """The least any search that needs not every word must do on the same index: count
    the documents holding any query word (no ranking, no snippets, one round trip)."""
    from django.db import connection

    from memory.search import languages, textindex, vectors
    from memory.search.query import is_stop_word
    from memory.search.ranking import SCORED_CLAUSES

    clauses = textindex.query_clauses(q)
    clauses = ([c for c in clauses if not is_stop_word(c[0])] or clauses)[:SCORED_CLAUSES]
    codes = languages.held(context_id)
    literal = " | ".join(vectors.clause_any(t, p, codes) for t, p in clauses)
    with connection.cursor() as cursor:
        cursor.execute(BARE_SQL, {"ctx": context_id, "query": literal})
        return int(cursor.fetchone()[0])


def latency(groups: list[Group], runs: int) -> None:
    from memory.search import semantic
    from memory.search.query import search

    def lexical(ctx: int, q: str) -> Any:
        """The same search with the reordering by meaning off: what meaning costs."""
        words, semantic.MIN_WORDS = semantic.MIN_WORDS, 1 << 30
        try:
            return search(ctx, q)
        finally:
            semantic.MIN_WORDS = words

    samples: dict[str, list[float]] = {"now": [], "lexical": [], "before": [], "bare": []}
    systems = {
        "now": lambda ctx, q: search(ctx, q),
        "lexical": lexical,
        "before": previous_search,
        "bare": bare_search,
    }
    for _ in range(runs):
        for group in groups:
            for q, _ in group.queries:
                for name, run in systems.items():
                    start = time.perf_counter()
                    run(group.context_id, q)
                    samples[name].append((time.perf_counter() - start) * 1000)
    p50 = {name: statistics.median(values) for name, values in samples.items()}
    p95 = {name: percentile(values, 95) for name, values in samples.items()}
    print(
        f"\nsearch latency over {len(samples['now'])} benchmark queries (first page of 20, "
        f"snippets): p50 {p50['now']:.2f} ms, p95 {p95['now']:.2f} ms (context: the ratios below)\n"
        f"  the same without reordering by meaning: p50 {p50['lexical']:.2f} ms, "
        f"p95 {p95['lexical']:.2f} ms; ratio p50 {p50['now'] / p50['lexical']:.2f}x, "
        f"p95 {p95['now'] / p95['lexical']:.2f}x\n"
        f"  previous AND search: p50 {p50['before']:.2f} ms, p95 {p95['before']:.2f} ms; "
        f"ratio p50 {p50['now'] / p50['before']:.2f}x, p95 {p95['now'] / p95['before']:.2f}x\n"
        f"  bare SQL count of documents holding any query word (same index): "
        f"p50 {p50['bare']:.2f} ms, p95 {p95['bare']:.2f} ms; "
        f"ratio p50 {p50['now'] / p50['bare']:.2f}x, p95 {p95['now'] / p95['bare']:.2f}x"
    )


# -- Korean tokenizer choice ------------------------------------------------------------------
def korean_choice(skip_kiwi: bool) -> None:
    import bm25s

    from memory.search import textindex

    docs = [(k, t) for k, t in MULTILINGUAL_DOCS if k.startswith("ko-")]
    queries = [
        (q, labels)
        for q, labels in MULTILINGUAL_QUERIES
        if any(k.startswith("ko-") for k in labels)
    ]
    schemes: dict[str, Callable[[str], list[str]]] = {
        "ICU words only (before)": textindex.tokens,
        "ICU words + syllable pairs (chosen)": textindex.terms,
    }
    if not skip_kiwi:
        from kiwipiepy import Kiwi

        started = time.perf_counter()
        kiwi = Kiwi()
        print(f"kiwipiepy model loaded in {time.perf_counter() - started:.1f} s")
        keep = ("NN", "VV", "VA", "XR", "SL", "SN", "SH")

        def morphemes(text: str) -> list[str]:
            return [t.form.lower() for t in kiwi.tokenize(text) if t.tag.startswith(keep)]

        schemes["kiwipiepy morphemes"] = morphemes
    sample = " ".join(t for _, t in docs) * 200
    print(
        f"\nKorean tokenizer choice ({len(queries)} Korean queries, {len(docs)} documents, BM25):"
    )
    for name, tokenize in schemes.items():
        corpus = [tokenize(t) for _, t in docs]
        retriever = bm25s.BM25()
        retriever.index(corpus, show_progress=False)
        scores = []
        for q, labels in queries:
            q_tokens = [t for t in tokenize(q)]
            ranked: list[str] = []
            if q_tokens:
                found, values = retriever.retrieve([q_tokens], k=len(docs), show_progress=False)
                ranked = [docs[i][0] for i, s in zip(found[0], values[0], strict=True) if s > 0]
            scores.append(metrics(ranked, labels))
        started = time.perf_counter()
        tokenize(sample[:20000])
        rate = 20000 / (time.perf_counter() - started)
        mrr, ndcg, recall = (statistics.mean(s[i] for s in scores) for i in range(3))
        print(
            f"  {name:38} MRR {mrr:.3f}  nDCG@10 {ndcg:.3f}  recall@10 {recall:.3f}  "
            f"tokenising {rate / 1e3:,.0f} k chars/s"
        )


# -- large events -----------------------------------------------------------------------------
def large_event(size: int) -> None:
    from memory.contexts import create_context
    from memory.search import indexer
    from memory.search.query import search
    from memory.search.vectors import event_vector
    from memory.timeline.events import append_event

    rng = random.Random(3)
    words = ["request", "response", "status", "user_id", "createUser", "memory.search", "error"]
    words += ["timeout", "payload", "items", "price", "2.14.4", "path/to/file.py", "ok"]
    lines, n = [], 0
    while n < size:
        record = {
            "id": n,
            "event": rng.choice(words),
            "detail": " ".join(rng.choice(words) for _ in range(8)),
            "tag": f"tag_{rng.randrange(100000)}",
        }
        line = json.dumps(record)
        lines.append(line)
        n += len(line) + 1
    # The marker opens the log: a log with more than 1 MB of distinct words keeps its first
    # ones (PostgreSQL's limit per tsvector), so a word at the very end may not be indexed.
    text = "zanzibar-marker\n" + "\n".join(lines)
    context = create_context(f"bench-large-{int(time.time())}", capacity_tokens=2_000_000_000)
    stop = threading.Event()

    def worker() -> None:
        from django.db import connection

        try:
            indexer.run_forever(stop, poll_seconds=0.25)
        finally:
            connection.close()

    thread = threading.Thread(target=worker, daemon=True)
    thread.start()
    time.sleep(0.5)
    started = time.perf_counter()
    append_event(context.pk, kind="tool_result", content=text)
    appended = time.perf_counter() - started
    while not search(context.pk, "zanzibar")["hits"]:
        time.sleep(0.05)
        if time.perf_counter() - started > 120:
            break
    found = time.perf_counter() - started
    stop.set()
    thread.join(10)
    from django.db import connection

    # Baselines in the same run: PostgreSQL's own parser over the same text, and the
    # index's Python work (tokens, lexemes, positions) alone.
    with connection.cursor() as cursor:
        begun = time.perf_counter()
        cursor.execute("SELECT length(to_tsvector('simple', %s))", [text])
        plain = time.perf_counter() - begun
    begun = time.perf_counter()
    event_vector("tool_result", text, None)
    python = time.perf_counter() - begun
    print(
        f"\nlarge event: {len(text) / 1e6:.1f} MB tool result appended in {appended:.2f} s, "
        f"searchable {found:.2f} s after the append started (indexer polling every 0.25 s); "
        f"same run: to_tsvector('simple') of the text {plain:.2f} s, the index's lexemes "
        f"in Python {python:.2f} s; searchable / to_tsvector = {found / plain:.1f}x"
    )


# -- main ---------------------------------------------------------------------------------------
def paired_interval(
    ours: list[tuple[float, ...]], theirs: list[tuple[float, ...]], metric: int, rounds: int = 2000
) -> tuple[float, float]:
    """A 95% interval for the mean per-query difference (ours - theirs) of one metric: the
    queries resampled with replacement `rounds` times (fixed seed, so runs agree). An interval
    holding 0 says the query set cannot tell the two apart."""
    differences = [a[metric] - b[metric] for a, b in zip(ours, theirs, strict=True)]
    rng = random.Random(15)
    n = len(differences)
    means = sorted(sum(rng.choices(differences, k=n)) / n for _ in range(rounds))
    return means[int(0.025 * rounds)], means[int(0.975 * rounds) - 1]


def evaluate(groups: list[Group]) -> None:
    print(f"\n{'group':13} {'queries':>7}  {'system':8} {'MRR':>6} {'nDCG@10':>8} {'recall@10':>9}")
    for group in groups:
        group.load_documents()
        group.queries = [(q, group.resolve(labels)) for q, labels in group.queries]
        systems: dict[str, Callable[[str], list[str]]] = {
            "Morphz": lambda q, g=group: morphz_ranking(g, q),
            "BM25": Bm25(group).ranking,
            "vector": Vectors(group).ranking,
        }
        results = {}
        per_query = {}
        for name, rank in systems.items():
            scores = [metrics(rank(q), labels) for q, labels in group.queries]
            per_query[name] = scores
            results[name] = tuple(statistics.mean(s[i] for s in scores) for i in range(3))
            mrr, ndcg, recall = results[name]
            print(
                f"{group.name:13} {len(group.queries):>7}  {name:8} {mrr:6.3f} {ndcg:8.3f} {recall:9.3f}"
            )
        m, b = results["Morphz"], results["BM25"]
        verdict = (
            "not behind BM25"
            if all(x >= y - 1e-9 for x, y in zip(m, b, strict=True))
            else "BEHIND BM25"
        )
        vector = results["vector"]
        wins = [
            f"{label} +{v - x:.3f}"
            for label, x, v in zip(("MRR", "nDCG@10", "recall@10"), m, vector, strict=True)
            if v > x
        ]
        print(
            f"{'':13} {'':>7}  Morphz {verdict}; vector ahead of Morphz: {', '.join(wins) or 'nowhere'}"
        )
        spreads = [
            f"{label} {low:+.3f}..{high:+.3f}"
            for i, label in enumerate(("MRR", "nDCG@10", "recall@10"))
            for low, high in [paired_interval(per_query["Morphz"], per_query["BM25"], i)]
        ]
        print(f"{'':13} {'':>7}  Morphz - BM25, 95% paired bootstrap: {', '.join(spreads)}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--skip-kiwi", action="store_true", help="leave kiwipiepy out")
    parser.add_argument("--skip-large", action="store_true", help="no large-event timing")
    parser.add_argument("--skip-statebench", action="store_true")
    parser.add_argument("--only-large", action="store_true", help="only the large-event timing")
    parser.add_argument("--large-mb", type=float, default=3.5)
    parser.add_argument("--runs", type=int, default=3, help="latency passes")
    args = parser.parse_args()
    setup_django()
    from django.db import connection

    from memory.search.indexer import drain
    from memory.search.query import forget_statistics

    if args.only_large:
        large_event(int(args.large_mb * 1_000_000))
        return
    started = time.perf_counter()
    groups = [demo_group()]
    if not args.skip_statebench and DATA.exists():
        groups.append(statebench_group())
    groups.append(events_group("multilingual", MULTILINGUAL_DOCS, MULTILINGUAL_QUERIES))
    groups.append(events_group("code", CODE_DOCS, CODE_QUERIES))
    groups.append(events_group("inflected", INFLECTED_DOCS, INFLECTED_QUERIES))
    drain(batch_size=500)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memory_searchdocument")
    forget_statistics()
    print(f"corpora loaded and indexed in {time.perf_counter() - started:.1f} s")
    evaluate(groups)
    latency(groups, args.runs)
    korean_choice(args.skip_kiwi)
    if not args.skip_large:
        large_event(int(args.large_mb * 1_000_000))


if __name__ == "__main__":
    main()
