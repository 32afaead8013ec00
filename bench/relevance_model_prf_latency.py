# ruff: noqa: E402
"""What feedback's statistics would cost: counting, in the context, the distinct primary
lexemes of the first pass's top 5 / 10 documents (one statement, as document_counts does,
uncached), on 60 development queries."""

import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ["MORPHZ_BENCH_DB"] = "morphz_relevance_model"
from common import percentile, setup_django

setup_django(fresh=False)
import relevance_model as m
from django.db import connection

from memory.models import Context
from memory.search import statistics as st
from memory.search import vectors
from memory.sql import statements

data = m.load()
ctx = Context.objects.get(slug="bench-statebench").pk
model = m.Model(data["dev"])
terms = model.terms()
sql = statements("memory.search")["item_counts"].format(
    filters=" AND d.kind <> 'transaction'", cap=st.COUNT_CAP
)
for k in (5, 10):
    times, sizes = [], []
    for (q, _), own in list(zip(data["dev"]["queries"], data["dev"]["own"], strict=False))[:60]:
        scores = model.scores(q, m.BASE)
        top = [r for r in sorted(scores, key=lambda r: -scores[r]) if model.unit_of.get(r) != own][
            :k
        ]
        lex = sorted({t for r in top for t in terms[r]})
        lits = [vectors._lexeme(t) for t in lex]
        t0 = time.perf_counter()
        with connection.cursor() as c:
            c.execute(sql, {"ctx": ctx, "items": lits})
            c.fetchall()
        times.append((time.perf_counter() - t0) * 1000)
        sizes.append(len(lits))
    print(
        f"top {k}: distinct primary lexemes median {statistics.median(sizes)}, "
        f"counting them p50 {statistics.median(times):.1f} ms p95 {percentile(times, 95):.1f} ms"
    )
