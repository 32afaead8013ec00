"""Choosing Morphz search's query handling and BM25's k1 and b on a development set, not on
the test queries.

The relevance benchmark (`bench/bench_relevance.py`) scores each STATE-Bench *test* task's
opening message against memory built from the *train* trajectories. Sweeping settings on
those test queries and keeping the best would report an optimistic figure. Here the
queries are the *train* tasks' own opening messages (each query's own trajectory left out
of its ranking; relevant: the other train trajectories of its task type): choose on these,
then run the benchmark once with the choice.

    .venv/bin/python bench/tune_bm25.py             # the variants below, then k1 x b
    .venv/bin/python bench/tune_bm25.py --variants  # the variants (and term counts) only
    .venv/bin/python bench/tune_bm25.py --sweep     # k1 x b only (the code as it is)
    .venv/bin/python bench/tune_bm25.py --term-counts  # presence against term counts only

Variants (each adds one change to the one before; the last is the code as it is): which
query words are function words that do not score, whether a word with an apostrophe
matches its other spellings (don't / don’t), and how many of a long question's words score.
BM25 (`bm25s`, as in the benchmark) is printed beside them over the same documents. Then
BM25 over presence against BM25 with term counts, in a Python model of the ranking
(`term_counts`).
"""

from __future__ import annotations

import argparse
import functools
import itertools
import statistics
from collections.abc import Callable
from typing import Any

from bench_relevance import DATA, Bm25, Group, metrics, morphz_ranking, statebench_group
from common import setup_django

K1_VALUES = (1.2, 1.5, 2.0)
B_VALUES = (0.6, 0.75, 0.9, 1.0)

# The stop list search used before (its own 62 words, pronouns and question words included).
_OWN_STOP_WORDS = """
    a an and are as at be been but by can could did do does for from had has have how i
    if in into is it its me my no not of on or our so than that the their them then there
    these they this to was we were what when where which who why will with would you your
"""
OWN_STOP_WORDS = frozenset(_OWN_STOP_WORDS.split())


def variants() -> list[tuple[str, dict[str, Any]]]:
    """(name, settings), each adding one change to the one before."""
    from memory.search import query

    lucene = query.STOP_WORDS.__contains__
    before = {
        "stop": OWN_STOP_WORDS.__contains__,
        "apostrophes": ("'",),
        "words_before_stop": 32,
        "scored": 24,
    }
    return [
        ("before: own stop list, first 24 of the first 32 words", before),
        ("Lucene's English stop set", {**before, "stop": lucene}),
        ("+ contractions and single letters", {**before, "stop": query.is_stop_word}),
        (
            "+ every apostrophe spelling",
            {**before, "stop": query.is_stop_word, "apostrophes": None},
        ),
        (
            "+ first 32 words after function words (now)",
            {"stop": query.is_stop_word, "apostrophes": None, "words_before_stop": None},
        ),
    ]


def apply(settings: dict[str, Any]) -> Callable[[], None]:
    """Sets a variant up in the search modules; returns what puts the code back."""
    from memory.search import query, ranking, textindex, vectors

    saved = (query.is_stop_word, vectors.APOSTROPHES, textindex.query_clauses)
    saved_scored = ranking.SCORED_CLAUSES
    query.is_stop_word = settings["stop"]
    if settings["apostrophes"] is not None:
        vectors.APOSTROPHES = settings["apostrophes"]
    cap = settings["words_before_stop"]
    if cap is not None:
        clauses = textindex.query_clauses
        textindex.query_clauses = lambda text: clauses(text)[:cap]
    ranking.SCORED_CLAUSES = settings.get("scored", saved_scored)

    def restore() -> None:
        query.is_stop_word, vectors.APOSTROPHES, textindex.query_clauses = saved
        ranking.SCORED_CLAUSES = saved_scored

    return restore


def score(group: Group, rank: Callable[[str], list[str]]) -> tuple[float, float, float]:
    """Mean (MRR, nDCG@10, recall@10), each query's own trajectory left out."""
    scores = []
    for (q, labels), own in zip(group.queries, group.own, strict=True):
        scores.append(metrics([u for u in rank(q) if u != own], labels))
    mrr, ndcg, recall = (statistics.mean(s[i] for s in scores) for i in range(3))
    return mrr, ndcg, recall


def compare_variants(group: Group) -> None:
    print(f"{'variant':52} {'MRR':>6} {'nDCG@10':>8} {'recall@10':>9}")
    for name, settings in variants():
        restore = apply(settings)
        try:
            mrr, ndcg, recall = score(group, lambda q: morphz_ranking(group, q))
        finally:
            restore()
        print(f"{name:52} {mrr:6.3f} {ndcg:8.3f} {recall:9.3f}", flush=True)
    group.load_documents()
    mrr, ndcg, recall = score(group, Bm25(group).ranking)
    print(f"{'BM25 (bm25s, English stop words)':52} {mrr:6.3f} {ndcg:8.3f} {recall:9.3f}\n")


def term_counts(group: Group) -> None:
    """BM25 over presence (what the SQL ranks by) against BM25 with term frequency, in a
    Python model of the ranking over the index's own lexemes, position counts (at most
    `vectors.MAX_POSITIONS`) and lengths: each kept query word's primary and secondary
    lexeme (`~word`; parts of a split word counted when all are present) weigh idf,
    secondary ones SECONDARY_WEIGHT of it; the phrase item and frame factors are left out
    (STATE-Bench has no frames, its questions are long)."""
    from django.db import connection

    from memory.search import query, ranking, textindex, vectors
    from memory.search import statistics as search_statistics

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT d.ref, d.length, u.lexeme, array_length(u.positions, 1) FROM"
            " memory_searchdocument d, unnest(d.tokens) u WHERE d.context_id = %s"
            " AND d.kind <> 'transaction'",
            [group.context_id],
        )
        rows = cursor.fetchall()
    length: dict[str, int] = {}
    postings: dict[str, dict[str, int]] = {}
    for ref, words, lexeme, count in rows:
        length[ref] = words
        postings.setdefault(lexeme, {})[ref] = count
    average, documents = statistics.mean(length.values()), len(length)
    newest = {ref: int(ref[2:]) for ref in length}

    def spelled(word: str) -> dict[str, int]:  # any spelling (vectors.spellings)
        return {r: n for form in vectors.spellings(word) for r, n in postings.get(form, {}).items()}

    def holding(token: str, parts: list[str], secondary: bool) -> dict[str, int]:
        if not secondary:
            return spelled(token)
        found = dict(spelled(textindex.SECONDARY + token))
        if parts:
            each = [{**spelled(p), **spelled(textindex.SECONDARY + p)} for p in parts]
            for ref in set.intersection(*map(set, each)) - set(spelled(token)):
                found[ref] = found.get(ref, 0) + min(e[ref] for e in each)
        return found

    def rank(q: str, tf: bool) -> list[str]:
        clauses = textindex.query_clauses(q)
        clauses = [c for c in clauses if not query.is_stop_word(c[0])] or clauses
        scores: dict[str, float] = {}
        for (token, parts), secondary in itertools.product(
            clauses[: ranking.SCORED_CLAUSES], (False, True)
        ):
            found = holding(token, parts, secondary)
            weight = search_statistics.idf(len(found), documents)
            weight *= ranking.SECONDARY_WEIGHT if secondary else 1.0
            for ref, count in found.items():
                n = count if tf else 1
                norm = 1 - ranking.B + ranking.B * length[ref] / average
                scores[ref] = scores.get(ref, 0.0) + weight * n * (ranking.K1 + 1) / (
                    n + ranking.K1 * norm
                )
        ordered = sorted(scores, key=lambda ref: (-scores[ref], -newest[ref]))
        return list(dict.fromkeys(group.unit_of.get(ref, ref) for ref in ordered))[: group.depth]

    print(f"{'Python model of the ranking':52} {'MRR':>6} {'nDCG@10':>8} {'recall@10':>9}")
    for name, tf in (("presence (as the SQL ranks)", False), ("term frequency", True)):
        mrr, ndcg, recall = score(group, functools.partial(rank, tf=tf))
        print(f"{name:52} {mrr:6.3f} {ndcg:8.3f} {recall:9.3f}", flush=True)
    print()


def sweep(group: Group) -> None:
    from memory.search import ranking

    print(f"{'k1':>4} {'b':>5} {'MRR':>6} {'nDCG@10':>8} {'recall@10':>9}")
    results = {}
    defaults = ranking.K1, ranking.B
    for k1, b in itertools.product(K1_VALUES, B_VALUES):
        ranking.K1, ranking.B = k1, b
        results[(k1, b)] = score(group, lambda q: morphz_ranking(group, q))
        mrr, ndcg, recall = results[(k1, b)]
        print(f"{k1:4.1f} {b:5.2f} {mrr:6.3f} {ndcg:8.3f} {recall:9.3f}", flush=True)
    ranking.K1, ranking.B = defaults
    best = max(results, key=lambda key: (results[key][0], results[key][1]))
    print(f"\nbest on the development set (MRR, then nDCG@10): k1 {best[0]}, b {best[1]}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--variants", action="store_true", help="variants and term counts")
    parser.add_argument("--sweep", action="store_true", help="k1 x b only")
    parser.add_argument("--term-counts", action="store_true", help="term counts only")
    parser.add_argument(
        "--research",
        nargs="*",
        metavar="VARIANT",
        help="ideas in the Python model (bench/relevance_model.py), dev set; no name: all",
    )
    parser.add_argument("--test", metavar="VARIANT", help="one variant, once, on the test queries")
    args = parser.parse_args()
    if args.research is not None or args.test:
        import relevance_model

        relevance_model.main(args.research, args.test)
        return
    if not DATA.exists():
        raise SystemExit(f"STATE-Bench data not found at {DATA}")
    setup_django()
    from django.db import connection

    from memory.search.indexer import drain
    from memory.search.query import forget_statistics

    group = statebench_group(queries_from="train")
    drain(batch_size=500)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memory_searchdocument")
    forget_statistics()
    print(f"development set: {len(group.queries)} train-task queries\n")
    if args.term_counts:
        term_counts(group)
        return
    if not args.sweep:
        compare_variants(group)
        term_counts(group)
    if not args.variants:
        sweep(group)


if __name__ == "__main__":
    main()
