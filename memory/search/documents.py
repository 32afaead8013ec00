# long: the documents and every way they are written (index, rebuild, embed) share one
# row shape; the search branch still reshapes them, so the split waits for that merge
"""Search documents from the facts (R34): what the index worker writes, and rebuilds.

How it works: docs/internals.md, section `memory/search/documents.py`."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypedDict

from django.conf import settings
from django.db import connection, transaction
from django.db.models import TextField
from django.db.models.functions import MD5, Cast, Left

from memory.kinds import AGENT_MESSAGE, TRANSACTION, USER_MESSAGE, event_status
from memory.models import Context, Event, Frame, FrameRevision, SearchLanguage
from memory.search import semantic, vector_column
from memory.search.textindex import SECONDARY, index_terms
from memory.search.vectors import Vector, event_text, event_vector, frame_text, frame_vector
from memory.sql import named_row, named_rows, statements
from memory.vocabulary import event_ref


def _sql(name: str) -> str:
    return statements("memory.search")[name]


class EmbeddingProgress(TypedDict):
    model: str
    embedded: int
    documents: int


class WorkerInterrupted(RuntimeError):
    """Raised by `index_rows(fail_after=...)` to abandon a batch mid-way."""


@dataclass
class Document:
    context_id: int
    frame_id: int | None
    event_id: int | None
    ref: str
    status: str
    kind: str
    thread: str
    created_at: Any
    tokens: str  # tsvector literal (the text itself is not stored: snippets come from facts)
    length: int  # words (BM25's document length)
    fingerprint: tuple[Any, ...]
    parts: list[str]  # tsvector literals of the lexemes past PostgreSQL's bound (SearchPart)
    languages: tuple[str, ...]  # of its marked stems (`vectors.Vector`, `SearchLanguage`)
    text: str | None = None  # what to embed (None: no embedding, as for transaction events)
    embedding: bytes | None = None
    embedding_model: str = ""


def _embedded_text(content: str, payload: Any) -> str:
    """The part of an event's text its embedding reads (`semantic.EMBED_CHARS`)."""
    return event_text(content[: semantic.EMBED_CHARS], payload)[: semantic.EMBED_CHARS]


def _embed(documents: dict[int, Document]) -> dict[int, Document]:
    """Fill in the documents' embeddings, in one pass of the model."""
    wanted = [doc for doc in documents.values() if doc.text is not None]
    if not wanted or not semantic.enabled():
        return documents
    model = semantic.model_name()
    for doc, blob in zip(
        wanted, semantic.embeddings([doc.text or "" for doc in wanted]), strict=True
    ):
        doc.embedding = blob
        doc.embedding_model = model
        doc.text = None
    return documents


class IndexedWords(TypedDict):
    tokens: str  # the first tsvector literal
    parts: list[str]  # the literals past PostgreSQL's bound
    length: int
    languages: tuple[str, ...]


def _vector(vector: Vector) -> IndexedWords:
    return {
        "tokens": vector.literals[0],
        "parts": vector.literals[1:],
        "length": vector.length,
        "languages": vector.languages,
    }


_FRAME_FIELDS = ("pk", "context_id", "frame_id", "body", "status", "revision", "updated_at")
_FRAME_FINGERPRINT = ("revision", "status", "updated_at", "body_md5")


def _with_body_md5(frames: Any) -> Any:
    # An erasure masks a body in place, without a new revision: its digest says it changed.
    return frames.annotate(body_md5=MD5(Cast("body", TextField())))


def _frame_fingerprint(row: Mapping[str, Any]) -> tuple[Any, ...]:
    return tuple(row[name] for name in _FRAME_FINGERPRINT)


def _frame_documents(pks: list[int]) -> dict[int, Document]:
    if not pks:
        return {}
    rows = list(_with_body_md5(Frame.objects.filter(pk__in=pks)).values(*_FRAME_FIELDS, "body_md5"))
    threads = dict(
        FrameRevision.objects.filter(frame_id__in=pks)
        .order_by("frame_id", "-revision")
        .distinct("frame_id")
        .values_list("frame_id", "transaction__thread")
    )
    documents = {}
    for row in rows:
        documents[row["pk"]] = Document(
            context_id=row["context_id"],
            frame_id=row["pk"],
            event_id=None,
            ref=row["frame_id"],
            status=row["status"],
            kind="frame",
            thread=threads.get(row["pk"], "main"),
            created_at=row["updated_at"],
            **_vector(frame_vector(row["frame_id"], row["body"])),
            fingerprint=_frame_fingerprint(row),
            text=frame_text(row["frame_id"], row["body"])[: semantic.EMBED_CHARS],
        )
    return _embed(documents)


# A reply is indexed with the turn it answers: a user or agent message whose thread's
# previous message (at most CONTEXT_LOOKBACK events back) is of the other kind gets that
# message's first CONTEXT_CHARS characters as context (`event_vector`). Two messages of one
# kind in a row are separate things said, not an answer.
CONTEXT_KINDS = (USER_MESSAGE, AGENT_MESSAGE)
CONTEXT_LOOKBACK = 50
CONTEXT_CHARS = 2000
# Only a turn of at most TURN_WORDS content words lends its words: a short turn is one
# thing asked or said, which the reply is about ("Have you painted lately?" / "Yes, last
# week!"); a long one (an agent's report, a customer's case) is about many things, and
# lending all of them makes the reply match what it never took up. Chosen on LoCoMo's dev
# split and STATE-Bench (BENCHMARKS.md).
TURN_WORDS = 20
# Only a question of at most QUESTION_WORDS scored words (stop words aside; `when` counts)
# looks for words a reply borrowed: a short question names one thing, and the answer to it
# may not repeat it ("when did you paint?" / "yes, last week!"); a long message (a
# customer's case) matches on its own words, and borrowed ones mostly add documents that
# share its vocabulary but not its task. Chosen on LoCoMo's dev split and STATE-Bench's
# development queries (BENCHMARKS.md).
QUESTION_WORDS = 11


def reply_context() -> bool:
    """Whether replies are indexed with the turn they answer (MORPHZ_SEARCH_REPLY_CONTEXT,
    on by default; see `borrowing`)."""
    return bool(getattr(settings, "MORPHZ_SEARCH_REPLY_CONTEXT", True))


def borrowing(content_words: int) -> bool:
    """Whether a query of `content_words` scored words (stop words aside: `search`'s
    clauses) counts the words replies borrowed from their turns: with reply context on, for
    at most QUESTION_WORDS."""
    return content_words <= QUESTION_WORDS and reply_context()


def content_words(text: str) -> int:
    """How many distinct words of `text` are not function words (`query.is_function_word`)."""
    from memory.search.query import is_function_word  # the query module imports this one

    terms = index_terms(text)[0]
    return len({t for t in terms if not t.startswith(SECONDARY) and not is_function_word(t)})


def borrowed(kind: str, content: str, context: str | None) -> str | None:
    """What a reply borrows from the turn it answers (`context`, for `event_vector`): the
    turn when it has at most TURN_WORDS content words, else nothing."""
    if not context or content_words(context) > TURN_WORDS:
        return None
    return context


def _reply_rule(ids: list[int]) -> dict[str, list[int] | list[str] | int]:
    """The parameters of the statements that read which turn a reply answers."""
    return {"ids": ids, "kinds": list(CONTEXT_KINDS), "lookback": CONTEXT_LOOKBACK}


def replies_to(event_pks: list[int]) -> list[int]:
    """The ids, in order, of the events whose documents borrow words from these events: the
    replies answering them, by the rule the index reads (`answered_turn`), whether or not
    reply context is on now (a document may have been written while it was). Reads only,
    raises nothing of its own; the caller holds what keeps the answer true (erasure: the
    row locks of its contexts)."""
    if not event_pks:
        return []
    with connection.cursor() as cursor:
        cursor.execute(_sql("replies_to"), _reply_rule(event_pks))
        return [row["id"] for row in named_rows(cursor)]


def answered(event_pks: list[int]) -> dict[int, str]:
    """The ref (``@e41``) of the turn each of these events answers now, by the rule the
    index reads (`answered_turn`), for those that answer one: what a search hit found
    through words it borrowed names. Reads only, raises nothing of its own."""
    if not event_pks:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(_sql("answered_turns"), _reply_rule(event_pks))
        return {row["id"]: event_ref(row["seq"]) for row in named_rows(cursor)}


def _event_fingerprint(row: Mapping[str, Any]) -> tuple[Any, ...]:
    # Its state, and the digests of its text and of the turn it answers: an erasure changes
    # these in place (`queries.sql`, `event_fingerprints`).
    names = ("is_observation", "active", "content_md5", "payload_md5", "answers_md5")
    return tuple(row[name] for name in names)


def _event_documents(pks: list[int]) -> dict[int, Document]:
    if not pks:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(_sql("event_rows"), {**_reply_rule(pks), "chars": CONTEXT_CHARS})
        rows = named_rows(cursor)
    replies = reply_context()
    documents = {}
    for row in rows:
        pk, kind, content = row["id"], row["kind"], row["content"]
        observed, active = row["is_observation"], row["active"]
        body = json.loads(row["payload"]) if row["payload"] else None
        documents[pk] = Document(
            context_id=row["context_id"],
            frame_id=None,
            event_id=pk,
            ref=event_ref(row["seq"]),
            status=event_status(observed, active),
            kind=kind,
            thread=row["thread"],
            created_at=row["created_at"],
            **_vector(
                event_vector(
                    kind,
                    content,
                    body,
                    borrowed(kind, content, row["answers"]) if replies else None,
                )
            ),
            fingerprint=_event_fingerprint(row),
            text=None if kind == TRANSACTION else _embedded_text(content, body),
        )
    return _embed(documents)


def _upsert(documents: list[Document], fail_after: int | None) -> int:
    """Write the documents (idempotent); with `fail_after`, only that many are written and
    WorkerInterrupted is raised before the caller commits (crash drills in tests)."""
    batch = documents if fail_after is None else documents[:fail_after]
    vectors = vector_column.available()  # then its column is written too (`upsert_parts`)
    with connection.cursor() as cursor:
        cursor.execute(_sql("stage"))
        with cursor.cursor.copy(_sql("copy_staged")) as copy:
            for doc in batch:
                copy.write_row(
                    (
                        doc.context_id,
                        doc.frame_id,
                        doc.event_id,
                        doc.ref,
                        doc.status,
                        doc.kind,
                        doc.thread,
                        doc.created_at,
                        doc.tokens,
                        doc.length,
                        doc.embedding,
                        doc.embedding_model,
                        len(doc.parts),
                        doc.parts or None,
                        vector_column.literal(doc.embedding) if vectors else None,
                        list(doc.languages) or None,
                    )
                )
        for target in ("frame_id", "event_id"):
            if any(getattr(doc, target) is not None for doc in batch):
                cursor.execute(_sql("drop_parts").format(target=target))
                upsert = _sql("upsert").format(target=target, **vector_column.upsert_parts())
                cursor.execute(upsert)
                if any(doc.parts for doc in batch):
                    cursor.execute(_sql("add_parts").format(target=target))
        if any(doc.languages for doc in batch):
            cursor.execute(_sql("add_languages"))  # in this transaction, with the documents
        cursor.execute(_sql("clear_staging"))
    if fail_after is not None and len(batch) < len(documents):
        raise WorkerInterrupted(f"interrupted after {len(batch)} documents")
    return len(batch)


def _moved_since_read(
    frames: dict[int, Document], events: dict[int, Document]
) -> tuple[list[int], list[int]]:
    """Targets whose facts changed after they were read (rows that are gone are skipped)."""
    current_frames = {
        row["pk"]: _frame_fingerprint(row)
        for row in _with_body_md5(Frame.objects.filter(pk__in=list(frames))).values(
            "pk", *_FRAME_FINGERPRINT
        )
    }
    current_events: dict[int, tuple[Any, ...]] = {}
    if events:
        with connection.cursor() as cursor:
            cursor.execute(
                _sql("event_fingerprints_now"),
                {**_reply_rule(list(events)), "chars": CONTEXT_CHARS},
            )
            current_events = {row["id"]: _event_fingerprint(row) for row in named_rows(cursor)}
    moved_frames = [
        pk for pk in frames if pk in current_frames and current_frames[pk] != frames[pk].fingerprint
    ]
    moved_events = [
        pk for pk in events if pk in current_events and current_events[pk] != events[pk].fingerprint
    ]
    return moved_frames, moved_events


def index_rows(frame_pks: list[int], event_pks: list[int], fail_after: int | None = None) -> int:
    """Write documents for these targets, never leaving an older reading over a newer one.

    No lock on the contexts (commits must not wait for the indexer). Instead the documents
    are written first, which row-locks them until this transaction ends, and the facts are
    checked again afterwards: a target that moved since it was read is rebuilt now. A worker
    that read newer facts either wrote before us (we see the move and rebuild) or blocks on
    our row locks and writes after us; a commit after our check leaves a new intent.

    An erasure (`memory.erasure`) is such a worker too: it masks the facts in place and
    writes their documents in its own transaction, so the fingerprints hold digests of the
    text. Committed before our check, we see the move; committed after it, its write waited
    on our row locks (or it wrote first, and we waited on its commit) and comes last. No
    lock besides the documents' rows, so no lock order to keep with the context locks."""
    frames = _frame_documents(sorted(set(frame_pks)))
    events = _event_documents(sorted(set(event_pks)))
    documents = [frames[pk] for pk in sorted(frames)] + [events[pk] for pk in sorted(events)]
    written = _upsert(documents, fail_after)
    moved_frames, moved_events = _moved_since_read(frames, events)
    if moved_frames or moved_events:
        fresh_frames = _frame_documents(moved_frames)
        fresh_events = _event_documents(moved_events)
        _upsert(
            [fresh_frames[pk] for pk in sorted(fresh_frames)]
            + [fresh_events[pk] for pk in sorted(fresh_events)],
            None,
        )
    return written


def index_targets(frame_pks: list[int], event_pks: list[int]) -> int:
    """(Re)index these frames and events from the facts now; returns documents written."""
    with transaction.atomic():
        return index_rows(frame_pks, event_pks)


def rebuild(
    *,
    context_ids: list[int] | None = None,
    clear: bool = False,
    batch_size: int = 500,
    progress: Any = None,
) -> int:
    """Rebuild documents for every frame and event (of these contexts) from the facts.

    Only SearchDocument is written; memory is never touched (R34). `progress(n)` is called
    after each batch with the number of rows done. With `clear`, the contexts' documents are
    deleted first. Returns the number of documents written."""
    from memory.models import SearchDocument

    contexts = Context.objects.order_by("pk")
    if context_ids is not None:
        contexts = contexts.filter(pk__in=context_ids)
    written = 0
    for context_id in contexts.values_list("pk", flat=True):
        if clear:  # the languages are written again with the documents
            SearchDocument.objects.filter(context_id=context_id).delete()
            SearchLanguage.objects.filter(context_id=context_id).delete()
        for model, is_frame in ((Frame, True), (Event, False)):
            last = 0
            while True:
                pks = list(
                    model.objects.filter(context_id=context_id, pk__gt=last)
                    .order_by("pk")
                    .values_list("pk", flat=True)[:batch_size]
                )
                if not pks:
                    break
                written += index_targets(pks, []) if is_frame else index_targets([], pks)
                last = pks[-1]
                if progress is not None:
                    progress(len(pks))
    # Every document was rewritten: fresh statistics, or the planner may pick a plan for a
    # table it believes tiny (filtering a whole context instead of using the GIN index).
    with connection.cursor() as cursor:
        cursor.execute(_sql("analyze_documents"))
    return written


def count_facts(context_ids: list[int] | None = None) -> int:
    """Frames plus events (of these contexts): how many documents `rebuild` writes."""
    frames, events = Frame.objects.all(), Event.objects.all()
    if context_ids is not None:
        frames, events = (
            frames.filter(context_id__in=context_ids),
            events.filter(context_id__in=context_ids),
        )
    return frames.count() + events.count()


_stale_done: set[str] = set()  # models no document is left to re-embed for (this process)


def embedding_progress() -> EmbeddingProgress:
    """How far the documents are embedded by the model in use: ``{model, embedded,
    documents}`` (transaction events are never embedded). Counts every document."""
    model = semantic.model_name()
    with connection.cursor() as cursor:
        cursor.execute(_sql("embedding_progress"), [model])
        counted = named_row(cursor)
    assert counted is not None  # an aggregate always answers one row
    return {"model": model, "embedded": counted["embedded"], "documents": counted["documents"]}


def embed_missing(limit: int = 200) -> int:
    """Embed up to `limit` documents that have lexemes but no embedding yet (written before
    embeddings existed); returns how many. Row-locks them (SKIP LOCKED) so a worker
    re-indexing one meanwhile waits and then writes its own, fresher, embedding."""
    if not semantic.enabled():
        return 0
    model = semantic.model_name()
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(_sql("missing_embeddings"), [limit])
        rows = cursor.fetchall()
        if not rows and model not in _stale_done:
            cursor.execute(_sql("stale_embeddings"), [model, limit])
            rows = cursor.fetchall()
            if not rows:
                _stale_done.add(model)
        if not rows:
            return 0
        frames = {
            pk: frame_text(frame_id, body)
            for pk, frame_id, body in Frame.objects.filter(
                pk__in=[f for _, f, _ in rows if f is not None]
            ).values_list("pk", "frame_id", "body")
        }
        events = {
            pk: _embedded_text(content, payload)
            for pk, content, payload in Event.objects.filter(
                pk__in=[e for _, _, e in rows if e is not None]
            )
            .annotate(opening=Left("content", semantic.EMBED_CHARS))
            .values_list("pk", "opening", "payload")
        }
        texts = [frames.get(f, "") if f is not None else events.get(e, "") for _, f, e in rows]
        blobs = semantic.embeddings(texts)
        cursor.execute(_sql("set_embeddings"), [model, [pk for pk, _, _ in rows], blobs])
    return len(rows)
