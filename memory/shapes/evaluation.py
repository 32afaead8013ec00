"""The answer of an evaluation (R21, R22): what it claimed and applied, and the compiled
model input, with what was left out when the answer was over the response limit."""

from __future__ import annotations

from typing import Annotated, Any, NotRequired, TypedDict

from memory.shapes.compiled import CompiledContext
from memory.shapes.fields import OPAQUE, Doc


class EvaluationHead(TypedDict):
    """What an evaluation's answer and its later summary share."""

    id: int
    tick: int
    advanced_tick: bool
    view_version: Annotated[int, Doc("the version the compiled input showed")]
    thread: str
    continuation: bool
    claimed: Annotated[list[str], Doc("refs claimed")]
    expired: Annotated[list[str], Doc("frames whose retirement this call applied")]


class EvaluationResult(EvaluationHead):
    """An evaluation as memory returns and stores it: the head, and when compiled the
    input's `context`, `text` and `tokens` (and the protocol's `instructions` when asked);
    the API bounds it into `EvaluationJson` (api.bounds)."""

    context: NotRequired[CompiledContext]
    text: NotRequired[str]
    tokens: NotRequired[int]
    instructions: NotRequired[str]


class EvaluationJson(EvaluationHead):
    context: Annotated[
        Any | None,
        OPAQUE,
        Doc("the active context, structured; null when `context_omitted`"),
    ]
    context_omitted: Annotated[
        bool,
        Doc(
            "true when the whole answer was over the response limit: `context` is null "
            "(`text` renders the same)"
        ),
    ]
    text: Annotated[
        str | None, Doc("the active context rendered for a prompt; null when `text_omitted`")
    ]
    text_omitted: Annotated[
        bool,
        Doc(
            "true when even `text` alone was over the response limit: the evaluation "
            "was written (inputs claimed) but its text is not sent; slim the memory (retire or "
            "digest frames) and evaluate again"
        ),
    ]
    answer_bytes: NotRequired[
        Annotated[int, Doc("when anything is omitted: the size the whole answer had")]
    ]
    limit_bytes: NotRequired[Annotated[int, Doc("when anything is omitted: the response limit")]]
    text_chars: NotRequired[
        Annotated[int, Doc("when `text_omitted`: the length of the text left out")]
    ]
    tokens: Annotated[Any, OPAQUE]
    instructions: NotRequired[
        Annotated[str, Doc("the model protocol's instructions, when asked for")]
    ]
