"""The lines of a context's export file (R56; the format is in docs/history.md): its header,
the history's steps (what replay drives the engine with, R51), rejected transactions, and the
comparable state replay and import check against. Read back, a line is only checked where
it is used: a read header or step is a plain dict until replay applies it."""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict


class ExportHeader(TypedDict):
    type: Literal["header"]
    format: str
    format_version: int
    # What the export writes; a file of an older format may lack them (read with .get).
    exported_at: NotRequired[str]
    slug: NotRequired[str]
    name: NotRequired[str]
    settings: NotRequired[dict[str, Any]]
    frozen: NotRequired[bool]
    version: NotRequired[int]
    tick: NotRequired[int]
    last_seq: NotRequired[int]
    history_verified: NotRequired[bool]


class EventStep(TypedDict):
    type: Literal["event"]
    seq: int
    kind: str
    thread: str
    content: str
    payload: Any
    delivers: list[str]
    idempotency_key: str | None
    created_at: str


class EvaluationStep(TypedDict):
    type: Literal["evaluation"]
    n: int  # its ordinal: transactions name their evaluation by it
    after_seq: int
    thread: str
    continuation: bool
    idempotency_key: str | None
    claimed: list[str]
    tick: int
    view_version: int
    created_at: NotRequired[str]  # older files lack it (their evaluations get the import's)


class TransactionStep(TypedDict):
    type: Literal["transaction"]
    seq: int
    version: int | None
    base_version: int | None
    text: str
    author: str
    author_kind: str
    thread: str
    reason: str
    evaluation: int | None  # the ordinal of the evaluation it came from
    created_at: str
    # A commit made under an idempotency key (R49), and its request's hash; older files
    # lack them.
    idempotency_key: NotRequired[str]
    request_hash: NotRequired[str]


class SettingsStep(TypedDict):
    type: Literal["settings"]
    after_seq: int
    evaluations: int  # how many evaluations the context had when they changed
    version: int
    settings: dict[str, Any]


Step = EventStep | EvaluationStep | TransactionStep | SettingsStep


class RejectedLine(TypedDict):
    type: Literal["rejected"]
    author: str
    author_kind: str
    thread: str
    base_version: int | None
    reason: str
    text: str
    ops: Any
    errors: Any
    frame_ids: list[str]
    evaluation: int | None
    created_at: str
    after_version: NotRequired[int]  # the commit it was recorded after (0: before any)


class SnapshotCounters(TypedDict):
    version: int
    tick: int
    last_seq: int
    used_tokens: int
    in_maintenance: bool


class SnapshotFrame(TypedDict):
    """A frame's stored columns but ids, in the column registry's order (FRAME_LOADED)."""

    revision: int
    body: Any
    sources: Any
    status: str
    protected: bool
    retire_requested_tick: int | None
    retire_due_tick: int | None
    retire_reason: str | None
    retire_generation: int
    tokens: int
    created_version: int
    changed_version: int
    revisions: list[list[Any]]  # [revision, body, sources, version]
    retirements: list[list[Any]]  # a retirement request's columns


class SnapshotSettings(TypedDict):
    now: dict[str, int]
    log: list[list[Any]]  # [kind, version, last_seq, evaluations, settings]


class Snapshot(TypedDict):
    """A context's comparable state (JSON: no ids, no clock times); lists are rows."""

    counters: SnapshotCounters
    frames: dict[str, SnapshotFrame]
    relations: list[list[Any]]
    events: dict[str, list[Any]]
    evaluations: list[list[Any]]
    transactions: list[list[Any]]
    maintenance: list[list[Any]]
    settings: SnapshotSettings
