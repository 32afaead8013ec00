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
    used_tokens: int
    capacity_tokens: int
    level: PressureLevel
    percent: float


class ContextSettings(TypedDict):
    grace_ticks: int
    capacity_tokens: int
    pressure_percent: int
    maintenance_percent: int
    maintenance_exit_percent: int
    observation_budget_tokens: int


class ForkedFrom(TypedDict):
    slug: str | None
    version: int
    tick: int


class Context(TypedDict):
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
    events: list[Event]
    next_cursor: str | None


class EventChunk(TypedDict, total=False):
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
    requested_tick: int
    due_tick: int
    ticks_left: int
    reason: str


class Frame(TypedDict, total=False):
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
    revision: int
    body: dict[str, Any]
    sources: list[str]
    version: int
    transaction: int
    created_at: str


class FrameDetail(Frame, total=False):
    body_text: str  # the body as canonical S-expression fields, one per line
    revisions: list[FrameRevision]
    write_history: list[dict[str, Any]]


class FramePage(TypedDict):
    frames: list[Frame]
    next_cursor: str | None


class Relation(TypedDict):
    id: int
    subject: str
    name: str
    object: str
    live: bool
    created_version: int
    removed_version: int | None


class RelationPage(TypedDict):
    relations: list[Relation]
    next_cursor: str | None


class PendingRelease(TypedDict):
    frame: str
    tokens: int
    due_tick: int


class Receipt(TypedDict, total=False):
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
    transactions: list[Transaction]
    next_cursor: str | None


class Evaluation(TypedDict, total=False):
    id: int
    tick: int
    advanced_tick: bool
    view_version: int
    thread: str
    continuation: bool
    claimed: list[str]
    expired: list[str]
    context: dict[str, Any]
    text: str
    tokens: Any


class RecallResult(TypedDict, total=False):
    nodes: list[dict[str, Any]]
    edges: list[dict[str, Any]]
    next_cursor: str | None
    version: int
    observation: str | None


class SearchResult(TypedDict, total=False):
    hits: list[dict[str, Any]]
    total: int
    total_exact: bool
    next_offset: int | None
    lag: Any


class Fork(TypedDict):
    """A new context forked from this one: its slug, a token for it, where it came from."""

    slug: str
    token: str
    forked_from: ForkedFrom
    version: int
    tick: int


class EvaluationSummary(TypedDict, total=False):
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
