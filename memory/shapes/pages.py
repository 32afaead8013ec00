"""The lists the API answers (a cursor-paged list: the items under their plural name and
the cursor) and a frame's detail (the frame with a page of its past)."""

from __future__ import annotations

from typing import Annotated, TypedDict

from memory.limits import INLINE_CHARS
from memory.models import Frame
from memory.read.paging import NEXT_CURSOR_HELP
from memory.shapes.context import ContextJson
from memory.shapes.events import AppendedEvent, EventJson
from memory.shapes.fields import OPAQUE, Doc
from memory.shapes.frames import FrameJson, frame_json
from memory.shapes.history import FrameHistoryPage, RevisionJson, TransactionJson, WriteEntry
from memory.shapes.nodes import RelationJson
from memory.shapes.versions import EvaluationSummary


class Page(TypedDict):
    next_cursor: Annotated[str | None, Doc(NEXT_CURSOR_HELP)]


class ContextList(TypedDict):
    contexts: list[ContextJson]


class EventList(Page):
    events: list[EventJson]


class BulkEventList(TypedDict):
    events: Annotated[list[AppendedEvent], Doc("one per item, in the order sent")]


class FrameList(Page):
    frames: list[FrameJson]


class RelationList(Page):
    relations: list[RelationJson]


class TransactionList(Page):
    transactions: list[TransactionJson]


class EvaluationList(Page):
    evaluations: list[EvaluationSummary]


class HistoryPage(TypedDict):
    next_before: Annotated[
        int | None, Doc("pass as `history_before` for older revisions; null at the first")
    ]
    limit: int


class FrameDetail(FrameJson):
    body_text: Annotated[
        str,
        Doc("the body as canonical S-expression fields, one per line (what `revise` takes)"),
    ]
    revisions: list[RevisionJson]
    write_history: Annotated[
        list[WriteEntry],
        OPAQUE,
        Doc(
            f"the transactions that wrote the frame (R32): text (cut at {INLINE_CHARS:,} "
            "characters, `text_truncated`), base and committed version"
        ),
    ]
    history: HistoryPage


def frame_detail_json(
    frame: Frame, tick: int, body_text: str, page: FrameHistoryPage, limit: int
) -> FrameDetail:
    """A frame at `tick` with its body as text and a `page` of at most `limit` revisions and
    their write history."""
    return {
        **frame_json(frame, tick),
        "body_text": body_text,
        "revisions": page["revisions"],
        "write_history": page["write_history"],
        "history": {"next_before": page["next_before"], "limit": limit},
    }


class FrameRead(FrameJson):
    """A frame as a model's `frame` read shows it: with its whole write history."""

    write_history: list[WriteEntry]


class ApiIndex(TypedDict):
    version: str
    schema: str
    docs: str
    contexts: list[str]
