# ruff: noqa: E402, E741
"""Latency of SDM ordered pairs (weight 0.05, window 3) built into the SQL ranking, measured
on the development queries against the model's database (a prototype, not code to keep)."""

import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ["MORPHZ_BENCH_DB"] = "morphz_relevance_model"
from common import percentile, setup_django

setup_django(fresh=False)
import itertools

import relevance_model as m

from memory.models import Context
from memory.search import query, ranking, vectors
from memory.search import statistics as st

data = m.load()
ctx = Context.objects.get(slug="bench-statebench").pk
queries = [q for q, _ in data["dev"]["queries"]]
original = ranking.plan
MODE = {"m": "base"}


def plan(
    ctx_id, clauses, filters, params, include_tx, codes, window=True, snapshot=None, replies=False
):
    p = original(ctx_id, clauses, filters, params, include_tx, codes, window, snapshot, replies)
    if MODE["m"] == "base":
        return p
    kept = clauses[: ranking.SCORED_CLAUSES]
    pairs = [(a[0], b[0]) for a, b in itertools.pairwise(kept)]
    lits = []
    for a, b in pairs:
        la, lb = vectors._lexeme(a), vectors._lexeme(b)
        lits.append(f"({la} <-> {lb} | {la} <2> {lb} | {la} <3> {lb})")
    if not lits:
        return p
    est = st.document_counts(ctx_id, [(l, "") for l in lits], filters, params, p.documents)
    for lit, e in zip(lits, est, strict=False):
        item = ranking.Item(lit, 0.05, p.items[0].first, e)
        if MODE["m"] == "score":  # scoring only: checked on each candidate's vector copy
            item.common = 0.05 * st.idf(e, p.documents)
        p.items.append(item)
    return p


ranking.plan = plan
samples: dict[str, list[list[float]]] = {k: [[], []] for k in ("base", "select", "score")}
for rnd in range(2):
    for i, q in enumerate(queries):
        modes = ["base", "select", "score"]
        modes = modes[i % 3 :] + modes[: i % 3]
        for mode in modes:
            MODE["m"] = mode
            t = time.perf_counter()
            query.search(ctx, q)
            samples[mode][rnd].append((time.perf_counter() - t) * 1000)
for mode, (a, b) in samples.items():
    print(
        f"{mode:7} pass1 p50 {statistics.median(a):6.2f} p95 {percentile(a, 95):6.2f} | "
        f"pass2 p50 {statistics.median(b):6.2f} p95 {percentile(b, 95):6.2f} ms"
    )
