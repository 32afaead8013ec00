"""Masking one context for an erasure (R64; the verb is `memory.erasure.erase`): whole
events and frames, spans, then every quote and pattern in events, transactions, frames,
revisions, retirement reasons and evaluations; the search documents of what changed are
rebuilt. Runs inside the erasure's database transaction, under its row locks."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, cast

from django.db.models import F, Func, Q, TextField, Value
from django.db.models.functions import Cast

from memory.erasure.mask import (
    CARD_MIN_DIGITS,
    Matcher,
    mask_frame_lines,
    mask_json,
    mask_matches,
    mask_text,
    mask_whole,
    payload_matches,
    whole_payload,
)
from memory.kinds import TRANSACTION
from memory.models import (
    Context,
    Evaluation,
    Event,
    Frame,
    FrameChange,
    FrameRevision,
    RetirementRequest,
    TransactionRecord,
)
from memory.search.documents import index_rows, replies_to
from memory.shapes import Observation
from memory.timeline.compile import render_observation
from memory.tx import lang as txlang
from memory.vocabulary import event_ref, seq_of


@dataclass(frozen=True)
class Span:
    """Characters `start`..`end` (end excluded) of the event `ref`."""

    ref: str
    start: int
    end: int


@dataclass
class Items:
    """The items named on the origin context, by what identifies them in any context."""

    events: dict[int, str]  # seq -> md5 of the content
    frames: dict[str, str]  # frame id -> md5 of its first revision's body
    spans: list[tuple[Span, str]]  # with the md5 of the event's content
    quotes: list[str]
    patterns: list[str]


def md5_of(text: str) -> str:
    """The MD5 of a text (how an item is recognised in another context of the lineage)."""
    return hashlib.md5(text.encode("utf-8", "surrogatepass"), usedforsecurity=False).hexdigest()


def first_body(frame_pk: int) -> str:
    """The MD5 of a frame's first revision's body (the same frame in a fork has it)."""
    first = FrameRevision.objects.filter(frame_id=frame_pk).order_by("revision").first()
    return md5_of(text_of(first.body if first else None))


def text_of(value: Any) -> str:
    """A JSON value as canonical text (keys sorted)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


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


class Masker:
    """Masks one context: whole events and frames, spans, then quotes and patterns."""

    def __init__(self, context: Context, items: Items, matcher: Matcher) -> None:
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
        """Whole events, whole frames (every revision) and spans."""
        c = self.context.pk
        for seq, digest in self.items.events.items():
            event = Event.objects.filter(context_id=c, seq=seq).first()
            if event is None or md5_of(event.content) != digest:
                continue
            event.content = mask_text(event.content)
            event.payload = whole_payload(event.kind, event.payload)
            Event.objects.filter(pk=event.pk).update(content=event.content, payload=event.payload)
            self.event_pks.add(event.pk)
            self.whole_events[seq] = 1
            self.erased_refs.add(event_ref(seq))
            self.count += 1
        for frame_id, digest in self.items.frames.items():
            frame = Frame.objects.filter(context_id=c, frame_id=frame_id).first()
            if frame is None or first_body(frame.pk) != digest:
                continue
            Frame.objects.filter(pk=frame.pk).update(body=mask_whole(frame.body, keys=True))
            revisions = 0
            for revision in FrameRevision.objects.filter(frame_id=frame.pk):
                FrameRevision.objects.filter(pk=revision.pk).update(
                    body=mask_whole(revision.body, keys=True)
                )
                revisions += 1
            self.frame_pks.add(frame.pk)
            self.whole_frames[frame_id] = 1 + revisions
            self.erased_frames.add(frame_id)
            self.count += 1 + revisions
        for span, digest in self.items.spans:
            event = Event.objects.filter(context_id=c, seq=seq_of(span.ref) or 0).first()
            if event is None or md5_of(event.content) != digest:
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
        """Quotes and patterns in events' text and payload; recall results' nodes."""
        rows = Event.objects.filter(context_id=self.context.pk).exclude(kind=TRANSACTION)
        for event in _candidates(rows, self.matcher, ("content",), ("payload",)):
            content, n = mask_matches(event.content, self.matcher)
            payload, m = payload_matches(event.kind, event.payload, self.matcher)
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
            out["body"] = mask_whole(out["body"], keys=True)
        if isinstance(out.get("ref"), str) and out["ref"] in self.erased_refs:
            for key in ("content", "preview", "text"):
                if key in out:
                    out[key] = mask_whole(out[key])
        return out

    def transactions(self) -> None:
        """Transaction records and events: text, operations, receipt, errors, reason."""
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
                    ops = [self._op(op) for op in record.ops]
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
        out["ops"] = [self._op(op) for op in out["ops"]]
        if out == tx:
            return text
        return txlang.to_text(out)

    def _op(self, op: Any) -> Any:
        """An operation with its body masked: whole for an erased frame, else where it
        quotes (keys and values: a body's keys are its text); the rest where it quotes."""
        if not isinstance(op, dict):
            return mask_json(op, self.matcher)[0]
        out = {key: mask_json(item, self.matcher)[0] for key, item in op.items() if key != "body"}
        if "body" in op:
            if op.get("id") in self.erased_frames:
                out["body"] = mask_whole(op["body"], keys=True)
            else:
                out["body"] = mask_json(op["body"], self.matcher, keys=True)[0]
        return {key: out[key] for key in op}

    def frames(self) -> None:
        """Quotes and patterns in frames, revisions and retirement reasons."""
        c = self.context.pk
        if not self.matcher:
            return
        for frame in _candidates(
            Frame.objects.filter(context_id=c), self.matcher, ("retire_reason",), ("body",)
        ):
            body, n = mask_json(frame.body, self.matcher, keys=True)
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
            body, n = mask_json(revision.body, self.matcher, keys=True)
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
        """Compiled inputs: erased items in their structure and prompt text, quotes."""
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
                    if isinstance(text, str):
                        text = mask_frame_lines(text, str(item["id"]))
                    item = {**item, "body": mask_whole(item.get("body"), keys=True)}
                    if isinstance(item.get("dropped"), dict):  # the names of dropped keys
                        item["dropped"] = mask_whole(item["dropped"])
                elif isinstance(item, dict) and "body" in item:  # keys that quote (values below)
                    item = {**item, "body": mask_json(item["body"], self.matcher, keys=True)[0]}
                frames.append(item)
            if "frames" in compiled:
                compiled["frames"] = frames
            compiled = self._structural(compiled)
            out["context"] = compiled
        if isinstance(text, str):
            out["text"] = text
        return mask_json(out, self.matcher)[0]

    def reindex(self) -> None:
        """Search documents of everything masked, and of the replies that borrowed words from
        a masked event (`replies_to`), rebuilt from the masked facts now (their words and
        embeddings held the erased text)."""
        if self.frame_pks or self.event_pks:
            events = self.event_pks | set(replies_to(sorted(self.event_pks)))
            index_rows(sorted(self.frame_pks), sorted(events))
