"""Lexical search over frames (every status) and events (every kind, retired too) (R33–R36).

    search(context, q, *, type=None, status=None, kind=None, thread=None, since=None,
           until=None, transactions=None, limit=20, offset=0)
        -> {hits, total, total_exact, next_offset, lag, query: {q, tokens, ignored}}

- `q` goes through the same pipeline as the indexed text (`memory.search.textindex`: NFKC, case
  folding, ICU words, identifier parts, Korean syllable pairs, emoji); English function
  words are dropped from a query that has other words (`is_stop_word`: the standard
  English stop set, single Latin letters, contractions like I'd and don't). Each query word
  is a clause: a document matches it when it holds the word, the word as an identifier
  part, or the phrase of its parts (`create_user` finds `test_create_user`; `결과` finds
  `결과를`); a word with an apostrophe matches its every spelling (`don't`, `don’t`).
  Documents are ranked like BM25 (`memory.search.ranking`): rarer words count more, a word
  said counts more than a part of an identifier or a payload word, shorter documents
  count more, a frame's id counts most. A sentence therefore finds the documents that share
  its distinctive words; it does not need every word.
- Order: a frame whose id is the query (as typed, or normalised like the index: case,
  width, the punctuation around it) comes first; then by score, newest first on ties.
  Frames outrank events that match equally (their fields weigh more). A question (three
  words or more apart, `semantic.is_question`) has its best HEAD hits reordered by
  meaning (`memory.search.semantic`): scores only rise there, so they stay in order.
- Transaction events echo what the frames they wrote hold: they are left out unless
  `transactions` is true or `kind` is ``transaction``, and weigh little when included.
- Filters: `type` ``frame`` | ``event``; `status` ``active`` | ``retiring`` | ``retired``
  (frames) or ``active`` | ``retired`` | ``recorded`` (events; ``recorded`` = not an
  observation); `kind` an event kind (frames have kind ``frame``); `thread`; `since` /
  `until` (datetimes or ISO 8601 strings; a frame's time is its last change, an event's
  its creation; `since` inclusive, `until` exclusive, `since` before `until`). Filters no
  document can satisfy together (``type=frame`` with an event kind or ``recorded``, an
  event with ``retiring``, an observation kind with ``recorded``, any other event kind
  with ``active`` or ``retired``, ``kind=transaction`` with ``transactions`` false) are
  refused, not answered with an empty page.
- Hits, best first: ``{type, id (frames) | ref (events), ref, status, kind, thread,
  created_at, score, snippet, snippet_parts: [{text, match}], next}`` where `next` says what
  to call to go further: ``{"recall": {"frame_id": ...}}`` or ``{"read": "@e42"}``.
- `total`: how many documents match (hold a distinctive query word), counted up to
  TOTAL_CAP (`total_exact` false beyond, and where common words selected their newest
  documents only or, in a long unfiltered history, a broad word its newest
  `statistics.RECENT_WINDOW`: `memory.search.ranking`). Pages: `offset` (0-based, below RANK_POOL) and
  `limit`; `next_offset` is the offset of the next page, or null.
- `query`: ``{q, tokens, ignored}``: the query as sent, the words it searched for (function
  words dropped, at most `memory.search.ranking.SCORED_CLAUSES`), and the words past that
  limit, which neither select, score nor highlight (empty for any usual query).
- `lag`: ``{pending_intents, oldest_pending_seconds}`` from the outbox (search may lag the
  facts a little; reading a frame or event by id never does, R35).
- Errors: InvalidRequest with codes ``invalid_query`` (empty, too long, or no word or
  emoji), ``invalid_type``, ``invalid_status``, ``invalid_kind``, ``invalid_thread``,
  ``invalid_time``, ``invalid_limit``, ``invalid_offset``, ``conflicting_filters`` (details
  name both fields of each conflicting pair).

Storage (chosen by measurement, see BENCHMARKS.md): a weighted ``tsvector`` per document
(`memory.search.vectors`: primary and secondary lexemes, quoted, no stemming, no stop
words) with a GIN index, and the document's length in words. Ranking is
`memory.search.ranking`; snippets are cut from the facts for the hits returned
(`memory.search.snippets`): documents keep no copy of the text.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any

from django.utils.dateparse import parse_datetime

from memory.errors import InvalidRequest
from memory.kinds import (
    ACTIVE,
    EVENT_KINDS,
    FRAME_STATUSES,
    OBSERVATION_KINDS,
    RECORDED,
    RETIRED,
    RETIRING,
    TRANSACTION,
)
from memory.limits import SEARCH_DEFAULT_LIMIT, SEARCH_MAX_LIMIT, SEARCH_MAX_QUERY_CHARS
from memory.models import Context
from memory.read.history import resolve_context
from memory.search import ranking, semantic, snippets, statistics, textindex, vectors
from memory.search.documents import reply_context
from memory.shapes import SearchHit, search_hit
from memory.vocabulary import is_thread_name

STATUSES = (*FRAME_STATUSES, RECORDED)
RANK_POOL = 1000  # pages reach this deep
TOTAL_CAP = 1000  # matches counted exactly up to this many

# English function words, dropped from a query that has other words (a query of only these
# is searched as it is): the standard English stop set (Lucene's, which bm25s uses too);
# inverse document frequency weighs the other common words down. Pronouns and question
# words stay: "my order", "when", "how much" say what a person asks about.
_STOP_WORDS = """
    a an and are as at be but by for if in into is it no not of on or such that the their
    then there these they this to was will with
"""
STOP_WORDS = frozenset(_STOP_WORDS.split())
# Contractions fuse a pronoun or auxiliary with a clitic ('d 'm 'll 're 've n't): function
# words too (I'd, don't, you're). `'s` stays: it also makes possessives (buyer's).
_CONTRACTION = re.compile(r"[a-z]+(?:['\u2019\u2018](?:d|m|ll|re|ve)|n['\u2019\u2018]t)")


# Words that say how a question is asked, not what about (R62): they score like any word,
# but a document holding only these of the query's words is no hit ("what is my favorite
# color?" must not answer with every document saying "what" or "my").
_FUNCTION_WORDS = """
    i me my mine myself you your yours yourself we us our ours he him his she her hers
    they them its what which who whom whose when where why how do does did done have has
    had can could would should shall may might must am were been being was any some all
    about from up out so just very also than too more most s t
"""
FUNCTION_WORDS = frozenset(_FUNCTION_WORDS.split())


def is_function_word(token: str) -> bool:
    """Whether a query word only says how a question is asked (`FUNCTION_WORDS`, or a stop
    word): it never makes a hit alone when the query has a content word."""
    return token in FUNCTION_WORDS or is_stop_word(token)


def is_stop_word(token: str) -> bool:
    """Whether a query word is an English function word that does not score: a stop word,
    a single Latin letter (a, I, an initial) or a contraction (`_CONTRACTION`)."""
    return (
        token in STOP_WORDS
        or (len(token) == 1 and "a" <= token <= "z")
        or _CONTRACTION.fullmatch(token) is not None
    )


forget_statistics = statistics.forget_statistics
# What may surround an id in a query without being part of it (quotes, full stops, brackets):
# every character that cannot open or close a frame id.
_NOT_ID_EDGE = (
    "".join(chr(c) for c in range(33, 127) if not chr(c).isalnum()) + "\u201c\u201d\u2018\u2019 "
)


# An ISO 8601 date-time with its offset, ASCII digits only, at most microseconds: anything
# else is refused rather than guessed (a date alone, a local time, a seventh digit cut off).
_DATETIME = re.compile(
    r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?(?:Z|[+-]\d{2}:\d{2})", re.ASCII
)


def _time(value: Any, name: str) -> datetime | None:
    """A `since` / `until` bound: an aware datetime, or a string like 2025-01-31T12:00:00Z
    (offset required); InvalidRequest `invalid_time` otherwise."""
    if value is None:
        return None
    parsed = None
    if isinstance(value, datetime):
        parsed = value
    elif isinstance(value, str) and _DATETIME.fullmatch(value):
        try:
            parsed = parse_datetime(value)
        except ValueError:  # well formed, but no such time (February 30th, 24:00, +99:99)
            parsed = None
    if parsed is None or parsed.tzinfo is None:
        raise InvalidRequest(
            f"{name} must be an ISO 8601 date-time with its offset, like 2025-01-31T12:00:00Z",
            code="invalid_time",
            details=[{"field": name}],
        )
    return parsed


def _check(
    q: Any, type: Any, status: Any, kind: Any, thread: Any, limit: Any, offset: Any
) -> list[tuple[str, list[str]]]:
    if not isinstance(q, str) or not q.strip() or len(q) > SEARCH_MAX_QUERY_CHARS:
        raise InvalidRequest(
            f"q must be a non-empty query of at most {SEARCH_MAX_QUERY_CHARS} characters",
            code="invalid_query",
            details=[{"field": "q"}],
        )
    clauses = textindex.query_clauses(q)
    if not clauses:
        raise InvalidRequest(
            "q has no word or emoji to search for", code="invalid_query", details=[{"field": "q"}]
        )
    if type not in (None, "frame", "event"):
        raise InvalidRequest(
            "type must be frame or event", code="invalid_type", details=[{"field": "type"}]
        )
    if status is not None and status not in STATUSES:
        raise InvalidRequest(
            f"status must be one of {', '.join(STATUSES)}",
            code="invalid_status",
            details=[{"field": "status"}],
        )
    if kind is not None and kind not in (*EVENT_KINDS, "frame"):
        raise InvalidRequest(
            f"kind must be one of {', '.join(EVENT_KINDS)}",
            code="invalid_kind",
            details=[{"field": "kind"}],
        )
    if thread is not None and not is_thread_name(thread):
        raise InvalidRequest(
            "thread is not a valid thread name",
            code="invalid_thread",
            details=[{"field": "thread"}],
        )
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= SEARCH_MAX_LIMIT:
        raise InvalidRequest(
            f"limit must be an integer from 1 to {SEARCH_MAX_LIMIT}",
            code="invalid_limit",
            details=[{"field": "limit"}],
        )
    if isinstance(offset, bool) or not isinstance(offset, int) or not 0 <= offset < RANK_POOL:
        raise InvalidRequest(
            f"offset must be an integer from 0 to {RANK_POOL - 1}",
            code="invalid_offset",
            details=[{"field": "offset"}],
        )
    return clauses


# Filters that no document can satisfy together: each pair answers 400
# `conflicting_filters` naming both fields, rather than an empty page that reads as "no
# match" (frames are never of an event kind or `recorded`; events are never `retiring`).
def _conflicts(
    type: str | None, status: str | None, kind: str | None, transactions: bool | None
) -> None:
    is_frame = type == "frame" or kind == "frame"
    is_event = type == "event" or kind not in (None, "frame")
    found: list[tuple[str, str, str]] = []
    if is_frame and is_event:
        found.append(("type", "kind", f"type={type} cannot hold kind={kind}"))
    if status == RECORDED and is_frame:
        frame_field = "type" if type == "frame" else "kind"
        found.append((frame_field, "status", "frames are never recorded (only events are)"))
    if status == RETIRING and is_event:
        event_field = "type" if type == "event" else "kind"
        found.append((event_field, "status", "events are never retiring (only frames are)"))
    if kind in OBSERVATION_KINDS and status == RECORDED:
        found.append(("kind", "status", f"{kind} events are observations: active or retired"))
    if kind in EVENT_KINDS and kind not in OBSERVATION_KINDS and status in (ACTIVE, RETIRED):
        found.append(("kind", "status", f"{kind} events are not observations: only recorded"))
    if kind == TRANSACTION and transactions is False:
        found.append(
            ("kind", "transactions", "kind=transaction asks for what transactions=false leaves out")
        )
    if found:
        raise InvalidRequest(
            "these filters can never match together: " + "; ".join(why for *_, why in found),
            code="conflicting_filters",
            details=[{"field": name} for pair in found for name in pair[:2]],
        )


def _time_range(since: Any, until: Any) -> tuple[datetime | None, datetime | None]:
    start, end = _time(since, "since"), _time(until, "until")
    if start is not None and end is not None and start >= end:
        raise InvalidRequest(
            "since must be earlier than until (since is inclusive, until exclusive)",
            code="invalid_time",
            details=[{"field": "since"}, {"field": "until"}],
        )
    return start, end


def _filters(
    type: str | None,
    values: dict[str, str | None],
    start: datetime | None,
    end: datetime | None,
    transactions: bool,
) -> tuple[str, dict[str, Any]]:
    """SQL conditions on the document `d` (values as placeholders) and their parameters."""
    filters: list[str] = []
    params: dict[str, Any] = {}
    if type == "frame":
        filters.append("d.frame_id IS NOT NULL")
    elif type == "event":
        filters.append("d.event_id IS NOT NULL")
    for name, value in values.items():
        if value is not None:
            filters.append(f"d.{name} = %({name})s")
            params[name] = value
    if not transactions:
        filters.append(f"d.kind <> '{TRANSACTION}'")
    if start is not None:
        filters.append("d.created_at >= %(since)s")
        params["since"] = start
    if end is not None:
        filters.append("d.created_at < %(until)s")
        params["until"] = end
    return "".join(f" AND {f}" for f in filters), params


def exact_ids(q: str, clauses: list[tuple[str, list[str]]]) -> list[str]:
    """The frame ids that count as "the query itself" (they come first): the query as typed
    (lower case) and the query after the index's normalisation (NFKC, case folding) without
    the punctuation around it, when that still reads as the same words (``release.``,
    ``"release"`` and ``ＲＥＬＥＡＳＥ`` all name the frame ``release``)."""
    ids = [q.strip().lower()]
    bare = textindex.normalise(q).strip().strip(_NOT_ID_EDGE)
    if bare and bare not in ids and textindex.query_clauses(bare) == clauses:
        ids.append(bare)
    return ids


def _hit(row: tuple[Any, ...], wanted: list[str], content: list[str]) -> SearchHit:
    """A result row as a hit, its snippet cut around the query word that weighs most, with
    the query's content words it holds and the live frames superseding it."""
    score, frame_pk, _, ref, status, kind, thread, created_at = row[:8]
    frame_id, body, window, cut, payload, first = row[8:14]
    # The database sends one character past an event's window when its text goes on.
    window = window or ""
    after = len(window) > snippets.WINDOW_CHARS
    window = window[: snippets.WINDOW_CHARS]
    if frame_pk is not None:
        text = vectors.frame_text(frame_id or ref, json.loads(body) if body else None)
        window, cut, after = snippets.window(text, first)
    elif payload is not None:
        text = vectors.event_text(window, json.loads(payload))
        window, cut, after = snippets.window(text, first)
    parts = snippets.snippet(window, wanted, cut_before=bool(cut), cut_after=after)["parts"]
    hit = search_hit(ref, frame_pk is not None, status, kind, thread, created_at, score, parts)
    held, successors = row[15], row[16]
    matched = [word for word, found in zip(content, held or [], strict=False) if found]
    hit["coverage"] = {
        "matched": matched,
        "missing": [word for word in content if word not in matched],
        "share": round(len(matched) / len(content), 3) if content else 1.0,
    }
    if successors:
        hit["superseded_by"] = list(successors)
    return hit


# One read top to bottom (check, clauses, filters, plan, rank, answer), each step a call.
# long: cutting it further would only pass its dozen locals from helper to helper
def search(
    context: Context | int,
    q: str,
    *,
    type: str | None = None,
    status: str | None = None,
    kind: str | None = None,
    thread: str | None = None,
    since: datetime | str | None = None,
    until: datetime | str | None = None,
    transactions: bool | None = None,
    limit: int = SEARCH_DEFAULT_LIMIT,
    offset: int = 0,
) -> dict[str, Any]:
    """Ranked hits for `q` in this context, with snippets, the total and the index lag.
    `transactions` None: left out unless `kind` is ``transaction``."""
    clauses = _check(q, type, status, kind, thread, limit, offset)
    _conflicts(type, status, kind, transactions)
    exact = exact_ids(q, clauses)
    # A question's function words ("is the ...", "I'd") carry no meaning of their own.
    meaningful = [c for c in clauses if not is_stop_word(c[0])]
    clauses = meaningful or clauses
    # A very long question scores its first SCORED_CLAUSES words; the rest are said ignored.
    ignored = [t for t, _ in clauses[ranking.SCORED_CLAUSES :]]
    clauses = clauses[: ranking.SCORED_CLAUSES]
    start, end = _time_range(since, until)
    ctx = resolve_context(context)
    include_tx = bool(transactions) or kind == TRANSACTION
    values = {"status": status, "kind": kind, "thread": thread}
    filters, params = _filters(type, values, start, end, include_tx)
    params["exact"] = exact
    content = [(t, ps) for t, ps in clauses if not is_function_word(t)]
    literals = [vectors.clause_any(t, ps) for t, ps in content]
    # A query with both kinds of word: a hit must hold a content word (R62), itself or in
    # the turn it answers (`vectors.reply_form`).
    borrowed = [vectors.reply_form(t, ps) for t, ps in content] if reply_context() else []
    held = " | ".join(literals + borrowed)
    params["content"] = held if content and len(content) < len(clauses) else None
    params["words"] = literals
    # Live memory first (R60), unless a status is asked for.
    params["stale"] = status is None
    unfiltered = type is None and start is None and end is None and not any(values.values())
    plan = ranking.plan(ctx.pk, clauses, filters, params, include_tx, window=unfiltered)
    # A question in plain words is reordered by meaning; a word or two is a lookup, where
    # what the words match (an identifier's parts, a phrase) is the better evidence.
    asked = semantic.enabled() and semantic.is_question(q, len(meaningful))
    meaning = semantic.query_embedding(q) if asked else None
    found = ranking.ranked(plan, limit, offset, meaning or None)
    said = [t for t, _ in clauses] + [p for _, ps in clauses for p in ps]
    wanted = [form for word in said for form in vectors.spellings(word)]
    content_words = [t for t, _ in content]
    hits = [_hit(row, wanted, content_words) for row in found.rows]
    # The matches are counted whatever the page: an offset past the end finds no hits but
    # does not change how many documents match.
    total = found.matched
    more = offset + len(hits) < min(total, RANK_POOL)
    return {
        "hits": hits,
        "total": min(total, TOTAL_CAP),
        "total_exact": found.exact and total <= TOTAL_CAP,
        "next_offset": offset + len(hits) if more and hits else None,
        "lag": found.lag,
        "query": {"q": q, "tokens": [t for t, _ in clauses], "ignored": ignored},
    }
