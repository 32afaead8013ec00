"""Choosing BM25's k1 and b for Morphz search on a development set, not on the test queries.

The relevance benchmark (`bench/bench_relevance.py`) scores each STATE-Bench *test* task's
opening message against memory built from the *train* trajectories. Sweeping k1 and b on
those test queries and keeping the best would report an optimistic figure. Here the
queries are the *train* tasks' own opening messages (each query's own trajectory left out
of its ranking; relevant: the other train trajectories of its task type): choose on these,
then run the benchmark once with the choice.

    .venv/bin/python bench/tune_bm25.py
"""

from __future__ import annotations

import itertools
import statistics

from bench_relevance import DATA, metrics, morphz_ranking, statebench_group
from common import setup_django

K1_VALUES = (1.2, 1.5, 2.0)
B_VALUES = (0.6, 0.75, 0.9, 1.0)


def main() -> None:
    if not DATA.exists():
        raise SystemExit(f"STATE-Bench data not found at {DATA}")
    setup_django()
    from django.db import connection

    from memory.search import ranking
    from memory.search.indexer import drain
    from memory.search.query import forget_statistics

    group = statebench_group(queries_from="train")
    drain(batch_size=500)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memory_searchdocument")
    forget_statistics()
    print(f"development set: {len(group.queries)} train-task queries\n")
    print(f"{'k1':>4} {'b':>5} {'MRR':>6} {'nDCG@10':>8} {'recall@10':>9}")
    results = {}
    for k1, b in itertools.product(K1_VALUES, B_VALUES):
        ranking.K1, ranking.B = k1, b
        scores = []
        for (q, labels), own in zip(group.queries, group.own, strict=True):
            ranked = [u for u in morphz_ranking(group, q) if u != own]
            scores.append(metrics(ranked, labels))
        results[(k1, b)] = tuple(statistics.mean(s[i] for s in scores) for i in range(3))
        mrr, ndcg, recall = results[(k1, b)]
        print(f"{k1:4.1f} {b:5.2f} {mrr:6.3f} {ndcg:8.3f} {recall:9.3f}")
    best = max(results, key=lambda key: (results[key][0], results[key][1]))
    print(f"\nbest on the development set (MRR, then nDCG@10): k1 {best[0]}, b {best[1]}")


if __name__ == "__main__":
    main()
