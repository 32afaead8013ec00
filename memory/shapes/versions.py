"""The shapes of the past read as a whole: what changed between two versions (R52), a fork's
answer (R53) and an evaluation looked back at (R55)."""

from __future__ import annotations

from typing import Annotated, Any, TypedDict

from memory.shapes.evaluation import EvaluationHead
from memory.shapes.fields import OPAQUE, Doc, Timestamp

# `{derived: [...], revised: [...], ...}`: each change as the diff's statement reads it.
Changes = dict[str, list[dict[str, Any]]]


class DiffTransaction(TypedDict):
    version: int
    id: int
    ref: str | None
    reason: str
    author: str
    author_kind: str
    thread: str
    base_version: int | None
    text: str


class DiffJson(TypedDict):
    from_version: int
    to_version: int
    from_tick: int
    to_tick: int
    frames: Annotated[
        Changes,
        OPAQUE,
        Doc(
            "`{derived, revised (before/after bodies), retiring, retired, restored, "
            "protected, unprotected}`"
        ),
    ]
    relations: Annotated[Changes, OPAQUE, Doc("`{added, removed}`")]
    events: Annotated[Changes, OPAQUE, Doc("`{appended, retired, restored}`")]
    transactions: Annotated[
        list[DiffTransaction], OPAQUE, Doc("committed in the range, with their reasons")
    ]


class ForkSource(TypedDict):
    slug: str
    version: int
    tick: int


class ForkJson(TypedDict):
    slug: Annotated[str, Doc("the new context")]
    token: Annotated[str, Doc("a new API token for the new context (shown once)")]
    forked_from: ForkSource
    version: int
    tick: int


class EvaluationSummary(EvaluationHead):
    last_seq: Annotated[
        int | None, Doc("the last event seq when it ran (its place in the history)")
    ]
    tokens: int | None
    created_at: Timestamp


class SeenFrame(TypedDict):
    id: Any
    revision: Any
    status: Any


class EvaluationDetail(EvaluationSummary):
    input: Annotated[
        dict[str, Any],
        OPAQUE,
        Doc(
            "what the model was given: `{context, text}` as compiled, with "
            "`context_omitted` and `text_omitted` (and `answer_bytes`, `limit_bytes`, "
            "`text_chars`) when they were over the response limit and left out, as on POST"
        ),
    ]
    frames_seen: Annotated[list[SeenFrame], OPAQUE, Doc("`{id, revision, status}` in input order")]
    observations_seen: list[str]
