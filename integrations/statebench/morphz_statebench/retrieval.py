"""Retrieving learnings from a learned context: Morphz search and the graph, read-only.

`Retriever.retrieve(query, top_k)` fuses two rankings of frames: one search per content
word (its idf, in full when the frame's request holds the word or its stem) and the whole
query searched status by status; it takes the best frame of each group (a case superseded
by a procedure belongs to it), so the `top_k` learnings are different workflows, each
rendered from its frame. Nothing here writes: search and reads only.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import Stemmer
from morphz_client import MorphzClient

WORD = re.compile(r"[^\W_]+", re.UNICODE)
MAX_TERMS = 24
SEARCH_LIMIT = 100
# A word matching a frame outside its request (tools, outcome, ...) counts this much.
OTHER_FIELDS_WEIGHT = 0.1
# Reciprocal rank fusion of the per-word ranking and the whole query's (RRF_K as usual);
# the share of the whole query's ranking was chosen on development queries (BENCHMARKS.md).
WHOLE_QUERY_SHARE = 0.8
RRF_K = 60
# A frame's status is no reason to rank it lower here: each status is searched apart.
STATUSES = ("active", "retiring", "retired")
_stemmer = Stemmer.Stemmer("english")
# Words too common in any request to tell one from another.
STOPWORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "all",
        "also",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "don",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "let",
        "me",
        "more",
        "most",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "please",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "thank",
        "thanks",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "hi",
        "hey",
        "hello",
        "i'm",
        "i've",
        "i'd",
        "can't",
        "ok",
        "okay",
    ]
)


@dataclass(frozen=True)
class Learning:
    frame_id: str
    kind: str  # "case" | "procedure" | another frame's kind
    text: str
    sources: tuple[str, ...]
    score: float


def request_words(text: str) -> list[str]:
    """Content words, case-folded, in order, each once."""
    seen: list[str] = []
    for word in WORD.findall(text.casefold()):
        if len(word) < 2 or word in STOPWORDS or word in seen:
            continue
        seen.append(word)
    return seen


def word_form(word: str) -> str:
    """The form words are compared by: the English stem, as Morphz search matches them
    (``cancelled`` is ``cancel``)."""
    stemmed: str = _stemmer.stemWord(word)
    return stemmed


def query_terms(query: str) -> list[str]:
    return request_words(query)[:MAX_TERMS]


def _flat(value: Any) -> str:
    if isinstance(value, dict):
        return "; ".join(f"{k}: {_flat(v)}" for k, v in value.items())
    if isinstance(value, list):
        return ", ".join(_flat(v) for v in value)
    return str(value)


def render(frame: dict[str, Any], group: str | None) -> str:
    body = frame.get("body") or {}
    kind = body.get("kind", "frame")
    if kind == "case":
        parts = [f"Past case [{frame['id']}]"]
        if group and group != frame["id"]:
            parts[0] += f" (one of the cases of {group})"
        parts.append(f"The user asked: {body.get('request', '')}")
        if body.get("follow_ups"):
            parts.append("Then: " + " / ".join(body["follow_ups"]))
        parts.append("Tool calls in order: " + " -> ".join(body.get("tools") or []))
        parts.append("State changes: " + "; ".join(body.get("writes") or []))
        parts.append(f"Outcome: {body.get('outcome', '')}")
        return "\n".join(parts)
    if kind == "procedure":
        return "\n".join(
            [
                f"Procedure [{frame['id']}] from {body.get('cases', '?')} cases",
                "For requests like: " + " | ".join(body.get("requests_like") or []),
                "Workflows followed: " + " | ".join(body.get("workflows") or []),
                "State changes made: " + ", ".join(body.get("state_changes") or []),
            ]
        )
    return f"[{frame['id']}] " + _flat({k: v for k, v in body.items()})


class Retriever:
    """Learnings from the context `client` reaches (a frozen learned context or a fork)."""

    def __init__(self, client: MorphzClient, *, units: str = "cases") -> None:
        self.client = client
        self.units = units  # "cases": cases only; "all": procedures compete too
        self._version: int | None = None
        self._frames: dict[str, dict[str, Any]] = {}
        self._group: dict[str, str] = {}
        self._request: dict[str, set[str]] = {}

    def _load(self) -> None:
        version = int(self.client.context()["version"])
        if version == self._version:
            return
        frames: dict[str, dict[str, Any]] = {}
        cursor = None
        while True:
            page = self.client.frames(cursor=cursor, limit=500)
            frames.update({f["id"]: dict(f) for f in page["frames"]})
            cursor = page.get("next_cursor")
            if not cursor:
                break
        group: dict[str, str] = {}
        cursor = None
        while True:
            rel = self.client.relations(name="supersedes", cursor=cursor, limit=500)
            for r in rel["relations"]:
                group.setdefault(r["object"], r["subject"])
            cursor = rel.get("next_cursor")
            if not cursor:
                break
        requests = {}
        for frame_id, frame in frames.items():
            body = frame.get("body") or {}
            text = body.get("request") or " ".join(body.get("requests_like") or [])
            requests[frame_id] = {word_form(w) for w in request_words(str(text))}
        self._frames, self._group, self._version = frames, group, version
        self._request = requests

    def group_of(self, frame_id: str) -> str:
        seen = {frame_id}
        while frame_id in self._group and self._group[frame_id] not in seen:
            frame_id = self._group[frame_id]
            seen.add(frame_id)
        return frame_id

    def scores(self, query: str) -> dict[str, float]:
        """Each matching frame's fused score (higher is better)."""
        by_words = self.word_scores(query)
        if not by_words:
            return {}
        whole = self.whole_query_scores(query)
        fused: dict[str, float] = {}
        for share, ranking in ((1 - WHOLE_QUERY_SHARE, by_words), (WHOLE_QUERY_SHARE, whole)):
            ordered = sorted(ranking.items(), key=lambda item: (-item[1], item[0]))
            for rank, (frame_id, _) in enumerate(ordered):
                fused[frame_id] = fused.get(frame_id, 0.0) + share / (RRF_K + rank)
        return fused

    def whole_query_scores(self, query: str) -> dict[str, float]:
        """Morphz search's own scores for the whole query, status by status."""
        self._load()
        found: dict[str, float] = {}
        for status in STATUSES:
            hits = self.client.search(query, type="frame", status=status, limit=SEARCH_LIMIT)
            for hit in hits["hits"]:
                if hit.get("id") in self._frames:
                    found[str(hit["id"])] = float(hit["score"])
        return found

    def word_scores(self, query: str) -> dict[str, float]:
        """Per content word of `query`: its idf to each frame holding it (fully when the
        frame's request holds it, else OTHER_FIELDS_WEIGHT of it)."""
        self._load()
        total = max(len(self._frames), 1)
        scores: dict[str, float] = {}
        for term in query_terms(query):
            hits = self.client.search(term, type="frame", limit=SEARCH_LIMIT)["hits"]
            ids = {h["id"] for h in hits if h.get("id") in self._frames}
            if not ids:
                continue
            df = len(ids)
            idf = math.log(1 + (total - df + 0.5) / (df + 0.5))
            for frame_id in ids:
                in_request = word_form(term) in self._request[frame_id]
                weight = 1.0 if in_request else OTHER_FIELDS_WEIGHT
                scores[frame_id] = scores.get(frame_id, 0.0) + idf * weight
        return scores

    def retrieve(self, query: str, top_k: int = 3) -> list[Learning]:
        scores = self.scores(query)
        ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
        picked: list[tuple[str, float]] = []
        groups: set[str] = set()
        for frame_id, score in ranked:
            kind = (self._frames[frame_id].get("body") or {}).get("kind")
            if self.units == "cases" and kind != "case":
                continue
            group = self.group_of(frame_id)
            if group in groups:
                continue
            groups.add(group)
            picked.append((frame_id, score))
            if len(picked) == top_k:
                break
        for frame_id, score in ranked:  # fewer groups than top_k: fill with the next best
            if len(picked) == top_k:
                break
            if all(frame_id != p for p, _ in picked):
                picked.append((frame_id, score))
        out = []
        for frame_id, score in picked:
            frame = self._frames[frame_id]
            body = frame.get("body") or {}
            out.append(
                Learning(
                    frame_id=frame_id,
                    kind=str(body.get("kind", "frame")),
                    text=render(frame, self.group_of(frame_id)),
                    sources=tuple(frame.get("sources") or ()),
                    score=score,
                )
            )
        return out

    def retrieve_learnings(self, query: str, top_k: int = 3) -> list[str]:
        return [learning.text for learning in self.retrieve(query, top_k)]

    def frame(self, frame_id: str) -> dict[str, Any]:
        self._load()
        return self._frames[frame_id]
