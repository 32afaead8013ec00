"""Erasure (R64): erased content leaves every place it is stored, the skeleton stays.

    erase(context_id, refs=[...], spans=[...], patterns=[...], reason=..., erased_by=...)
        -> ErasureResult

What is erased: whole events (`@e<seq>`: text and payload), whole frames (a frame id: the
body of every revision), spans of an event's text (`{"ref", "start", "end"}`, characters,
end excluded) and patterns (a text masked wherever it occurs in the context; a card number
however it is spaced, `memory.erasure.mask.Matcher`). The text of each whole item, and each
line of it of at least `MIN_QUOTE` characters, and each span, is a quote looked for
everywhere else too. Every place is masked in the same database transaction:

- events' text and payload (recall results quote frames and events), the transaction
  events and transaction records (text, operations, receipt, errors, reason), frames'
  bodies and retirement reasons, every revision, the status log's reasons, retirement
  requests' reasons, compiled evaluations (their structured input and prompt text);
- the search documents of every item masked are rebuilt from the masked facts now
  (`memory.search.documents.index_rows`: words and embedding);
- every context of the lineage (the fork tree the context is in, both ways): an item is
  erased there when it is the same item (an event with the same text, a frame whose first
  revision has the same body), quotes and patterns everywhere.

Masking keeps every length and token estimate (`memory.erasure.mask`), so versions,
ticks, pressure, statuses and relations do not move and replay (`verify_context`) proves the
rest of the history from the masked one. A tombstone (`Erasure`) per item and context
says when, by whom and why; the patterns' text is never kept.

Takes the row lock of every context of the lineage (in id order) inside one database
transaction; frozen contexts are erased too (erasure is not a memory write).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import secrets
from dataclasses import dataclass, field
from typing import Any, cast

from django.db import connection, transaction
from django.db.models import F, Func, Q, TextField, Value
from django.db.models.functions import Cast
from django.utils import timezone

from memory.erasure.mask import (
    CARD_MIN_DIGITS,
    Matcher,
    mask_json,
    mask_matches,
    mask_text,
    mask_whole,
    quotes_of,
)
from memory.errors import InvalidRequest, MorphzError
from memory.kinds import TRANSACTION
from memory.locking import lock_context_model
from memory.models import (
    Context,
    Erasure,
    Evaluation,
    Event,
    Frame,
    FrameChange,
    FrameRevision,
    RetirementRequest,
    TransactionRecord,
)
from memory.search.documents import index_rows
from memory.shapes import Observation
from memory.timeline.compile import render_frame, render_observation
from memory.tx import lang as txlang
from memory.vocabulary import event_ref, is_frame_id, seq_of

MAX_ITEMS = 100
MAX_REASON = 2000
MIN_PATTERN = 4
MAX_PATTERN = 1000


class NotErasable(MorphzError):
    """The item cannot be erased as asked (a transaction event: erase its frames or a
    pattern instead)."""

    code = "not_erasable"


class UnknownRef(MorphzError):
    code = "unknown_ref"


@dataclass(frozen=True)
class Span:
    ref: str
    start: int
    end: int


@dataclass
class ErasureResult:
    """What one request erased: the tombstones of the context asked on, and per context of
    the lineage the places masked."""

    request: str
    tombstones: list[Erasure]
    contexts: dict[str, int] = field(default_factory=dict)  # slug -> places masked

    def as_dict(self) -> dict[str, Any]:
        return {
            "request": self.request,
            "erasures": [tombstone_json(t) for t in self.tombstones],
            "contexts": self.contexts,
        }


def tombstone_json(t: Erasure) -> dict[str, Any]:
    """A tombstone as the API shows it (never the erased text)."""
    out: dict[str, Any] = {
        "id": t.pk,
        "request": t.request,
        "target": t.target,
        "ref": t.ref or None,
        "label": t.label or None,
        "matches": t.matches,
        "reason": t.reason,
        "erased_by": t.erased_by,
        "erased_at": t.erased_at.isoformat(),
        "origin": t.origin or None,
    }
    if t.target == "span":
        out["span"] = [t.span_start, t.span_end]
    return out


# -- checking the request ------------------------------------------------------------------


def _check(
    refs: list[Any], spans: list[Any], patterns: list[Any], reason: Any
) -> tuple[list[str], list[Span], list[str], str]:
    if not isinstance(reason, str) or not reason.strip():
        raise InvalidRequest("reason: say why this is erased", details=[{"field": "reason"}])
    if len(reason) > MAX_REASON:
        raise InvalidRequest(
            f"reason: at most {MAX_REASON} characters", details=[{"field": "reason"}]
        )
    if not refs and not spans and not patterns:
        raise InvalidRequest(
            "name something to erase: refs, spans or patterns", details=[{"field": "refs"}]
        )
    if len(refs) + len(spans) + len(patterns) > MAX_ITEMS:
        raise InvalidRequest(
            f"at most {MAX_ITEMS} items in one erasure", details=[{"field": "refs"}]
        )
    for i, ref in enumerate(refs):
        if not isinstance(ref, str) or (seq_of(ref) is None and not is_frame_id(ref)):
            raise InvalidRequest(
                f"refs[{i}]: an event ref like @e12 or a frame id",
                code="invalid_ref",
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
                code="invalid_ref",
                details=[{"field": f"{where}.ref"}],
            )
        if type(start) is not int or type(end) is not int or not 0 <= start < end:
            raise InvalidRequest(
                f"{where}: start and end are characters, 0 <= start < end",
                details=[{"field": where}],
            )
        checked_spans.append(Span(ref, start, end))
    for i, pattern in enumerate(patterns):
        if not isinstance(pattern, str) or not MIN_PATTERN <= len(pattern) <= MAX_PATTERN:
            raise InvalidRequest(
                f"patterns[{i}]: a text of {MIN_PATTERN} to {MAX_PATTERN} characters",
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


# -- what the origin names -----------------------------------------------------------------


@dataclass
class _Items:
    """The items named on the origin context, by what identifies them in any context."""

    events: dict[int, str]  # seq -> md5 of the content
    frames: dict[str, str]  # frame id -> md5 of its first revision's body
    spans: list[tuple[Span, str]]  # with the md5 of the event's content
    quotes: list[str]
    patterns: list[str]


def _md5(text: str) -> str:
    return hashlib.md5(text.encode("utf-8", "surrogatepass"), usedforsecurity=False).hexdigest()


def _first_body(frame_pk: int) -> str:
    first = FrameRevision.objects.filter(frame_id=frame_pk).order_by("revision").first()
    return _md5(_text_of(first.body if first else None))


def _text_of(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def _items(context_id: int, refs: list[str], spans: list[Span], patterns: list[str]) -> _Items:
    items = _Items({}, {}, [], [], patterns)
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
            items.events[seq] = _md5(event.content)
            items.quotes += quotes_of(event.content) + quotes_of(event.payload)
            continue
        frame = Frame.objects.filter(context_id=context_id, frame_id=ref).first()
        if frame is None:
            raise UnknownRef(f"refs[{i}]: no frame {ref}", details=[{"field": f"refs[{i}]"}])
        items.frames[ref] = _first_body(frame.pk)
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
                code="invalid_offset",
                details=[{"field": f"spans[{i}].end"}],
            )
        items.spans.append((span, _md5(event.content)))
        text = event.content[span.start : span.end]
        if len(text.strip()) >= MIN_PATTERN:
            items.quotes.append(text)
    return items


# -- masking one context -------------------------------------------------------------------


def _prefilter(
    queryset: Any, matcher: Matcher, fields: tuple[str, ...], json_fields: tuple[str, ...]
) -> tuple[Any, Q]:
    """The queryset annotated for a pre-filter in SQL, and the condition "a field (a JSON
    field as text) holds a literal of `matcher`" (card numbers compared as digits alone);
    Python masks what the rows really hold."""
    notes: dict[str, Any] = {}
    q = Q(pk__in=[])
    for name in (*fields, *json_fields):
        text: Any = Cast(F(name), TextField()) if name in json_fields else F(name)
        notes[f"erasure_t_{name}"] = text
        notes[f"erasure_d_{name}"] = Func(
            text,
            Value("[ -]"),
            Value(""),
            Value("g"),
            function="regexp_replace",
            output_field=TextField(),
        )
    for literal in matcher.literals:
        digits = literal.replace(" ", "").replace("-", "")
        card = digits.isdigit() and digits.isascii() and len(digits) >= CARD_MIN_DIGITS
        escaped = json.dumps(literal, ensure_ascii=False)[1:-1]
        for name in (*fields, *json_fields):
            if card:
                q |= Q(**{f"erasure_d_{name}__contains": digits})
            else:
                needle = escaped if name in json_fields else literal
                q |= Q(**{f"erasure_t_{name}__contains": needle})
    return (queryset.annotate(**notes) if notes else queryset), q


def _candidates(
    queryset: Any, matcher: Matcher, fields: tuple[str, ...], json_fields: tuple[str, ...]
) -> Any:
    if not matcher:
        return queryset.none()
    annotated, q = _prefilter(queryset, matcher, fields, json_fields)
    return annotated.filter(q)


class _Masker:
    """Masks one context: whole events and frames, spans, then quotes and patterns."""

    def __init__(self, context: Context, items: _Items, matcher: Matcher) -> None:
        self.context = context
        self.items = items
        self.matcher = matcher
        self.count = 0
        self.event_pks: set[int] = set()
        self.frame_pks: set[int] = set()
        self.whole_events: dict[int, int] = {}  # seq -> places
        self.whole_frames: dict[str, int] = {}
        self.span_counts: list[int] = []
        self.pattern_counts: dict[str, int] = {}
        self.erased_refs: set[str] = set()
        self.erased_frames: set[str] = set()

    # whole items and spans first: they decide what the quotes are measured against
    def whole(self) -> None:
        c = self.context.pk
        for seq, digest in self.items.events.items():
            event = Event.objects.filter(context_id=c, seq=seq).first()
            if event is None or _md5(event.content) != digest:
                continue
            event.content = mask_text(event.content)
            event.payload = mask_whole(event.payload)
            Event.objects.filter(pk=event.pk).update(content=event.content, payload=event.payload)
            self.event_pks.add(event.pk)
            self.whole_events[seq] = 1
            self.erased_refs.add(event_ref(seq))
            self.count += 1
        for frame_id, digest in self.items.frames.items():
            frame = Frame.objects.filter(context_id=c, frame_id=frame_id).first()
            if frame is None or _first_body(frame.pk) != digest:
                continue
            Frame.objects.filter(pk=frame.pk).update(body=mask_whole(frame.body))
            revisions = 0
            for revision in FrameRevision.objects.filter(frame_id=frame.pk):
                FrameRevision.objects.filter(pk=revision.pk).update(body=mask_whole(revision.body))
                revisions += 1
            self.frame_pks.add(frame.pk)
            self.whole_frames[frame_id] = 1 + revisions
            self.erased_frames.add(frame_id)
            self.count += 1 + revisions
        for span, digest in self.items.spans:
            event = Event.objects.filter(context_id=c, seq=seq_of(span.ref) or 0).first()
            if event is None or _md5(event.content) != digest:
                self.span_counts.append(0)
                continue
            text = event.content
            masked = text[: span.start] + mask_text(text[span.start : span.end]) + text[span.end :]
            payload = event.payload
            if isinstance(payload, dict) and payload.get("name") == text:
                # An action's text is its name (replay registers it from the payload).
                payload = {**payload, "name": masked}
            Event.objects.filter(pk=event.pk).update(content=masked, payload=payload)
            self.event_pks.add(event.pk)
            self.span_counts.append(1)
            self.count += 1

    def events(self) -> None:
        rows = Event.objects.filter(context_id=self.context.pk).exclude(kind=TRANSACTION)
        for event in _candidates(rows, self.matcher, ("content",), ("payload",)):
            content, n = mask_matches(event.content, self.matcher)
            payload, m = mask_json(event.payload, self.matcher)
            payload = self._structural(payload)
            if n or m or payload != event.payload:
                Event.objects.filter(pk=event.pk).update(content=content, payload=payload)
                self.event_pks.add(event.pk)
                self.count += n + m
        # Recall results quote frames and events in structure (short values too).
        if self.erased_frames or self.erased_refs:
            for event in Event.objects.filter(
                context_id=self.context.pk, kind="recall_result", payload__isnull=False
            ):
                payload = self._structural(event.payload)
                if payload != event.payload:
                    Event.objects.filter(pk=event.pk).update(payload=payload)
                    self.event_pks.add(event.pk)
                    self.count += 1

    def _structural(self, value: Any) -> Any:
        """A JSON value in which the bodies of erased frames and the texts of erased events
        are masked wherever a map names them (`id`/`frame_id`/`frame` with `body`;
        `ref` with `content`/`preview`/`text`)."""
        if isinstance(value, list):
            return [self._structural(item) for item in value]
        if not isinstance(value, dict):
            return value
        out = {key: self._structural(item) for key, item in value.items()}
        names = {out.get(k) for k in ("id", "frame_id", "frame") if isinstance(out.get(k), str)}
        if "body" in out and names & self.erased_frames:
            out["body"] = mask_whole(out["body"])
        if isinstance(out.get("ref"), str) and out["ref"] in self.erased_refs:
            for key in ("content", "preview", "text"):
                if key in out:
                    out[key] = mask_whole(out[key])
        return out

    def transactions(self) -> None:
        c = self.context.pk
        records, scope = _prefilter(
            TransactionRecord.objects.filter(context_id=c),
            self.matcher,
            ("text", "reason"),
            ("receipt", "errors"),
        )
        if self.erased_frames:
            scope |= Q(frame_ids__overlap=sorted(self.erased_frames))
        for record in records.filter(scope):
            text = self._tx_text(record.text)
            reason, n1 = mask_matches(record.reason, self.matcher)
            receipt, n2 = mask_json(record.receipt, self.matcher)
            errors, n3 = mask_json(record.errors, self.matcher)
            receipt, errors = self._structural(receipt), self._structural(errors)
            ops = record.ops
            if text != record.text:
                try:
                    ops = txlang.parse_text(text)["ops"]
                except txlang.TxError:
                    ops = mask_json(record.ops, self.matcher)[0]
            changed = (text, reason, receipt, errors, ops) != (
                record.text,
                record.reason,
                record.receipt,
                record.errors,
                record.ops,
            )
            if not changed:
                continue
            TransactionRecord.objects.filter(pk=record.pk).update(
                text=text, reason=reason, receipt=receipt, errors=errors, ops=ops
            )
            self.count += 1 + n1 + n2 + n3
            if record.event_id is not None:
                Event.objects.filter(pk=record.event_id).update(content=text, size_chars=len(text))
                self.event_pks.add(record.event_id)

    def _tx_text(self, text: str) -> str:
        """The transaction's text with erased frames' bodies and every occurrence masked
        (through the language, so the text stays canonical and replays to the masked
        state); a text that does not parse (a rejected one) is masked as text."""
        try:
            tx = txlang.parse_text(text)
        except txlang.TxError:
            masked, _ = mask_matches(text, self.matcher)
            return masked
        out = dict(tx)
        if isinstance(out.get("reason"), str):
            out["reason"], _ = mask_matches(out["reason"], self.matcher)
        ops = []
        for op in out["ops"]:
            op = dict(op)
            if "body" in op:
                if op.get("id") in self.erased_frames:
                    op["body"] = mask_whole(op["body"])
                else:
                    op["body"], _ = mask_json(op["body"], self.matcher)
            ops.append(op)
        out["ops"] = ops
        if out == tx:
            return text
        return txlang.to_text(out)

    def frames(self) -> None:
        c = self.context.pk
        if not self.matcher:
            return
        for frame in _candidates(
            Frame.objects.filter(context_id=c), self.matcher, ("retire_reason",), ("body",)
        ):
            body, n = mask_json(frame.body, self.matcher)
            reason, m = mask_matches(frame.retire_reason or "", self.matcher)
            if n or m:
                Frame.objects.filter(pk=frame.pk).update(
                    body=body, retire_reason=reason if frame.retire_reason is not None else None
                )
                self.frame_pks.add(frame.pk)
                self.count += n + m
        for revision in _candidates(
            FrameRevision.objects.filter(frame__context_id=c), self.matcher, (), ("body",)
        ):
            body, n = mask_json(revision.body, self.matcher)
            if n:
                FrameRevision.objects.filter(pk=revision.pk).update(body=body)
                self.frame_pks.add(revision.frame_id)
                self.count += n
        for change in _candidates(
            FrameChange.objects.filter(context_id=c), self.matcher, ("retire_reason",), ()
        ):
            reason, n = mask_matches(change.retire_reason or "", self.matcher)
            if n:
                FrameChange.objects.filter(pk=change.pk).update(retire_reason=reason)
                self.count += n
        for request in _candidates(
            RetirementRequest.objects.filter(frame__context_id=c), self.matcher, ("reason",), ()
        ):
            reason, n = mask_matches(request.reason, self.matcher)
            if n:
                RetirementRequest.objects.filter(pk=request.pk).update(reason=reason)
                self.count += n

    def evaluations(self) -> None:
        c = self.context.pk
        rows, scope = _prefilter(
            Evaluation.objects.filter(context_id=c), self.matcher, (), ("result",)
        )
        if self.erased_refs:  # a compiled input after the event may have shown it
            first = min(seq_of(ref) or 0 for ref in self.erased_refs)
            scope |= Q(last_seq__gte=first) | Q(last_seq__isnull=True)
        if self.erased_frames:  # and any after the frame was derived
            born = Frame.objects.filter(context_id=c, frame_id__in=self.erased_frames)
            first_version = min(born.values_list("created_version", flat=True), default=0)
            scope |= Q(view_version__gte=first_version)
        for evaluation in rows.filter(scope):
            result = self._evaluation(evaluation.result)
            if result != evaluation.result:
                Evaluation.objects.filter(pk=evaluation.pk).update(result=result)
                self.count += 1

    def _evaluation(self, result: Any) -> Any:
        if not isinstance(result, dict):
            return mask_json(result, self.matcher)[0]
        out = dict(result)
        compiled = out.get("context")
        text = out.get("text")
        if isinstance(compiled, dict):
            compiled = dict(compiled)
            observations = []
            for item in compiled.get("observations") or []:
                if isinstance(item, dict) and item.get("ref") in self.erased_refs:
                    masked = {**item, "content": mask_text(item.get("content") or "")}
                    if isinstance(text, str):
                        text = text.replace(
                            render_observation(cast(Observation, item)),
                            render_observation(cast(Observation, masked)),
                        )
                    item = masked
                observations.append(item)
            if "observations" in compiled:
                compiled["observations"] = observations
            frames = []
            for item in compiled.get("frames") or []:
                if isinstance(item, dict) and item.get("id") in self.erased_frames:
                    masked = {**item, "body": mask_whole(item.get("body"))}
                    if isinstance(text, str):
                        with contextlib.suppress(KeyError, TypeError):
                            text = text.replace(render_frame(item), render_frame(masked))
                    item = masked
                frames.append(item)
            if "frames" in compiled:
                compiled["frames"] = frames
            compiled = self._structural(compiled)
            out["context"] = compiled
        if isinstance(text, str):
            out["text"] = text
        return mask_json(out, self.matcher)[0]

    def reindex(self) -> None:
        """Search documents of everything masked rebuilt from the masked facts now (their
        words and embeddings held the erased text)."""
        if self.frame_pks or self.event_pks:
            index_rows(sorted(self.frame_pks), sorted(self.event_pks))


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
    Lock: every lineage context's row, in id order, for the database transaction."""
    refs_, spans_, patterns_, reason_ = _check(refs or [], spans or [], patterns or [], reason)
    origin = Context.objects.get(pk=context_id)
    members = lineage(context_id)
    contexts = {pk: lock_context_model(pk, allow_frozen=True) for pk in members}
    items = _items(context_id, refs_, spans_, patterns_)
    matcher = Matcher([*items.quotes, *items.patterns])
    request = secrets.token_hex(8)
    now = timezone.now()
    with connection.cursor() as cur:  # the status log records memory, not masking
        cur.execute("SET LOCAL morphz.copying = 'on'")
    result = ErasureResult(request=request, tombstones=[])
    for pk in members:
        context = contexts[pk]
        masker = _Masker(context, items, matcher)
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
        cur.execute("SET LOCAL morphz.copying = 'off'")
    return result


def _tombstones(
    context: Context,
    masker: _Masker,
    items: _Items,
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
