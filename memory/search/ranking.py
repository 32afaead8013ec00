"""How search chooses and orders documents (R33): BM25 over the index's lexemes, in SQL.

How it works: docs/internals.md, section `memory/search/ranking.py`."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import connection

from memory.hotsql import bound_cursor
from memory.search import near, reach, semantic, statistics, vectors
from memory.search import ranking_sql as sql
from memory.search.cursor import Snapshot, measured, refused
from memory.search.indexer import LAG_COLUMNS, lag
from memory.search.snippets import WINDOW_BEFORE, WINDOW_CHARS, stem_roots, word_pattern
from memory.search.statistics import document_counts, idf
from memory.search.textindex import SECONDARY
from memory.shapes.recall import IndexLag

K1 = 1.5
# BM25's usual values, fixed beforehand: tuned on the relevance benchmark's own queries (b
# 0.9 won there) they would report an optimistic figure; bench/tune_bm25.py agrees.
B = 0.75
SECONDARY_WEIGHT = 0.5  # a part of an identifier, or a payload word, is half a word
# A word's stem (`vectors.stem_form`: ``cancel`` for ``cancelled``) is one more item: a
# document saying another form of the word counts, the word itself counts more.
STEM_WEIGHT = 0.75
# A word heard only in the turn a reply answers (`vectors.reply_form`) weighs this share.
REPLY_WEIGHT = 0.6
ID_WEIGHT = 1.0
EXACT_LEAD = 0.01  # how far the frame named by the query scores above the next hit
FRAME_FACTOR = 2.0
TRANSACTION_FACTOR = 0.3
# A frame retiring, retired or superseded scores this share of a live one (R60): live
# memory first for the same match, while a much better stale match still shows.
STALE_FACTOR = 0.5
COMMON_FRACTION = 0.1
ROW_BUDGET = 1000  # documents the selecting items may hold together (estimated)
WIDEN_BELOW = 200
WIDE_POOL = 1000
# In a context of more than statistics.RECENT_WINDOW documents, a selecting item held by
# BROAD documents or more selects among the newest RECENT_WINDOW only (see the module), and
# so does the phrase when each of its words is held by BROAD_PHRASE or more: the phrase is
# checked on each document holding all its words, reading its positions (a whole vector).
# Below these, reading each match costs no more than in a context of the window's size.
BROAD = 1000
BROAD_PHRASE = 1000
PHRASE_CLAUSES = 6
SCORED_CLAUSES = 32  # the first words of a very long query (function words dropped first)
Clauses = list[tuple[str, list[str]]]  # the query's words, each with its parts
# What a page reports of each hit's words (`memory.search.query` sets them in `params`):
# the content words it holds, those it holds only through the turn it answers, and the
# query's stem lexemes it holds, with their tsqueries.
PAGE_WORDS = ("words", "borrowed", "stems", "stem_queries")


@dataclass
class Item:
    literal: str  # tsquery literal
    form_weight: float  # 1 for a word or the phrase, SECONDARY_WEIGHT for a secondary form
    first: str  # the word a snippet opens at when this item weighs most
    estimate: float  # documents of the context holding it (`statistics.document_counts`)
    common: float | None = None  # its weight, when it only scores (see `plan`)
    lexeme: str = ""  # as the index stores it (a secondary form marked SECONDARY)
    recent: float | None = None  # its weight, when it selects among the newest only
    phrase_scale: float | None = None  # documents / RECENT_WINDOW, for a limited phrase
    reach: float = 0.0  # documents its index scan reads (`memory.search.reach`)


@dataclass
class Ranked:
    rows: list[tuple[Any, ...]]  # score, document, frame and event columns, snippet word,
    # whether it is the frame named by the query
    matched: int  # documents matched in all
    exact: bool  # false when a common word selecting its newest WIDE_POOL left some out, or
    # an item selected among the newest RECENT_WINDOW documents only
    lag: IndexLag  # memory.search.indexer.lag


@dataclass
class Plan:
    ctx: int
    filters: str  # " AND d.... " SQL, values in params
    params: dict[str, Any]
    items: list[Item]
    documents: int
    average: float  # the context's average document length in words
    id_words: list[tuple[list[str], int]] = field(default_factory=list)  # (words, item)
    since: datetime | None = None  # where the newest RECENT_WINDOW documents begin
    snapshot: Snapshot | None = None  # what it ranks by, for the next page's cursor
    codes: frozenset[str] = frozenset()  # the languages its words are stemmed in


def _estimates(
    ctx: int,
    items: list[Item],
    filters: str,
    params: dict[str, Any],
    documents: int,
    snapshot: Snapshot | None,
    windowed: bool,
) -> list[float]:
    """How many documents hold each item (set as its `estimate`): counted now, or as a
    cursor's first page counted them. With a window, up to BROAD only: past it an item is
    broad whatever its count, and each row counted past it is read for its weight alone."""
    if snapshot is None:
        pairs = [(item.literal, item.lexeme) for item in items]
        cap = BROAD if windowed else statistics.COUNT_CAP
        estimates = document_counts(ctx, pairs, filters, params, documents, cap, windowed)
    elif len(snapshot.estimates) == len(items):
        estimates = list(snapshot.estimates)
    else:
        raise refused("malformed cursor", "malformed")
    for item, estimate in zip(items, estimates, strict=True):
        item.estimate = estimate
    return estimates


def _choose(items: list[Item], documents: int, windowed: bool) -> None:
    """Which items select and which only score (their `common` weight set here)."""
    # The rarest items select, until the documents they select among would pass ROW_BUDGET
    # (a broad item's among the newest RECENT_WINDOW: as many as in a context of that size,
    # so the choice, and the work, stay the same as history grows); the others only add
    # their weight to the candidates holding them.
    share = statistics.RECENT_WINDOW / max(documents, 1) if windowed else 1.0
    budget = 0.0
    for item in sorted(items, key=lambda item: item.estimate):
        within = item.estimate * min(share, 1.0) if item.reach >= BROAD else item.estimate
        budget += within
        if item.estimate > COMMON_FRACTION * documents or (budget > ROW_BUDGET and budget > within):
            item.common = item.form_weight * idf(item.estimate, documents)


def plan(
    ctx: int,
    clauses: Clauses,
    filters: str,
    params: dict[str, Any],
    include_tx: bool,
    codes: frozenset[str],
    window: bool = True,
    snapshot: Snapshot | None = None,
    replies: bool = False,
) -> Plan:
    """The query's items (see the module); the ones that only score get their weight here.
    `codes`: the languages its words are stemmed in besides English (`languages.held`).
    `window`: whether broad items may be limited to the newest documents (false for a
    filtered search: the newest documents of the context may hold none that pass).
    `snapshot`: rank the documents the first page of a cursor ranked, measured as then
    (`memory.search.cursor`); the plan's own `snapshot` is what the next page needs.
    `replies`: whether the words replies borrowed count (`documents.borrowing`)."""
    clauses = clauses[:SCORED_CLAUSES]
    documents, average, since, last = measured(ctx, include_tx, window, snapshot)
    items: list[Item] = []
    id_words = []
    for token, parts in clauses:
        first = parts[0] if parts else token
        id_words.append((parts or [token], len(items)))
        forms = vectors.clause_forms(token, parts)
        for lexeme, literal, weight in zip(
            (token, SECONDARY + token), forms, (1.0, SECONDARY_WEIGHT), strict=True
        ):
            items.append(Item(literal, weight, first, 0.0, lexeme=lexeme))
    words = items[::2]  # each clause's primary form: the word as said
    items += _other_forms(clauses, codes, replies)
    windowed = since is not None
    estimates = _estimates(ctx, items, filters, params, documents, snapshot, windowed)
    low = reach.floors(words, items)
    reaches = reach.measure(ctx, items, filters, params, documents, windowed, snapshot, BROAD, low)
    _choose(items, documents, since is not None)
    if since is not None:
        for item in items:
            if item.common is None and item.reach >= BROAD:
                item.recent = item.form_weight * idf(item.estimate, documents)
    counted = {item.lexeme: item.estimate for item in reversed(items)}
    if 2 <= len(clauses) <= PHRASE_CLAUSES:
        # Words found next to each other, in the query's order, count once more.
        phrase = " <-> ".join(vectors.clause_any(t, p, codes) for t, p in clauses)
        items.append(Item(phrase, 1.0, items[0].first, 0.0))
        # The phrase matches any form of each word (`vectors.clause_any`): its index scan
        # reads every document holding a form of each, so that is what makes it broad.
        if since is not None and min(reach.any_form(clauses, counted)) >= BROAD_PHRASE:
            rarest = min(word.estimate for word in words)
            items[-1].recent = idf(rarest, documents)  # if none of the newest holds it
            items[-1].phrase_scale = documents / statistics.RECENT_WINDOW
    since_text = since.isoformat() if since else None
    taken = Snapshot(last, documents, average, since_text, estimates, reaches, sorted(codes))
    # The documents up to `last` only: those indexed since wait for a new search.
    params["bound"] = last
    filters += " AND d.id <= %(bound)s"
    return Plan(ctx, filters, params, items, documents, average, id_words, since, taken, codes)


def holds(query: str, vector: str = "v") -> str:
    """SQL: whether the document `d` holds the tsquery `query`, in its vector (`vector`:
    `v`, read once, or `d`) or in its parts (`sql.HOLDS`)."""
    return sql.HOLDS.format(vector=vector, query=query)


def _other_forms(clauses: Clauses, codes: frozenset[str], replies: bool) -> list[Item]:
    """Each query word's stem item (another form of the word; `codes`: `plan`), and with
    `replies` its item as heard only in the turn a reply answers (`vectors.reply_form`)."""
    items = []
    for token, parts in clauses:
        stemmed = vectors.stem_form(token, codes, other=True)
        if stemmed is not None:
            first = parts[0] if parts else token
            root = vectors.STEM + (vectors.stem_root(token) or token)
            items.append(Item(stemmed, STEM_WEIGHT, first, 0.0, lexeme=root))
    if replies:
        for token, parts in clauses:
            first = parts[0] if parts else token
            literal = vectors.reply_form(token, parts, codes)
            items.append(Item(literal, REPLY_WEIGHT, first, 0.0, lexeme=vectors.REPLY + token))
    return items


def _page(count: str, order: str, lag_columns: str) -> str:
    # One character more than the window: the snippet knows whether the text goes on.
    return sql.PAGE.format(
        count=count,
        order=order,
        lag=lag_columns,
        before=WINDOW_BEFORE,
        width=WINDOW_CHARS + 1,
        held=holds("w", "d"),
    )


_PAGE_OF_IDS_SQL = sql.PAGE_OF_IDS + _page(
    "(SELECT 0::bigint AS n, false AS more)", "h.n", "0, NULL::timestamptz"
)


def _sql(plan: Plan, params: dict[str, Any], select: str) -> str:
    """The ranking statement for this plan's filters, ending in `select` (a page, or the
    head to reorder); fills the items into `params`."""
    rare = [item for item in plan.items if item.common is None]
    common = [item for item in plan.items if item.common is not None]
    params["rare"] = [item.literal for item in rare]
    params["recent"] = [item.recent is not None for item in rare]
    params["fixed"] = [item.recent if item.phrase_scale is None else None for item in rare]
    params["scale"] = [item.phrase_scale or 1.0 for item in rare]
    params["recent_since"] = plan.since or "-infinity"
    params["windowed"] = plan.since is not None
    params["forms"] = [item.form_weight for item in rare]
    params["firsts"] = [item.first for item in rare] or [plan.items[0].first]
    params["patterns"] = [word_pattern(first) for first in params["firsts"]]
    params["roots"] = [" ".join(stem_roots(first, plan.codes)) for first in params["firsts"]]
    params["common"] = [item.literal for item in common]
    # Common items' weights, checked once per candidate on one copy of its vector (not TOAST).
    terms = [
        f"CASE WHEN {holds(f'%(c{n})s::tsquery')} THEN {item.common:.6f} ELSE 0 END"
        for n, item in enumerate(common)
    ]
    params.update({f"c{n}": item.literal for n, item in enumerate(common)})
    # An event older than the window, found by a rarer word, weighs the limited items it holds.
    for k, item in enumerate(rare, start=1):
        if item.recent is not None:
            older = holds(f"%(o{k})s::tsquery")
            terms.append(sql.OLDER_EVENT.format(k=k, holds=older, fallback=f"{item.recent:.6f}"))
            params[f"o{k}"] = item.literal
    bonus = " + ".join(terms)
    position = {id(item): n for n, item in enumerate(rare, start=1)}
    # Every query word a frame's id holds counts once more, selecting or not (a word common
    # in the context used to lose its id bonus).
    named = [(words, plan.items[n]) for words, n in plan.id_words]
    params["named_words"] = [" ".join(words) for words, _ in named]
    params["named_items"] = [position.get(id(item), 0) for _, item in named]
    params["named_weights"] = [item.common or 0.0 for _, item in named]
    return sql.RANK_SQL.format(
        select=select,
        content=holds("%(content)s::tsquery", "d"),
        filters=plan.filters,
        bonus=f"({bonus})" if bonus else "0::float8",
        once=sql.ONCE if bonus else "",
        lag=LAG_COLUMNS,
        named=sql.NAMED,
        pool=WIDE_POOL,
        widen=WIDEN_BELOW,
        id_weight=ID_WEIGHT,
        stale=STALE_FACTOR,
        lead=EXACT_LEAD,
        frame=FRAME_FACTOR,
        tx=TRANSACTION_FACTOR,
        k1p1=K1 + 1,
        k1=K1,
        b=B,
    )


def _fetch(statement: str, params: dict[str, Any]) -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(statement, params)
        return cursor.fetchall()


def ranked(plan: Plan, limit: int, offset: int, meaning: bytes | None = None) -> Ranked:
    """One page of ranked rows, how many documents matched, and the index lag. With the
    query's embedding (`meaning`, `semantic.query_embedding`), the first `semantic.HEAD`
    documents are reordered by meaning (`_reordered`), whatever the page: a later page
    then continues the same order (the head grows by the documents found by meaning)."""
    params = dict(plan.params)
    params.update({"ctx": plan.ctx, "docs": plan.documents, "avg": max(plan.average, 1.0)})
    if meaning is not None:
        return _reordered(plan, params, limit, offset, meaning)
    params.update({"limit": limit, "offset": offset})
    select = _page(sql.COUNTED, sql.RANKED_ORDER, LAG_COLUMNS)
    rows = _fetch(_sql(plan, params, select), params)
    matched, more, pending, oldest = rows[0][-2], rows[0][-1], rows[0][-4], rows[0][-3]
    hits = [row[:-4] for row in rows if row[3] is not None]
    return Ranked(hits, matched, not more and not _windowed(plan), lag(pending, oldest))


def _windowed(plan: Plan) -> bool:
    """Whether an item selected among the newest documents only (the count may be short)."""
    return any(item.recent is not None for item in plan.items)


def _reordered(
    plan: Plan, params: dict[str, Any], limit: int, offset: int, meaning: bytes
) -> Ranked:
    """The head (ids, scores, embeddings) in one statement, reordered here, then the page's
    hits with their snippets in a second: no window is cut for a hit not shown."""
    params.update({"limit": max(semantic.HEAD, offset + limit), "offset": 0})
    params["model"] = semantic.model_name()  # vectors of another embedder do not compare
    # Hybrid first stage (R61): documents close in meaning join the head though they share
    # no word with the query (lexical score 0: they rank by meaning alone). Asked for before
    # the head is known, as many more as the head holds, so the statement can say which of
    # them the words found too (counted once in `matched`).
    closest = near.closest(plan.ctx, plan.filters, params, meaning, semantic.NEAR + semantic.HEAD)
    params["near_ids"] = [pk for pk, _ in closest]
    rows = _fetch(_sql(plan, params, sql.HEAD.format(lag=LAG_COLUMNS, counted=sql.COUNTED)), params)
    matched, more, pending, oldest = rows[0][-2], rows[0][-1], rows[0][-4], rows[0][-3]
    word, lexical = rows[0][4], set(rows[0][5])
    found = [row for row in rows if row[1] is not None]  # score, id, exact, embedding
    head = found[: semantic.HEAD]
    # (Only the head is left out of them, whatever the page, so every page finds the same
    # ones; the lexical hits after the head leave them out in turn.)
    in_head = {row[1] for row in head}
    nearest = [(pk, blob) for pk, blob in closest if pk not in in_head][: semantic.NEAR]
    head += [(0.0, pk, False, blob) for pk, blob in nearest]
    matched += sum(pk not in lexical for pk, _ in nearest)
    order = semantic.rerank([(row[0], row[2], row[3]) for row in head], meaning, EXACT_LEAD)
    ranking = [(head[n][1], score, head[n][2]) for n, score in order]
    taken = {pk for pk, _ in nearest}
    rest = [(row[1], row[0], row[2]) for row in found[semantic.HEAD :] if row[1] not in taken]
    page = (ranking + rest)[offset : offset + limit]
    hits: list[tuple[Any, ...]] = []
    if page:
        ids, scores, exacts = (list(column) for column in zip(*page, strict=True))
        # The same statement for every reordered page: prepared once per connection.
        with connection.wrap_database_errors, bound_cursor() as cursor:
            cursor.execute(
                _PAGE_OF_IDS_SQL,
                {
                    "ids": ids,
                    "scores": scores,
                    "exacts": exacts,
                    "word": word,
                    "pattern": word_pattern(word),
                    "root": " ".join(stem_roots(word, plan.codes)),
                    **{name: plan.params[name] for name in PAGE_WORDS},
                },
                prepare=True,
            )
            hits = [row[:-4] for row in cursor.fetchall() if row[3] is not None]
    return Ranked(hits, matched, not more and not _windowed(plan), lag(pending, oldest))
