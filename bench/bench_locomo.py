"""Retrieval on LoCoMo (Maharana et al., ACL 2024): Morphz's search against BM25 and dense
retrieval over the same documents, same run, same questions. No LLM: LoCoMo annotates the
dialog turns that hold each question's evidence, so retrieval is scored directly.

    .venv/bin/python bench/bench_locomo.py [--data FILE] [--only conv-26,conv-30] [--skip ...]

Any file in LoCoMo's format works (a JSON list of samples, each with `sample_id`,
`conversation` {speaker_a, speaker_b, session_N: [{speaker, dia_id, text, blip_caption?}],
session_N_date_time} and `qa` [{question, evidence: ["D1:3", ...], category}]). The default
is the shared dev file, which is CC BY-NC 4.0: read in place, never copied into the
repository. Each conversation is its own context (bench database `morphz_bench_locomo`);
each turn an event (speaker A's `user_message`, speaker B's `agent_message`) whose content is ``speaker: text`` (and ``[image:
caption]`` when the turn shares a photo), its session's date in the payload. Each question
of categories 1-4 is asked through `memory.search.query.search` as typed. The baselines
index the same documents (the text search indexes, `vectors.event_text`): `bm25s` with
English stop words, and `wordllama` (its bundled model) with cosine similarity.

Prints, per category and overall, recall@5 and recall@10 (the share of a question's evidence
turns in the top k, averaged over questions), all@10 (the share of questions with all their
evidence in the top 10) and the mean tokens returned at 10 (the hits' text, counted with
wordllama's tokenizer). Last line, exactly: ``locomo recall@10: morphz=<x> bm25=<y> dense=<z>``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("MORPHZ_BENCH_DB", "morphz_bench_locomo")

from common import ROOT, setup_django

# The shared data sits beside the checkout (a worktree may be one folder deeper).
DATA = next(
    (
        found
        for parent in ROOT.parents
        if (found := parent / "shared" / "benchdata" / "locomo" / "locomo_dev.json").is_file()
    ),
    ROOT.parent / "shared" / "benchdata" / "locomo" / "locomo_dev.json",
)
CATEGORIES = (1, 2, 3, 4)  # 5 is adversarial (no answer in the conversation)
KS = (5, 10)
_EVIDENCE = re.compile(r"D\d+:\d+")
_SESSION = re.compile(r"session_(\d+)")


class Conversation:
    """One sample: its turns (dia_id, content, payload) and its questions."""

    def __init__(self, sample: dict[str, Any]) -> None:
        self.sample_id = str(sample.get("sample_id", "?"))
        conversation = sample["conversation"]
        self.turns: list[tuple[str, str, dict[str, Any]]] = []
        # The two people: speaker A's turns are user messages, speaker B's agent messages.
        self.speaker_b = str(conversation.get("speaker_b", ""))
        sessions = sorted(
            (int(m.group(1)), key)
            for key in conversation
            if (m := _SESSION.fullmatch(key)) and isinstance(conversation[key], list)
        )
        for number, key in sessions:
            date = conversation.get(f"{key}_date_time")
            for turn in conversation[key]:
                content = f"{turn.get('speaker', '?')}: {turn.get('text', '')}"
                caption = turn.get("blip_caption")
                if caption:
                    content += f" [image: {caption}]"
                payload: dict[str, Any] = {"session": number}
                if date:
                    payload["date"] = date
                self.turns.append((turn["dia_id"], content, payload))
        known = {dia for dia, _, _ in self.turns}
        self.questions: list[tuple[str, int, set[str]]] = []
        for qa in sample.get("qa", []):
            if qa.get("category") not in CATEGORIES:
                continue
            evidence = {e for item in qa.get("evidence", []) for e in _EVIDENCE.findall(item)}
            evidence &= known  # a few annotations name turns that do not exist
            if evidence and qa.get("question", "").strip():
                self.questions.append((qa["question"], qa["category"], evidence))


def load(path: Path, only: set[str], skip: set[str]) -> list[Conversation]:
    samples = json.loads(path.read_text(encoding="utf-8"))
    conversations = [Conversation(sample) for sample in samples]
    return [
        c for c in conversations if (not only or c.sample_id in only) and c.sample_id not in skip
    ]


Ranker = Callable[[str], list[str]]  # question -> dia_ids, best first (at least max(KS))


def morphz_ranker(context_id: int, dia_of: dict[str, str]) -> Ranker:
    from memory.errors import InvalidRequest
    from memory.search.query import search

    def rank(q: str) -> list[str]:
        try:
            hits = search(context_id, q, limit=max(KS))["hits"]
        except InvalidRequest:  # a question search refuses finds nothing
            return []
        return [dia_of[hit["ref"]] for hit in hits if hit["ref"] in dia_of]

    return rank


def baselines(texts: list[str], dias: list[str], model: Any) -> tuple[Ranker, Ranker]:
    import bm25s
    import numpy as np

    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)
    k = min(max(KS), len(texts))

    def bm25(q: str) -> list[str]:
        tokens = bm25s.tokenize([q], stopwords="en", show_progress=False)
        if not tokens.vocab:  # nothing left after stop words
            return []
        docs, scores = retriever.retrieve(tokens, k=k, show_progress=False)
        return [dias[int(i)] for i, s in zip(docs[0], scores[0], strict=True) if s > 0]

    matrix = np.asarray(model.embed(texts, norm=True))

    def dense(q: str) -> list[str]:
        vector = np.asarray(model.embed([q], norm=True))[0]
        return [dias[int(i)] for i in np.argsort(-(matrix @ vector))[:k]]

    return bm25, dense


class Scores:
    def __init__(self) -> None:
        self.rows: list[tuple[int, dict[int, float], float, int]] = []

    def add(self, category: int, ranked: list[str], evidence: set[str], tokens: int) -> None:
        recall = {k: len(evidence & set(ranked[:k])) / len(evidence) for k in KS}
        self.rows.append((category, recall, float(evidence <= set(ranked[:10])), tokens))

    def summary(self, category: int | None = None) -> tuple[int, float, float, float, float]:
        rows = [r for r in self.rows if category is None or r[0] == category]
        if not rows:
            return 0, 0.0, 0.0, 0.0, 0.0
        return (
            len(rows),
            statistics.mean(r[1][5] for r in rows),
            statistics.mean(r[1][10] for r in rows),
            statistics.mean(r[2] for r in rows),
            statistics.mean(r[3] for r in rows),
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DATA, help="a LoCoMo-format JSON file")
    parser.add_argument("--only", default="", help="sample ids to evaluate, comma-separated")
    parser.add_argument("--skip", default="", help="sample ids to leave out, comma-separated")
    args = parser.parse_args()
    if not args.data.is_file():
        raise SystemExit(f"LoCoMo data not found at {args.data} (pass --data)")
    only = {s for s in args.only.split(",") if s}
    skip = {s for s in args.skip.split(",") if s}
    conversations = load(args.data, only, skip)
    if not conversations:
        raise SystemExit("no conversation to evaluate")
    setup_django(fresh=True)
    import wordllama
    from django.db import connection
    from wordllama import WordLlama

    from memory.contexts import create_context
    from memory.search.documents import reply_context
    from memory.search.indexer import drain
    from memory.search.query import forget_statistics
    from memory.search.vectors import event_text
    from memory.timeline.events import append_event

    model = WordLlama.load(cache_dir=Path(wordllama.__file__).parent, disable_download=True)
    started = time.perf_counter()
    loaded = []
    for conv in conversations:
        context = create_context(f"locomo-{conv.sample_id}".lower(), capacity_tokens=10**9)
        dia_of: dict[str, str] = {}
        texts: dict[str, str] = {}
        for dia, content, payload in conv.turns:
            kind = "agent_message" if content.startswith(f"{conv.speaker_b}: ") else "user_message"
            ref = append_event(context.pk, kind=kind, content=content, payload=payload).event.ref
            dia_of[ref] = dia
            texts[dia] = event_text(content, payload)
        loaded.append((conv, context.pk, dia_of, texts))
    drain(batch_size=500)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memory_searchdocument")
    forget_statistics()
    turns = sum(len(c.turns) for c in conversations)
    print(f"reply context: {reply_context()} (MORPHZ_SEARCH_REPLY_CONTEXT)")
    print(
        f"{len(conversations)} conversations, {turns} turns loaded and indexed in "
        f"{time.perf_counter() - started:.1f} s"
    )

    systems = ("morphz", "bm25", "dense")
    scores = {name: Scores() for name in systems}
    timings: list[float] = []
    for conv, context_id, dia_of, texts in loaded:
        dias = list(texts)
        bm25, dense = baselines([texts[d] for d in dias], dias, model)
        morphz = morphz_ranker(context_id, dia_of)
        rankers = {"morphz": morphz, "bm25": bm25, "dense": dense}
        for question, category, evidence in conv.questions:
            for name, rank in rankers.items():
                began = time.perf_counter()
                ranked = rank(question)
                if name == "morphz":
                    timings.append((time.perf_counter() - began) * 1000)
                shown = "\n".join(texts[d] for d in ranked[:10])
                tokens = len(model.tokenizer.encode(shown, add_special_tokens=False).ids)
                scores[name].add(category, ranked, evidence, tokens)

    print(
        f"\n{'category':9} {'questions':>9}  {'system':7} {'R@5':>6} {'R@10':>6} {'all@10':>6} {'tokens@10':>9}"
    )
    for wanted in (*CATEGORIES, None):
        for name in systems:
            n, r5, r10, full, returned = scores[name].summary(wanted)
            label = "all" if wanted is None else str(wanted)
            print(f"{label:9} {n:>9}  {name:7} {r5:6.3f} {r10:6.3f} {full:6.3f} {returned:9.0f}")
    print(
        f"\nmorphz search: p50 {statistics.median(timings):.1f} ms, "
        f"p95 {sorted(timings)[int(0.95 * (len(timings) - 1))]:.1f} ms per question"
    )
    overall = {name: scores[name].summary()[2] for name in systems}
    print(
        f"locomo recall@10: morphz={overall['morphz']:.3f} bm25={overall['bm25']:.3f} "
        f"dense={overall['dense']:.3f}"
    )


if __name__ == "__main__":
    main()
