"""Lexical search over frames (every status) and events (every kind, retired too) (R33–R36).

How it works: docs/internals.md, section `memory/search/query.py`."""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any

from memory.errors import ErrorCode, InvalidField, InvalidRequest
from memory.kinds import EVENT_KINDS, FRAME_STATUSES, RECORDED, TRANSACTION
from memory.limits import SEARCH_DEFAULT_LIMIT, SEARCH_MAX_LIMIT, SEARCH_MAX_QUERY_CHARS
from memory.models import Context
from memory.read.history import resolve_context
from memory.search import cursor as search_cursor
from memory.search import filters as filters_of
from memory.search import languages, ranking, semantic, snippets, statistics, textindex, vectors
from memory.search.documents import answered, borrowing
from memory.shapes import Coverage, SearchHit, search_hit
from memory.shapes.recall import SearchJson
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


def _check(
    q: Any, type: Any, status: Any, kind: Any, thread: Any, limit: Any, offset: Any
) -> list[tuple[str, list[str]]]:
    if not isinstance(q, str) or not q.strip() or len(q) > SEARCH_MAX_QUERY_CHARS:
        raise InvalidField(
            "q", f"q must be a non-empty query of at most {SEARCH_MAX_QUERY_CHARS} characters"
        )
    clauses = textindex.query_clauses(q)
    if not clauses:
        raise InvalidField("q", "q has no word or emoji to search for")
    if type not in (None, "frame", "event"):
        raise InvalidField("type", "type must be frame or event")
    if status is not None and status not in STATUSES:
        raise InvalidField("status", f"status must be one of {', '.join(STATUSES)}")
    if kind is not None and kind not in (*EVENT_KINDS, "frame"):
        raise InvalidField("kind", f"kind must be one of {', '.join(EVENT_KINDS)}")
    if thread is not None and not is_thread_name(thread):
        raise InvalidField("thread", "thread is not a valid thread name")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= SEARCH_MAX_LIMIT:
        raise InvalidField("limit", f"limit must be an integer from 1 to {SEARCH_MAX_LIMIT}")
    if offset is not None and (
        isinstance(offset, bool) or not isinstance(offset, int) or not 0 <= offset < RANK_POOL
    ):
        raise InvalidField("offset", f"offset must be an integer from 0 to {RANK_POOL - 1}")
    return clauses


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


def _coverage(content: list[str], held: list[bool], borrowed: list[bool]) -> Coverage:
    """Which content words a hit holds (`matched`: any form of the word), which only
    through the turn it answers (`borrowed`, listed when there are any), which neither;
    `share` weighs a borrowed word as the ranking does (`ranking.REPLY_WEIGHT`), so a hit
    found through the turn it answers does not read as a miss."""
    matched = [word for word, found in zip(content, held or [], strict=False) if found]
    lent = [
        word
        for word, found in zip(content, borrowed or [], strict=False)
        if found and word not in matched
    ]
    found: Coverage = {
        "matched": matched,
        "missing": [word for word in content if word not in matched and word not in lent],
        "share": round((len(matched) + ranking.REPLY_WEIGHT * len(lent)) / len(content), 3)
        if content
        else 1.0,
    }
    if lent:
        found["borrowed"] = lent
    return found


def _hit(
    row: tuple[Any, ...], wanted: list[str], content: list[str], codes: frozenset[str]
) -> SearchHit:
    """A result row as a hit, its snippet cut around the query word that weighs most (else
    its stems' roots: `snippets.stem_roots`, `codes` the languages they are in), with the
    query's content words it holds and the live frames superseding it."""
    score, frame_pk, _, ref, status, kind, thread, created_at = row[:8]
    frame_id, body, window, cut, payload, first = row[8:14]
    borrowed, stems = row[18], row[19] or []
    roots = snippets.stem_roots(first, codes)
    # The database sends one character past an event's window when its text goes on.
    window = window or ""
    after = len(window) > snippets.WINDOW_CHARS
    window = window[: snippets.WINDOW_CHARS]
    if frame_pk is not None:
        text = vectors.frame_text(frame_id or ref, json.loads(body) if body else None)
        window, cut, after = snippets.window(text, first, roots)
    elif payload is not None:
        text = vectors.event_text(window, json.loads(payload))
        window, cut, after = snippets.window(text, first, roots)
    shown = snippets.snippet(window, wanted, cut_before=bool(cut), cut_after=after, stems=stems)
    hit = search_hit(
        ref, frame_pk is not None, status, kind, thread, created_at, score, shown["parts"]
    )
    held, parts, successors = row[15], row[16], row[17]
    hit["coverage"] = _coverage(content, held, borrowed)
    if successors:
        hit["superseded_by"] = list(successors)
    if parts:  # indexed in parts: its words past one tsvector's bound are found too
        hit["index_parts"] = parts + 1
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
    offset: int | None = None,
    cursor: str | None = None,
) -> SearchJson:
    """Ranked hits for `q` in this context, with snippets, the total and the index lag.
    `transactions` None: left out unless `kind` is ``transaction``. `offset` None: not sent
    (the first hit). `cursor`: a previous page's `next_cursor` (`memory.search.cursor`),
    sent with the same query and filters and without an `offset`, even 0."""
    clauses = _check(q, type, status, kind, thread, limit, offset)
    filters_of.conflicts(type, status, kind, transactions)
    if cursor is not None and offset is not None:
        raise InvalidRequest(
            "offset and cursor page apart: send the cursor alone",
            code=ErrorCode.INVALID_OFFSET,
            details=[{"field": "offset"}, {"field": "cursor"}],
        )
    exact = exact_ids(q, clauses)
    # A question's function words ("is the ...", "I'd") carry no meaning of their own.
    meaningful = [c for c in clauses if not is_stop_word(c[0])]
    clauses = meaningful or clauses
    # A very long question scores its first SCORED_CLAUSES words; the rest are said ignored.
    ignored = [t for t, _ in clauses[ranking.SCORED_CLAUSES :]]
    clauses = clauses[: ranking.SCORED_CLAUSES]
    start, end = filters_of.time_range(since, until)
    ctx = resolve_context(context)
    include_tx = bool(transactions) or kind == TRANSACTION
    values = {"status": status, "kind": kind, "thread": thread}
    filters, params = filters_of.sql_filters(type, values, start, end, include_tx)
    params["exact"] = exact
    asked_for = search_cursor.fingerprint(
        q, {"type": type, **values, "since": start, "until": end, "transactions": include_tx}
    )
    offset = offset or 0  # not sent: the first hit
    snapshot = None
    if cursor is not None:
        snapshot, offset = search_cursor.read(cursor, ctx.pk, asked_for)
    # The languages the query is stemmed in: the context's now (a document indexed a moment
    # ago counts), or, for a cursor's next page, those its first page used.
    if snapshot is not None and snapshot.languages is not None:
        codes = frozenset(snapshot.languages)
    else:
        codes = languages.held(ctx.pk)
    content = [(t, ps) for t, ps in clauses if not is_function_word(t)]
    literals = [vectors.clause_any(t, ps, codes) for t, ps in content]
    # A query with both kinds of word: a hit must hold a content word (R62), itself or in
    # the turn it answers (`vectors.reply_form`), when the query is short enough to look there.
    replies = borrowing(len(clauses))
    borrowed = [vectors.reply_form(t, ps, codes) for t, ps in content] if replies else []
    held = " | ".join(literals + borrowed)
    params["content"] = held if content and len(content) < len(clauses) else None
    params["words"] = literals
    params["borrowed"] = borrowed
    # The query words' stem lexemes (`vectors.stem_lexemes`), those not the word itself:
    # the page says which each hit holds, and its snippet marks the words they stem from.
    said = [t for t, _ in clauses] + [p for _, ps in clauses for p in ps]
    stems = list(dict.fromkeys(s for t, _ in clauses for s in vectors.stem_lexemes(t, codes)))
    params["stems"] = [s for s in stems if s not in said]
    params["stem_queries"] = [vectors.tsquery_literal([s]) for s in params["stems"]]
    # Live memory first (R60), unless a status is asked for.
    params["stale"] = status is None
    unfiltered = type is None and start is None and end is None and not any(values.values())
    plan = ranking.plan(
        ctx.pk,
        clauses,
        filters,
        params,
        include_tx,
        codes,
        window=unfiltered,
        snapshot=snapshot,
        replies=replies,
    )
    # A question in plain words is reordered by meaning; a word or two is a lookup, where
    # what the words match (an identifier's parts, a phrase) is the better evidence.
    asked = semantic.enabled() and semantic.is_question(q, len(meaningful))
    meaning = semantic.query_embedding(q) if asked else None
    # Offset pages end at the RANK_POOL-th hit (docs/search.md); `next_cursor` goes past it.
    size = limit if cursor is not None else min(limit, RANK_POOL - offset)
    found = ranking.ranked(plan, size, offset, meaning or None)
    wanted = [form for word in said for form in vectors.spellings(word)]
    content_words = [t for t, _ in content]
    hits = [_hit(row, wanted, content_words, codes) for row in found.rows]
    # A hit found through words it borrowed names the turn it answers, to be read next.
    lent = [
        row[2] for row, hit in zip(found.rows, hits, strict=True) if "borrowed" in hit["coverage"]
    ]
    turns = answered(lent)
    for row, hit in zip(found.rows, hits, strict=True):
        if row[2] in turns and "borrowed" in hit["coverage"]:
            hit["answers"] = turns[row[2]]
    # The matches are counted whatever the page: an offset past the end finds no hits but
    # does not change how many documents match.
    total = found.matched
    more = offset + len(hits) < min(total, RANK_POOL) and cursor is None
    going_on = len(hits) == size and offset + size < total
    return {
        "hits": hits,
        "total": min(total, TOTAL_CAP),
        "total_exact": found.exact and total <= TOTAL_CAP,
        "next_offset": offset + len(hits) if more and hits else None,
        "next_cursor": search_cursor.issue(ctx.pk, asked_for, plan.snapshot, offset + size)
        if going_on and plan.snapshot
        else None,
        "lag": found.lag,
        "query": {"q": q, "tokens": [t for t, _ in clauses], "ignored": ignored},
    }
