"""Erasure (R64): erased content leaves every place it is stored, the skeleton stays.

How it works: docs/internals.md, section `memory/erasure/erase.py`."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from memory.erasure.lines import tombstone_json
from memory.erasure.mask import (
    Matcher,
    quotes_of,
)
from memory.erasure.masker import Items, Masker, Span, first_body, md5_of
from memory.errors import ErrorCode, InvalidRequest, MorphzError
from memory.kinds import TRANSACTION
from memory.limits import (
    MAX_ERASURE_ITEMS,
    MAX_ERASURE_PATTERN_CHARS,
    MAX_ERASURE_REASON_CHARS,
    MIN_ERASURE_PATTERN_CHARS,
)
from memory.locking import lock_context_model
from memory.models import (
    Context,
    Erasure,
    Event,
    Frame,
)
from memory.shapes.erasures import ErasureJson
from memory.sql import statements
from memory.vocabulary import is_frame_id, seq_of


class NotErasable(MorphzError):
    """The item cannot be erased as asked (a transaction event: erase its frames or a
    pattern instead)."""

    code = ErrorCode.NOT_ERASABLE


class UnknownRef(MorphzError):
    code = ErrorCode.UNKNOWN_REF


@dataclass
class ErasureResult:
    """What one request erased: the tombstones of the context asked on, and per context of
    the lineage the places masked."""

    request: str
    tombstones: list[Erasure]
    contexts: dict[str, int] = field(default_factory=dict)  # slug -> places masked

    def as_dict(self) -> ErasureJson:
        """`{request, erasures: [tombstone], contexts: {slug: places masked}}`."""
        return {
            "request": self.request,
            "erasures": [tombstone_json(t) for t in self.tombstones],
            "contexts": self.contexts,
        }


# -- checking the request ------------------------------------------------------------------


def _check(
    refs: list[Any], spans: list[Any], patterns: list[Any], reason: Any
) -> tuple[list[str], list[Span], list[str], str]:
    if not isinstance(reason, str) or not reason.strip():
        raise InvalidRequest("reason: say why this is erased", details=[{"field": "reason"}])
    if len(reason) > MAX_ERASURE_REASON_CHARS:
        raise InvalidRequest(
            f"reason: at most {MAX_ERASURE_REASON_CHARS} characters", details=[{"field": "reason"}]
        )
    if not refs and not spans and not patterns:
        raise InvalidRequest(
            "name something to erase: refs, spans or patterns", details=[{"field": "refs"}]
        )
    if len(refs) + len(spans) + len(patterns) > MAX_ERASURE_ITEMS:
        raise InvalidRequest(
            f"at most {MAX_ERASURE_ITEMS} items in one erasure", details=[{"field": "refs"}]
        )
    for i, ref in enumerate(refs):
        if not isinstance(ref, str) or (seq_of(ref) is None and not is_frame_id(ref)):
            raise InvalidRequest(
                f"refs[{i}]: an event ref like @e12 or a frame id",
                code=ErrorCode.INVALID_REF,
                details=[{"field": f"refs[{i}]"}],
            )
    checked_spans = []
    for i, span in enumerate(spans):
        where = f"spans[{i}]"
        if not isinstance(span, dict) or set(span) != {"ref", "start", "end"}:
            raise InvalidRequest(
                f"{where}: an object with ref, start and end", details=[{"field": where}]
            )
        ref, start, end = span["ref"], span["start"], span["end"]
        if not isinstance(ref, str) or seq_of(ref) is None:
            raise InvalidRequest(
                f"{where}.ref: an event ref like @e12",
                code=ErrorCode.INVALID_REF,
                details=[{"field": f"{where}.ref"}],
            )
        if type(start) is not int or type(end) is not int or not 0 <= start < end:
            raise InvalidRequest(
                f"{where}: start and end are characters, 0 <= start < end",
                details=[{"field": where}],
            )
        checked_spans.append(Span(ref, start, end))
    for i, pattern in enumerate(patterns):
        if (
            not isinstance(pattern, str)
            or not MIN_ERASURE_PATTERN_CHARS <= len(pattern) <= MAX_ERASURE_PATTERN_CHARS
        ):
            raise InvalidRequest(
                f"patterns[{i}]: a text of {MIN_ERASURE_PATTERN_CHARS} to {MAX_ERASURE_PATTERN_CHARS} characters",
                details=[{"field": f"patterns[{i}]"}],
            )
    return list(dict.fromkeys(refs)), checked_spans, list(dict.fromkeys(patterns)), reason


# -- the lineage ---------------------------------------------------------------------------


def lineage(context_id: int) -> list[int]:
    """Every context of the fork tree `context_id` is in (its root and all descendants of
    the root), by id."""
    parents = dict(Context.objects.values_list("pk", "forked_from_id"))
    root = context_id
    seen = {root}
    while parents.get(root) is not None and parents[root] not in seen:
        root = parents[root]
        seen.add(root)
    children: dict[int, list[int]] = {}
    for pk, parent in parents.items():
        if parent is not None:
            children.setdefault(parent, []).append(pk)
    out, todo = {root}, [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in out:
                out.add(child)
                todo.append(child)
    return sorted(out | {context_id})


def _lock_lineage(context_id: int) -> tuple[list[int], dict[int, Context]]:
    """Lock every context row of the lineage and return its ids and rows.

    Lock order: context rows in ascending id, never a lower id after a higher one (erasure
    is the only taker of several context rows; a fork takes its source's FOR SHARE alone).
    The lineage is read before the locks, so a fork committed in between is missing from
    it. It is read again under them (a fork of a locked context waits for us); if it
    changed, the locks are given back (rolling back to the savepoint) and all taken again
    in id order, rather than taking a newcomer's, perhaps lower, id last."""
    while True:
        members = lineage(context_id)
        savepoint = transaction.savepoint()
        contexts = {pk: lock_context_model(pk, allow_frozen=True) for pk in members}
        if lineage(context_id) == members:
            transaction.savepoint_commit(savepoint)
            return members, contexts
        transaction.savepoint_rollback(savepoint)


# -- what the origin names -----------------------------------------------------------------


def _items(context_id: int, refs: list[str], spans: list[Span], patterns: list[str]) -> Items:
    items = Items({}, {}, [], [], patterns)
    for i, ref in enumerate(refs):
        seq = seq_of(ref)
        if seq is not None:
            event = Event.objects.filter(context_id=context_id, seq=seq).first()
            if event is None:
                raise UnknownRef(f"refs[{i}]: no event {ref}", details=[{"field": f"refs[{i}]"}])
            if event.kind == TRANSACTION:
                raise NotErasable(
                    f"refs[{i}]: {ref} is a transaction; erase the frames it wrote, or a "
                    "pattern of its text",
                    details=[{"field": f"refs[{i}]"}],
                )
            items.events[seq] = md5_of(event.content)
            items.quotes += quotes_of(event.content) + quotes_of(event.payload)
            continue
        frame = Frame.objects.filter(context_id=context_id, frame_id=ref).first()
        if frame is None:
            raise UnknownRef(f"refs[{i}]: no frame {ref}", details=[{"field": f"refs[{i}]"}])
        items.frames[ref] = first_body(frame.pk)
        items.quotes += quotes_of(frame.body)
        for body in frame.revisions.values_list("body", flat=True):
            items.quotes += quotes_of(body)
    for i, span in enumerate(spans):
        event = Event.objects.filter(context_id=context_id, seq=seq_of(span.ref) or 0).first()
        if event is None:
            raise UnknownRef(f"spans[{i}]: no event {span.ref}", details=[{"field": f"spans[{i}]"}])
        if event.kind == TRANSACTION:
            raise NotErasable(
                f"spans[{i}]: {span.ref} is a transaction; erase a pattern of its text",
                details=[{"field": f"spans[{i}]"}],
            )
        if span.end > len(event.content):
            raise InvalidRequest(
                f"spans[{i}]: {span.ref} has {len(event.content)} characters",
                code=ErrorCode.INVALID_OFFSET,
                details=[{"field": f"spans[{i}].end"}],
            )
        items.spans.append((span, md5_of(event.content)))
        text = event.content[span.start : span.end]
        if len(text.strip()) >= MIN_ERASURE_PATTERN_CHARS:
            items.quotes.append(text)
    return items


# -- the verb ------------------------------------------------------------------------------


@transaction.atomic
def erase(
    context_id: int,
    *,
    refs: list[Any] | None = None,
    spans: list[Any] | None = None,
    patterns: list[Any] | None = None,
    reason: Any = None,
    erased_by: str,
) -> ErasureResult:
    """Erase the items from the context and its whole lineage (see the module docstring).

    Raises InvalidRequest (`invalid_request`, `invalid_ref`, `invalid_offset`), UnknownRef
    (`unknown_ref`, an item the context does not hold) or NotErasable (`not_erasable`).
    Lock: every lineage context's row, in id order, for the database transaction
    (`_lock_lineage`); then the search documents it rewrites (`documents.index_rows`)."""
    refs_, spans_, patterns_, reason_ = _check(refs or [], spans or [], patterns or [], reason)
    origin = Context.objects.get(pk=context_id)
    members, contexts = _lock_lineage(context_id)
    items = _items(context_id, refs_, spans_, patterns_)
    matcher = Matcher([*items.quotes, *items.patterns])
    request = secrets.token_hex(8)
    now = timezone.now()
    with connection.cursor() as cur:  # the status log records memory, not masking
        cur.execute(statements("memory.erasure")["copying_on"])
    result = ErasureResult(request=request, tombstones=[])
    for pk in members:
        context = contexts[pk]
        masker = Masker(context, items, matcher)
        masker.whole()
        masker.events()
        masker.transactions()
        masker.frames()
        masker.evaluations()
        masker.reindex()
        tombstones = _tombstones(
            context, masker, items, refs_, patterns_, reason_, erased_by, now, request, origin
        )
        Erasure.objects.bulk_create(tombstones)
        result.contexts[context.slug] = masker.count
        if pk == context_id:
            result.tombstones = tombstones
    with connection.cursor() as cur:
        cur.execute(statements("memory.erasure")["copying_off"])
    return result


def _tombstones(
    context: Context,
    masker: Masker,
    items: Items,
    refs: list[str],
    patterns: list[str],
    reason: str,
    erased_by: str,
    now: Any,
    request: str,
    origin: Context,
) -> list[Erasure]:
    def stone(**kw: Any) -> Erasure:
        return Erasure(
            context=context,
            request=request,
            reason=reason,
            erased_by=erased_by,
            erased_at=now,
            origin="" if origin.pk == context.pk else origin.slug,
            **kw,
        )

    out = []
    for ref in refs:
        seq = seq_of(ref)
        if seq is not None and seq in masker.whole_events:
            out.append(stone(target="event", ref=ref, matches=1))
        elif seq is None and ref in masker.whole_frames:
            out.append(stone(target="frame", ref=ref, matches=masker.whole_frames[ref]))
    for (span, _digest), n in zip(items.spans, masker.span_counts, strict=True):
        if n:
            out.append(
                stone(
                    target="span", ref=span.ref, span_start=span.start, span_end=span.end, matches=n
                )
            )
    for pattern in patterns:
        # The places this request masked in the context (the pattern's own are among them).
        out.append(
            stone(
                target="pattern", label=f"a text of {len(pattern)} characters", matches=masker.count
            )
        )
    return out
