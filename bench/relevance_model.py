"""A Python model of search's ranking (`memory.search.ranking`), for trying lexical ideas on
the development set before building any in SQL (`bench/tune_bm25.py --research`).

    .venv/bin/python bench/tune_bm25.py --research            # every variant, dev set
    .venv/bin/python bench/tune_bm25.py --research qtf-raw    # some of them
    .venv/bin/python bench/tune_bm25.py --test qtf-raw        # one variant, once, test queries

The corpora (STATE-Bench train trajectories, the demo, multilingual and code groups) are
built once through the engine in their own database (MORPHZ_BENCH_DB, default
morphz_relevance_model) and their index read back (lexemes, positions, lengths, kinds) into
a pickle (RELEVANCE_MODEL_CACHE, default /tmp/morphz-relevance-model.pickle); every run
after that is Python alone.

The model follows the SQL statement: each kept query word (function words dropped, the
first SCORED_CLAUSES) is a primary item (the word, any apostrophe spelling) and a secondary
one (``~word``, or the phrase of its parts, parts as either form, in a document not saying
the word), weighing idf (SECONDARY_WEIGHT for the secondary); 2 to PHRASE_CLAUSES words
side by side in order are one more item; documents score the sum of the items they hold
(presence) times FRAME_FACTOR for frames (plus ID_WEIGHT times the weight of each query word
their id holds) times BM25's length normalisation; the frame named by the query first; ties
newest first. Candidates as in the SQL: the documents of the selecting (rarest) items, and
when those are fewer than WIDEN_BELOW the newest WIDE_POOL of each common item; pages reach
RANK_POOL documents. The development protocol is tune_bm25.py's: the train tasks' opening
messages, each query's own trajectory left out of its ranking (and, for feedback, out of
the documents feedback reads).

Variants change one thing each against the model as it is ("base"); see VARIANTS.

It models the lexical ranking only: search now also reorders a question's best 50 hits by
meaning (`memory.search.semantic`, chosen with a prototype on this model's development set
plus WordLlama embeddings; BENCHMARKS.md), which the figures below predate.

Results (2026-12-01, branch relevance-research): the model reproduces the SQL to the digit
on every group (dev 0.632 / 0.366 / 0.211; test STATE-Bench 0.655 / 0.406 / 0.226, demo
0.875 / 0.795 / 0.804, multilingual 1.000 / 0.971 / 0.975, code 1.000 / 1.000 / 1.000).
On the development set no variant's MRR interval excludes zero on the gain side: query term
frequency, feedback (Rocchio, RM3), unique-word and per-kind length normalisation, BM25+,
RSJ idf, an idf cap, coordination and Dirichlet query likelihood all lose MRR (several
significantly); ordered pairs (SDM) move nDCG@10 and recall@10 up a little and MRR not at
all. The one variant moving all three up, sdm-0.05-w3 (+0.003 / +0.004 / +0.002, every
interval holding zero), evaluated once on the test queries: STATE-Bench 0.648 / 0.401 /
0.221 against 0.655 / 0.406 / 0.226 (intervals holding zero), the other groups unchanged
(demo nDCG@10 +0.001). Latency prototypes: relevance_model_sdm_latency.py and
relevance_model_prf_latency.py.
"""

from __future__ import annotations

import itertools
import math
import os
import pickle
import re
import statistics
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CACHE = Path(os.environ.get("RELEVANCE_MODEL_CACHE", "/tmp/morphz-relevance-model.pickle"))
# (query, ranked refs, their scores, whether a ref is the frame named by the query) -> refs
Reorder = Callable[[str, list[str], dict[str, float], Callable[[str], bool]], list[str]]


# -- the corpora, built once through the engine ---------------------------------------------
def _read_index(context_id: int) -> dict[str, Any]:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT d.ref, d.length, d.kind, d.frame_id IS NOT NULL FROM memory_searchdocument d"
            " WHERE d.context_id = %s AND d.kind <> 'transaction' ORDER BY d.created_at, d.id",
            [context_id],
        )
        docs = {ref: (length, kind, frame) for ref, length, kind, frame in cursor.fetchall()}
        cursor.execute(
            "SELECT d.ref, u.lexeme, u.positions FROM memory_searchdocument d, unnest(d.tokens) u"
            " WHERE d.context_id = %s AND d.kind <> 'transaction'",
            [context_id],
        )
        postings: dict[str, dict[str, tuple[int, ...]]] = {}
        for ref, lexeme, positions in cursor.fetchall():
            postings.setdefault(lexeme, {})[ref] = tuple(positions or ())
    order = {ref: n for n, ref in enumerate(docs)}  # created_at, id: larger is newer
    return {"docs": docs, "postings": postings, "order": order}


def _statebench_test_queries() -> list[tuple[str, dict[str, int]]]:
    """The benchmark's test queries (`bench_relevance.statebench_group()`), same order."""
    import glob

    from bench_relevance import DATA, statebench_tasks

    task_type, tests = statebench_tasks("test")
    trained = {
        f"{Path(p).parent.name}/{Path(p).stem}"
        for p in glob.glob(str(DATA / "train_trajectories" / "*" / "*.json"))
    }
    queries = []
    for domain, message, kind, _ in tests:
        labels = {u: 1 for u in trained if task_type[u] == f"{domain}/{kind}"}
        if labels:
            queries.append((message, labels))
    return queries


def build() -> dict[str, Any]:
    """(Django set up on the model's own database, `main`.)"""
    from bench_relevance import demo_group, events_group, statebench_group
    from django.db import connection
    from relevance_queries import CODE_DOCS, CODE_QUERIES, MULTILINGUAL_DOCS, MULTILINGUAL_QUERIES

    from memory.search.indexer import drain
    from memory.search.query import forget_statistics

    started = time.perf_counter()
    dev = statebench_group(queries_from="train")
    others = [
        demo_group(),
        events_group("multilingual", MULTILINGUAL_DOCS, MULTILINGUAL_QUERIES),
        events_group("code", CODE_DOCS, CODE_QUERIES),
    ]
    drain(batch_size=500)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memory_searchdocument")
    forget_statistics()
    data: dict[str, Any] = {}
    statebench = _read_index(dev.context_id)
    statebench.update(unit_of=dev.unit_of, depth=dev.depth)
    data["dev"] = {**statebench, "queries": dev.queries, "own": dev.own}
    data["statebench"] = {
        **statebench,
        "queries": _statebench_test_queries(),
        "own": None,
    }
    for group in others:
        group.load_documents()
        queries = [(q, group.resolve(labels)) for q, labels in group.queries]
        data[group.name] = {
            **_read_index(group.context_id),
            "unit_of": group.unit_of,
            "depth": group.depth,
            "queries": queries,
            "own": None,
        }
    CACHE.write_bytes(pickle.dumps(data))
    print(f"corpora built and read back in {time.perf_counter() - started:.0f} s -> {CACHE}")
    return data


def load() -> dict[str, Any]:
    if CACHE.exists():
        return pickle.loads(CACHE.read_bytes())
    return build()


# -- variants -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Variant:
    # 1. query term frequency: None, "raw" (count), "log" (1 + ln count), or "k3=<k3>"
    #    (Robertson's (k3 + 1) qtf / (k3 + qtf))
    qtf: str | None = None
    # 2. pseudo-relevance feedback: the first pass's top `prf_docs` documents give their
    #    `prf_terms` best primary lexemes (not query words, not function words) as extra
    #    items weighing `prf_weight` x idf (x their share of the best term's selection score
    #    when prf_scaled); selection "rocchio" (idf x feedback documents holding it, held by
    #    at least prf_min of them) or "rm3" (sum over documents of 1/length x the document's
    #    share of the first-pass score: relevance model, presence for counts)
    prf_docs: int = 0
    prf_terms: int = 0
    prf_weight: float = 0.0
    prf_scaled: bool = False
    prf_select: str = "rocchio"
    prf_min: int = 2
    # 3. length normalisation: "words" (now), "unique" (distinct primary lexemes), "kind"
    #    (each document against the average length of its kind)
    norm: str = "words"
    # 4a. BM25+ (Lv & Zhai 2011): every matched item adds delta x its weight besides the
    #     length-normalised part, a floor for long documents
    delta: float = 0.0
    # 4b. idf: "bm25" (now, ln(1 + (N - df + .5) / (df + .5))), "rsj" (Robertson/Spärck
    #     Jones ln((N - df + .5) / (df + .5)), floored at 0), or items above `df_cap` of the
    #     documents weigh nothing
    idf: str = "bm25"
    df_cap: float = 1.0
    # 4c. sequential dependence (Metzler & Croft 2005), ordered pairs: each pair of
    #     consecutive kept query words found in order within `window` positions (primary
    #     forms) is one more item weighing `bigram` x its idf
    bigram: float = 0.0
    window: int = 1
    # ... and SDM's unordered window: the pair within `unordered_window` - 1 positions in
    #     either order, weighing `unordered` x its idf
    unordered: float = 0.0
    unordered_window: int = 8
    # 4d. coordination (Lucene's classic similarity): the score times (kept query words the
    #     document holds in either form / kept query words) ** coord
    coord: float = 0.0
    # 4e. query likelihood with Dirichlet smoothing (Zhai & Lafferty 2001) instead of BM25:
    #     sum over kept words of ln(1 + c / (mu p(w|C))) + |Q| ln(mu / (|d| + mu)), c the
    #     word's positions in the document (at most 16 kept) plus SECONDARY_WEIGHT x its
    #     secondary form's
    lm_mu: float = 0.0


BASE = Variant()
VARIANTS: dict[str, Variant] = {
    "base": BASE,
    # 1. query term frequency
    "qtf-raw": Variant(qtf="raw"),
    "qtf-log": Variant(qtf="log"),
    "qtf-k3=1": Variant(qtf="k3=1"),
    "qtf-k3=7": Variant(qtf="k3=7"),
    # 2. pseudo-relevance feedback
    "prf-rocchio-5x10-w0.25": Variant(prf_docs=5, prf_terms=10, prf_weight=0.25),
    "prf-rocchio-5x10-w0.5": Variant(prf_docs=5, prf_terms=10, prf_weight=0.5),
    "prf-rocchio-10x10-w0.25": Variant(prf_docs=10, prf_terms=10, prf_weight=0.25),
    "prf-rocchio-10x20-w0.25": Variant(prf_docs=10, prf_terms=20, prf_weight=0.25),
    "prf-rocchio-3x5-w0.25": Variant(prf_docs=3, prf_terms=5, prf_weight=0.25),
    "prf-rocchio-10x10-w0.5-scaled": Variant(
        prf_docs=10, prf_terms=10, prf_weight=0.5, prf_scaled=True
    ),
    "prf-rm3-10x10-w0.5-scaled": Variant(
        prf_docs=10, prf_terms=10, prf_weight=0.5, prf_scaled=True, prf_select="rm3", prf_min=1
    ),
    "prf-rm3-5x10-w0.25": Variant(
        prf_docs=5, prf_terms=10, prf_weight=0.25, prf_select="rm3", prf_min=1
    ),
    # 3. length normalisation
    "norm-unique": Variant(norm="unique"),
    "norm-kind": Variant(norm="kind"),
    # 4. other lexical ideas
    "bm25plus-0.25": Variant(delta=0.25),
    "bm25plus-0.5": Variant(delta=0.5),
    "bm25plus-1.0": Variant(delta=1.0),
    "idf-rsj": Variant(idf="rsj"),
    "idf-cap-0.25": Variant(df_cap=0.25),
    "idf-cap-0.1": Variant(df_cap=0.1),
    "sdm-0.25-w1": Variant(bigram=0.25),
    "sdm-0.5-w1": Variant(bigram=0.5),
    "sdm-0.25-w3": Variant(bigram=0.25, window=3),
    "sdm-0.5-w3": Variant(bigram=0.5, window=3),
    # second round (after the first showed every variant above below base)
    "sdm-0.1-w1": Variant(bigram=0.1),
    "sdm-0.1-w3": Variant(bigram=0.1, window=3),
    "prf-rocchio-3x5-w0.1": Variant(prf_docs=3, prf_terms=5, prf_weight=0.1),
    "qtf-k3=7-primary-only": Variant(qtf="k3=7"),  # placeholder, replaced below
    "sdm-0.05-w3": Variant(bigram=0.05, window=3),
    "sdm-0.15-w3": Variant(bigram=0.15, window=3),
    "sdm-0.1-w2": Variant(bigram=0.1, window=2),
    # Metzler & Croft's usual weights 0.85 / 0.1 / 0.05, relative to a word's: ordered
    # pairs 0.12, unordered within 8 positions 0.06
    "sdm-standard": Variant(bigram=0.12, unordered=0.06),
    "coord-0.5": Variant(coord=0.5),
    "coord-1": Variant(coord=1.0),
    "lm-mu=50": Variant(lm_mu=50.0),
    "lm-mu=200": Variant(lm_mu=200.0),
    "lm-mu=1000": Variant(lm_mu=1000.0),
}
del VARIANTS["qtf-k3=7-primary-only"]


# -- the model --------------------------------------------------------------------------------
Matches = dict[str, list[tuple[int, int]]]  # document -> (start, end) positions of a match


class Model:
    def __init__(self, group: dict[str, Any]) -> None:
        from memory.search import ranking

        self.r = ranking
        self.group = group
        self.docs = group["docs"]
        self.postings = group["postings"]
        self.order = group["order"]
        self.unit_of = group["unit_of"]
        self.n = len(self.docs)
        self.average = max(statistics.mean(d[0] for d in self.docs.values()), 1.0)
        self._forms: dict[tuple[str, tuple[str, ...]], tuple[Matches, Matches]] = {}
        self._norms: dict[str, dict[str, float]] = {}
        self._terms: dict[str, list[str]] | None = None

    # what documents hold ------------------------------------------------------------------
    def _lexeme(self, lexeme: str) -> Matches:
        from memory.search import vectors

        found: Matches = {}
        for form in vectors.spellings(lexeme):
            for ref, positions in self.postings.get(form, {}).items():
                found.setdefault(ref, []).extend((p, p) for p in positions)
        return found

    def _either(self, part: str) -> Matches:
        from memory.search.textindex import SECONDARY

        found = self._lexeme(part)
        for ref, spans in self._lexeme(SECONDARY + part).items():
            found.setdefault(ref, []).extend(spans)
        return found

    @staticmethod
    def _follow(left: Matches, right: Matches, lo: int = 1, hi: int = 1) -> Matches:
        """`left <N> right` for N in lo..hi (PostgreSQL's phrase: right starts N after left
        ends); the match spans from left's start to right's end."""
        found: Matches = {}
        for ref in left.keys() & right.keys():
            starts: dict[int, list[int]] = {}
            for s, e in right[ref]:
                starts.setdefault(s, []).append(e)
            spans = [
                (s, e2)
                for s, e in left[ref]
                for gap in range(lo, hi + 1)
                for e2 in starts.get(e + gap, ())
            ]
            if spans:
                found[ref] = spans
        return found

    def forms(self, token: str, parts: tuple[str, ...]) -> tuple[Matches, Matches]:
        """(primary, secondary) matches of one query word (`vectors.clause_forms`)."""
        key = (token, parts)
        if key not in self._forms:
            from memory.search.textindex import SECONDARY

            primary = self._lexeme(token)
            secondary = self._lexeme(SECONDARY + token)
            if parts:
                phrase = self._either(parts[0])
                for part in parts[1:]:
                    phrase = self._follow(phrase, self._either(part))
                for ref, spans in phrase.items():
                    if ref not in primary:
                        secondary.setdefault(ref, []).extend(spans)
            self._forms[key] = (primary, secondary)
        return self._forms[key]

    def any_form(self, token: str, parts: tuple[str, ...]) -> Matches:
        primary, secondary = self.forms(token, parts)
        found = {ref: list(spans) for ref, spans in primary.items()}
        for ref, spans in secondary.items():
            found.setdefault(ref, []).extend(spans)
        return found

    def terms(self) -> dict[str, list[str]]:
        """Each document's primary lexemes (for feedback)."""
        if self._terms is None:
            from memory.search.textindex import SECONDARY

            terms: dict[str, list[str]] = {ref: [] for ref in self.docs}
            for lexeme, holders in self.postings.items():
                if not lexeme.startswith(SECONDARY):
                    for ref in holders:
                        terms[ref].append(lexeme)
            self._terms = terms
        return self._terms

    def norm(self, how: str) -> dict[str, float]:
        """Each document's BM25 length normalisation factor (k1 + 1) / (1 + k1 (1 - b + b
        length / average))."""
        if how not in self._norms:
            r = self.r
            if how == "words":
                lengths = {ref: float(d[0]) for ref, d in self.docs.items()}
                averages = dict.fromkeys(lengths, self.average)
            elif how == "unique":
                lengths = {ref: float(len(t)) for ref, t in self.terms().items()}
                mean = max(statistics.mean(lengths.values()), 1.0)
                averages = dict.fromkeys(lengths, mean)
            elif how == "kind":
                lengths = {ref: float(d[0]) for ref, d in self.docs.items()}
                kinds: dict[str, list[float]] = {}
                for ref, d in self.docs.items():
                    kinds.setdefault(d[1], []).append(lengths[ref])
                by_kind = {k: max(statistics.mean(v), 1.0) for k, v in kinds.items()}
                averages = {ref: by_kind[d[1]] for ref, d in self.docs.items()}
            else:
                raise ValueError(how)
            self._norms[how] = {
                ref: (r.K1 + 1) / (1 + r.K1 * (1 - r.B + r.B * lengths[ref] / averages[ref]))
                for ref in lengths
            }
        return self._norms[how]

    def idf(self, df: float, v: Variant) -> float:
        from memory.search.statistics import idf

        if df > v.df_cap * self.n:
            return 0.0
        if v.idf == "rsj":
            return max(0.0, math.log((self.n - df + 0.5) / (df + 0.5)))
        return idf(df, self.n)

    @staticmethod
    def qweight(count: int, how: str | None) -> float:
        if how is None or count <= 1:
            return 1.0
        if how == "raw":
            return float(count)
        if how == "log":
            return 1.0 + math.log(count)
        k3 = float(how.removeprefix("k3="))
        return (k3 + 1) * count / (k3 + count)

    # the ranking ---------------------------------------------------------------------------
    def items(self, q: str, v: Variant) -> tuple[list[tuple[Matches, float, float]], Any]:
        """(matches, form weight, estimate) of each item, and the kept clauses."""
        from memory.search import query, textindex

        r = self.r
        clauses = textindex.query_clauses(q)
        kept = [c for c in clauses if not query.is_stop_word(c[0])] or clauses
        kept = kept[: r.SCORED_CLAUSES]
        counts = Counter(token for token, _ in textindex._pairs(q))
        items = []
        for token, parts in kept:
            weight = self.qweight(counts[token], v.qtf)
            primary, secondary = self.forms(token, tuple(parts))
            items.append((primary, weight, float(len(primary))))
            items.append((secondary, weight * r.SECONDARY_WEIGHT, float(len(secondary))))
        if 2 <= len(kept) <= r.PHRASE_CLAUSES:
            phrase = self.any_form(kept[0][0], tuple(kept[0][1]))
            for token, parts in kept[1:]:
                phrase = self._follow(phrase, self.any_form(token, tuple(parts)))
            items.append((phrase, 1.0, 0.0))
        if v.bigram or v.unordered:
            words = [t for t, _ in textindex._pairs(q) if not query.is_stop_word(t)]
            scored = {t for t, _ in kept}
            pairs = dict.fromkeys(
                (a, b)
                for a, b in itertools.pairwise(words)
                if a in scored and b in scored and a != b
            )
            for a, b in pairs:
                left, right = self._lexeme(a), self._lexeme(b)
                if v.bigram:
                    items.append((self._follow(left, right, 1, v.window), v.bigram, 0.0))
                if v.unordered:
                    hi = v.unordered_window - 1
                    found = self._follow(left, right, 1, hi)
                    for ref, spans in self._follow(right, left, 1, hi).items():
                        found.setdefault(ref, []).extend(spans)
                    items.append((found, v.unordered, 0.0))
        return items, (clauses, kept)

    def scores(
        self, q: str, v: Variant, extra: Sequence[tuple[Matches, float]] = ()
    ) -> dict[str, float]:
        r = self.r
        items, (_clauses, kept) = self.items(q, v)
        items += [(m, w, float(len(m))) for m, w in extra]
        # Which items select (the rarest, within ROW_BUDGET; never above COMMON_FRACTION).
        budget = 0.0
        common = set()
        for n in sorted(range(len(items)), key=lambda n: items[n][2]):
            estimate = items[n][2]
            budget += estimate
            if estimate > r.COMMON_FRACTION * self.n or (
                budget > r.ROW_BUDGET and budget > estimate
            ):
                common.add(n)
        candidates: set[str] = set()
        for n, (found, _, _) in enumerate(items):
            if n not in common:
                candidates |= found.keys()
        if len(candidates) < r.WIDEN_BELOW:
            for n in common:
                newest = sorted(items[n][0], key=self.order.__getitem__, reverse=True)
                candidates.update(newest[: r.WIDE_POOL])
        summed = dict.fromkeys(candidates, 0.0)
        weights = []
        for found, form_weight, _ in items:
            weight = form_weight * self.idf(len(found), v)
            weights.append(weight)
            if weight:
                for ref in found.keys() & candidates:
                    summed[ref] += weight
        # Frames: the query words their id holds count once more; frames weigh FRAME_FACTOR.
        named = [(set(parts or [token]), weights[2 * i]) for i, (token, parts) in enumerate(kept)]
        if v.lm_mu:
            return self.likelihood(kept, candidates, v)
        norm = self.norm(v.norm)
        held: Counter[str] = Counter()
        if v.coord:
            for i in range(len(kept)):
                for ref in (items[2 * i][0].keys() | items[2 * i + 1][0].keys()) & candidates:
                    held[ref] += 1
        result = {}
        for ref, total in summed.items():
            if v.coord:
                total *= (held[ref] / len(kept)) ** v.coord
            if self.docs[ref][2]:
                id_words = set(re.split(r"[\W_]+", ref.lower()))
                total += r.ID_WEIGHT * sum(w for words, w in named if words <= id_words)
                total *= r.FRAME_FACTOR
            result[ref] = total * (norm[ref] + v.delta)
        return result

    def likelihood(self, kept: Any, candidates: set[str], v: Variant) -> dict[str, float]:
        """Query likelihood, Dirichlet smoothing (see `Variant.lm_mu`)."""
        r, mu = self.r, v.lm_mu
        total_length = sum(d[0] for d in self.docs.values())
        result = {ref: len(kept) * math.log(mu / (self.docs[ref][0] + mu)) for ref in candidates}
        for token, parts in kept:
            primary, secondary = self.forms(token, tuple(parts))
            counts: Counter[str] = Counter()
            for ref, spans in primary.items():
                counts[ref] += len(spans)
            for ref, spans in secondary.items():
                counts[ref] += r.SECONDARY_WEIGHT * len(spans)
            collection = max(sum(counts.values()), 0.5) / total_length
            for ref in counts.keys() & candidates:
                result[ref] += math.log(1 + counts[ref] / (mu * collection))
        return result

    def ranked(
        self, q: str, v: Variant, own: str | None = None, reorder: Reorder | None = None
    ) -> list[str]:
        """The labelled units, best first. `reorder(q, ordered, scores, named)` may reorder
        the ranked documents (`bench/tune_meaning.py`); `named(ref)`: the frame named by q."""
        from memory.search import query, textindex

        scores = self.scores(q, v)
        if v.prf_docs:
            scores = self.scores(q, v, self.feedback(q, v, scores, own))
        clauses = textindex.query_clauses(q)
        exact = set(query.exact_ids(q, clauses))

        def named(ref: str) -> bool:
            return bool(self.docs[ref][2]) and ref.lower() in exact

        ordered = sorted(scores, key=lambda ref: (not named(ref), -scores[ref], -self.order[ref]))
        ordered = ordered[: query.RANK_POOL]
        if reorder is not None:
            ordered = reorder(q, ordered, scores, named)
        units = dict.fromkeys(self.unit_of.get(ref, ref) for ref in ordered)
        return [u for u in units if u != own][: self.group["depth"]]

    def feedback(
        self, q: str, v: Variant, scores: dict[str, float], own: str | None
    ) -> list[tuple[Matches, float]]:
        """The expansion items of pseudo-relevance feedback (see `Variant`)."""
        from memory.search import query, textindex

        top = [
            ref
            for ref in sorted(scores, key=lambda ref: (-scores[ref], -self.order[ref]))
            if own is None or self.unit_of.get(ref, ref) != own
        ][: v.prf_docs]
        if not top:
            return []
        said = {t for t, _ in textindex.query_clauses(q)}
        terms = self.terms()
        held: Counter[str] = Counter()
        mass: dict[str, float] = {}
        total = sum(scores[ref] for ref in top) or 1.0
        for ref in top:
            for lexeme in terms[ref]:
                held[lexeme] += 1
                mass[lexeme] = mass.get(lexeme, 0.0) + scores[ref] / total / max(len(terms[ref]), 1)
        select: dict[str, float] = {}
        for lexeme, count in held.items():
            if count < min(v.prf_min, len(top)) or lexeme in said or query.is_stop_word(lexeme):
                continue
            df = len(self.postings[lexeme])
            if v.prf_select == "rm3":
                select[lexeme] = mass[lexeme]
            else:
                select[lexeme] = count * self.idf(df, v)
        best = sorted(select, key=lambda t: (-select[t], t))[: v.prf_terms]
        if not best:
            return []
        top_score = select[best[0]] or 1.0
        return [
            (
                self._lexeme(t),
                v.prf_weight * (select[t] / top_score if v.prf_scaled else 1.0),
            )
            for t in best
        ]


# -- evaluation -----------------------------------------------------------------------------
def per_query(model: Model, v: Variant) -> list[tuple[float, float, float]]:
    from bench_relevance import metrics

    group = model.group
    owns = group["own"] or [None] * len(group["queries"])
    return [
        metrics(model.ranked(q, v, own), labels)
        for (q, labels), own in zip(group["queries"], owns, strict=True)
    ]


def means(scores: list[tuple[float, ...]]) -> tuple[float, float, float]:
    return tuple(statistics.mean(s[i] for s in scores) for i in range(3))  # type: ignore[return-value]


def interval(ours: list[tuple[float, ...]], base: list[tuple[float, ...]], metric: int) -> str:
    from bench_relevance import paired_interval

    low, high = paired_interval(ours, base, metric)
    return f"{low:+.3f}..{high:+.3f}"


def report(name: str, scores: list, base: list) -> None:
    m, d = means(scores), means(base)
    print(
        f"{name:32} {m[0]:6.4f} {m[1]:8.3f} {m[2]:9.3f}   "
        f"{m[0] - d[0]:+.3f} [{interval(scores, base, 0)}]  "
        f"{m[1] - d[1]:+.3f} [{interval(scores, base, 1)}]  "
        f"{m[2] - d[2]:+.3f} [{interval(scores, base, 2)}]",
        flush=True,
    )


HEADER = (
    f"{'variant':32} {'MRR':>6} {'nDCG@10':>8} {'recall@10':>9}   "
    "dMRR [95% paired bootstrap]  dnDCG@10 [..]  drecall@10 [..]"
)


def main(names: list[str] | None, test: str | None) -> None:
    import bench_relevance  # noqa: F401  (sys.path, as tune_bm25 set it)
    from common import setup_django

    os.environ.setdefault("MORPHZ_BENCH_DB", "morphz_relevance_model")
    if CACHE.exists():
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "morphz.settings")
        import django

        django.setup()
    else:
        setup_django()
    data = load()
    if test:
        variant = VARIANTS[test]
        print(f"ONE test evaluation of {test!r}: {variant}\n{HEADER}")
        for name in ("statebench", "demo", "multilingual", "code"):
            model = Model(data[name])
            base = per_query(model, BASE)
            print(f"-- {name} ({len(base)} queries)")
            report("base (model as it is)", base, base)
            report(test, per_query(model, variant), base)
        return
    model = Model(data["dev"])
    print(f"development set: {len(data['dev']['queries'])} train-task queries\n{HEADER}")
    started = time.perf_counter()
    base = per_query(model, BASE)
    report("base", base, base)
    print(f"  ({time.perf_counter() - started:.1f} s a pass)", flush=True)
    for name in names or [n for n in VARIANTS if n != "base"]:
        report(name, per_query(model, VARIANTS[name]), base)
