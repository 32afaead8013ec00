"""Choosing how search reorders a question's best hits by meaning (`memory.search.semantic`)
on the development set, then running the choice once on the test queries.

    .venv/bin/python bench/tune_meaning.py                 # the development set, every setting
    .venv/bin/python bench/tune_meaning.py --test 0.3 50   # one setting, once, test queries

The lexical ranking is `bench/relevance_model.py`'s Python model of the SQL (it reproduces
it to the digit); on top, the first `head` documents are reordered by ``(1 - a) s / best +
a cos`` ("blend") or ``s (1 + a cos)`` ("scale"), `cos` the cosine of WordLlama embeddings
(the bundled 256-dimension model, offline) of the query and of the document's first
`semantic.EMBED_CHARS` characters; the frame named by the query stays first. Development
set: the 299 train tasks' opening messages, each query's own trajectory left out (as in
`bench/tune_bm25.py`); test: the relevance benchmark's groups. Differences against the
lexical ranking come with a 95% paired bootstrap interval.

Results (2026-12-01, 05:15 UTC): blend a 0.3, head 50 gave 0.643 / 0.379 / 0.225 on the
development set against 0.632 / 0.366 / 0.211 (nDCG@10 and recall@10 intervals excluding
zero) and was built (WEIGHT 3/7 is the same order in the lexical score's units); once on
the test queries, STATE-Bench 0.655 / 0.406 / 0.226 -> 0.685 / 0.419 / 0.232.
"""

from __future__ import annotations

import argparse
import os
import pickle
import statistics
from pathlib import Path
from typing import Any

import relevance_model as rm
from bench_relevance import Group, metrics, paired_interval

TEXTS = Path(os.environ.get("MEANING_TEXTS_CACHE", "/tmp/morphz-meaning-texts.pickle"))
CONTEXTS = {
    "statebench": "bench-statebench",
    "demo": "demo",
    "multilingual": "bench-multilingual",
    "code": "bench-code",
}
SETTINGS = [
    *(("blend", a, head) for a in (0.1, 0.2, 0.3, 0.5) for head in (20, 50, 100)),
    *(("scale", a, head) for a in (0.25, 0.5, 1.0) for head in (50, 100)),
]


def corpora() -> tuple[dict[str, Any], dict[str, dict[str, str]]]:
    """The model's corpora and each group's document texts by ref (built together once: the
    texts are read from the database the model's corpora were built in)."""
    from memory.models import Context

    if TEXTS.exists() and rm.CACHE.exists():
        return rm.load(), pickle.loads(TEXTS.read_bytes())
    data = rm.build()
    texts = {}
    for name, slug in CONTEXTS.items():
        group = Group(name, Context.objects.get(slug=slug).pk)
        group.load_documents()
        texts[name] = dict(zip(group.doc_refs, group.doc_texts, strict=True))
    texts["dev"] = texts["statebench"]
    TEXTS.write_bytes(pickle.dumps(texts))
    return data, texts


class Meaning:
    """Unit-length embeddings of one group's documents, and of queries."""

    def __init__(self, texts: dict[str, str]) -> None:
        import numpy as np

        from memory.search import semantic

        self.np, self.semantic = np, semantic
        refs = list(texts)
        blobs = semantic.embeddings([texts[ref] for ref in refs])
        self.vectors = {ref: self._vector(blob) for ref, blob in zip(refs, blobs, strict=True)}

    def _vector(self, blob: bytes) -> Any:
        return self.np.frombuffer(blob, dtype=self.np.float16).astype("float32") if blob else None

    def cosines(self, q: str, refs: list[str]) -> dict[str, float]:
        wanted = self._vector(self.semantic.query_embedding(q))
        return {
            ref: float(self.vectors[ref] @ wanted)
            if wanted is not None and self.vectors.get(ref) is not None
            else 0.0
            for ref in refs
        }


def reordering(meaning: Meaning, how: tuple) -> rm.Reorder:
    """The head's order by meaning (see the module), for `rm.Model.ranked`."""
    kind, a, size = how

    def reorder(q: str, ordered: list[str], scores: dict[str, float], named: Any) -> list[str]:
        if not ordered:
            return ordered
        head = ordered[:size]
        best = max(scores[ref] for ref in head) or 1.0
        cos = meaning.cosines(q, head)

        def score(ref: str) -> float:
            if kind == "blend":
                return (1 - a) * scores[ref] / best + a * cos[ref]
            return scores[ref] * (1 + a * cos[ref])

        pinned = [ref for ref in head if named(ref)]
        rest = sorted((ref for ref in head if not named(ref)), key=lambda ref: -score(ref))
        return pinned + rest + ordered[size:]

    return reorder


def evaluate(group: dict[str, Any], meaning: Meaning | None, how: tuple) -> list[tuple]:
    model = rm.Model(group)
    owns = group["own"] or [None] * len(group["queries"])
    reorder = reordering(meaning, how) if meaning is not None else None
    return [
        metrics(model.ranked(q, rm.BASE, own, reorder), labels)
        for (q, labels), own in zip(group["queries"], owns, strict=True)
    ]


def report(label: str, scores: list[tuple], base: list[tuple]) -> None:
    means = [statistics.mean(s[i] for s in scores) for i in range(3)]
    cells = []
    for i in range(3):
        low, high = paired_interval(scores, base, i)
        cells.append(f"{means[i]:.3f} [{low:+.3f}..{high:+.3f}]")
    print(f"{label:24} " + "  ".join(cells), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--test", nargs=2, type=float, metavar=("A", "HEAD"))
    parser.add_argument("--how", choices=("blend", "scale"), default="blend")
    args = parser.parse_args()

    from common import setup_django

    os.environ.setdefault("MORPHZ_BENCH_DB", "morphz_relevance_model")
    setup_django()
    data, texts = corpora()
    header = f"{'setting':24} MRR [interval]          nDCG@10 [interval]      recall@10 [interval]"
    if args.test:
        how = (args.how, args.test[0], int(args.test[1]))
        print(f"ONE test evaluation of {how}\n{header}")
        for name in CONTEXTS:
            base = evaluate(data[name], None, how)
            print(f"-- {name} ({len(base)} queries)")
            report("lexical", base, base)
            report(str(how), evaluate(data[name], Meaning(texts[name]), how), base)
        return
    meaning = Meaning(texts["dev"])
    base = evaluate(data["dev"], None, SETTINGS[0])
    print(f"development set: {len(base)} queries\n{header}")
    report("lexical", base, base)
    for how in SETTINGS:
        report(str(how), evaluate(data["dev"], meaning, how), base)


if __name__ == "__main__":
    main()
