"""Shapes of the API's answers (docs/rest.md). The server may add fields; these name the
ones a client can rely on."""

from __future__ import annotations

from typing import Any, Literal, TypedDict

PressureLevel = Literal["ok", "pressure", "maintenance"]
FrameStatus = Literal["active", "retiring", "retired"]
# Observations are active or retired; every other event is plain history.
EventStatus = Literal["active", "retired", "recorded"]
AppendableKind = Literal["user_message", "tool_result", "agent_message", "external_fact"]
Direction = Literal["ancestors", "descendants", "both"]


class Pressure(TypedDict):
    """How full the active context is: tokens used of the capacity, `level`, and `percent`
    (one decimal)."""

    used_tokens: int
    capacity_tokens: int
    level: PressureLevel
    percent: float


class ContextSettings(TypedDict):
    """A context's settings: `grace_ticks` (ticks a retiring frame stays in the input),
    `capacity_tokens` (the input's budget), the pressure, maintenance and exit thresholds (percent
    of capacity) and `observation_budget_tokens` (the most one observation takes in the input)."""

    grace_ticks: int
    capacity_tokens: int
    pressure_percent: int
    maintenance_percent: int
    maintenance_exit_percent: int
    observation_budget_tokens: int


class ForkedFrom(TypedDict):
    """Where a fork came from: the source's slug (None once it is deleted), version and tick."""

    slug: str | None
    version: int
    tick: int


class Context(TypedDict):
    """A context: counters, settings, pressure now, whether it is frozen, its lineage."""

    slug: str
    name: str
    version: int
    tick: int
    last_seq: int
    settings: ContextSettings
    pressure: Pressure
    frozen: bool
    forked_from: ForkedFrom | None


class Event(TypedDict, total=False):
    """An event: `ref` (`@e<seq>`), kind, thread, `size` in characters, estimated `tokens`,
    `status`, the request state and the refs it delivers or is delivered by, and `preview`
    (the first 200 characters of its text)."""

    ref: str
    seq: int
    kind: str
    thread: str
    created_at: str
    size: int
    tokens: int
    status: EventStatus
    pending: bool
    request: str | None
    delivers: list[str]
    delivered_by: str | None
    payload: Any
    preview: str
    created: bool


class NewEvent(TypedDict, total=False):
    """One item of a bulk append (`append_events`)."""

    kind: AppendableKind
    content: str
    payload: Any
    thread: str
    delivers: list[str]
    idempotency_key: str


class AppendedEvent(TypedDict):
    """What a bulk append answers for each item, in order."""

    ref: str
    seq: int
    kind: str
    thread: str
    size: int
    tokens: int
    status: str | None
    request: str | None
    created: bool


class EventPage(TypedDict):
    """A page of events, oldest first; `next_cursor` is None on the last page."""

    events: list[Event]
    next_cursor: str | None


class Cancellation(TypedDict):
    """A cancelled action: `ref` of the cancellation (a `tool_result` delivering the action)
    and `cancels`, the action's ref."""

    ref: str
    cancels: str


class EventChunk(TypedDict, total=False):
    """A slice of an event's text: `offset` and `length` in characters, `size` of the whole
    text, `next_offset` None after the last slice."""

    ref: str
    seq: int
    kind: str
    status: EventStatus
    size: int
    offset: int
    length: int
    content: str
    next_offset: int | None


class Retire(TypedDict):
    """A retiring frame's window, in ticks: when it was asked, when it falls due, how many
    are left."""

    requested_tick: int
    due_tick: int
    ticks_left: int
    reason: str


class Frame(TypedDict, total=False):
    """A frame: id, `revision`, status, `protected`, ordered `body`, `sources` (refs), the
    retirement window while retiring, estimated `tokens`, and the versions that created and
    last changed it."""

    id: str
    revision: int
    status: FrameStatus
    protected: bool
    body: dict[str, Any]
    sources: list[str]
    retire: Retire | None
    tokens: int
    created_version: int
    changed_version: int


class FrameRevision(TypedDict):
    """One revision of a frame: its body (None when `body_omitted`), sources and the version
    and transaction that wrote it."""

    revision: int
    body: dict[str, Any]
    sources: list[str]
    version: int
    transaction: int
    created_at: str


class FrameDetail(Frame, total=False):
    """A frame with a page of its revisions and the transactions that wrote it."""

    body_text: str  # the body as canonical S-expression fields, one per line
    revisions: list[FrameRevision]
    write_history: list[dict[str, Any]]


class FramePage(TypedDict):
    """A page of frames by id; `next_cursor` is None on the last page."""

    frames: list[Frame]
    next_cursor: str | None


class Relation(TypedDict):
    """A named edge `subject -name-> object` (frame ids); `live` until removed."""

    id: int
    subject: str
    name: str
    object: str
    live: bool
    created_version: int
    removed_version: int | None


class RelationPage(TypedDict):
    """A page of relations by id; `next_cursor` is None on the last page."""

    relations: list[Relation]
    next_cursor: str | None


class PendingRelease(TypedDict):
    """Tokens a retiring frame gives back at its `due_tick`."""

    frame: str
    tokens: int
    due_tick: int


class Receipt(TypedDict, total=False):
    """A committed transaction: the new `version` and `tick`, one result per operation, tokens
    released now and pending, frames completed by a successor, pressure after it, and the
    stored transaction's id and event `ref`."""

    version: int
    tick: int
    results: list[dict[str, Any]]
    released_tokens: int
    pending_release: list[PendingRelease]
    completed_by_successor: list[str]
    pressure: Pressure
    transaction: int
    ref: str


class Transaction(TypedDict, total=False):
    """A submitted transaction, committed or rejected: author, versions, text (cut at 16,384
    characters in lists), operations, the receipt or the errors, the frames it touched."""

    id: int
    status: Literal["committed", "rejected"]
    author: str
    author_kind: str
    thread: str
    base_version: int | None
    committed_version: int | None
    reason: str
    text: str
    ops: list[dict[str, Any]] | None
    receipt: Receipt | None
    errors: dict[str, Any] | None
    frames: list[str]
    evaluation: int | None
    ref: str | None
    created_at: str


class TransactionPage(TypedDict):
    """A page of transactions, oldest first; `next_cursor` is None on the last page."""

    transactions: list[Transaction]
    next_cursor: str | None


class Evaluation(TypedDict, total=False):
    """An evaluation: what it claimed and retired, the tick, the version its view shows, and
    the compiled input (`context` structured, `text` for a prompt, `tokens`)."""

    id: int
    tick: int
    advanced_tick: bool
    view_version: int
    thread: str
    continuation: bool
    claimed: list[str]
    expired: list[str]
    context: dict[str, Any] | None  # None when context_omitted
    context_omitted: bool
    text: str | None  # None when text_omitted: read it with prompt_text(), which says why
    text_omitted: bool
    answer_bytes: int
    limit_bytes: int
    text_chars: int
    tokens: Any


class RecallResult(TypedDict, total=False):
    """One page of a recall: `nodes` (frames and event leaves), `edges`, `next_cursor`, and the
    `version` the walk saw."""

    nodes: list[dict[str, Any]]
    edges: list[dict[str, Any]]
    next_cursor: str | None
    version: int
    observation: str | None


class SearchResult(TypedDict, total=False):
    """Search hits best first, `total` matches (exact up to 1,000), `next_cursor` (every
    match) or `next_offset` (the first 1,000) for the next page, and `lag` of the index
    behind the facts."""

    hits: list[dict[str, Any]]
    total: int
    total_exact: bool
    next_offset: int | None
    next_cursor: str | None
    lag: Any


class Fork(TypedDict):
    """A new context forked from this one: its slug, a token for it, where it came from."""

    slug: str
    token: str
    forked_from: ForkedFrom
    version: int
    tick: int


class EvaluationSummary(TypedDict, total=False):
    """A past evaluation in a list: its view version, tick, claimed refs, expired frames, tokens."""

    id: int
    thread: str
    continuation: bool
    tick: int
    advanced_tick: bool
    view_version: int
    claimed: list[str]
    expired: list[str]
    last_seq: int | None
    tokens: int | None
    created_at: str


class EvaluationDetail(EvaluationSummary, total=False):
    input: dict[str, Any]  # {"context": {...}, "text": "..."} as the model was given it
    frames_seen: list[dict[str, Any]]
    observations_seen: list[str]


class EvaluationPage(TypedDict):
    """A page of evaluations, oldest first; `next_cursor` is None on the last page."""

    evaluations: list[EvaluationSummary]
    next_cursor: str | None


class Diff(TypedDict, total=False):
    """What changed between two versions (GET diff/?from=A&to=B)."""

    from_version: int
    to_version: int
    frames: dict[str, list[dict[str, Any]]]
    relations: dict[str, list[dict[str, Any]]]
    events: dict[str, list[dict[str, Any]]]
    transactions: list[dict[str, Any]]
