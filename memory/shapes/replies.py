"""The answer of taking a model reply apart (R46, R57): the outcome of each part, in the
order the parts ran, and the feedback the model reads next (memory.agents.replies)."""

from __future__ import annotations

from typing import Annotated, Any, Literal, NotRequired, TypedDict

from memory.shapes.errors import ErrorJson
from memory.shapes.fields import OPAQUE, Doc
from memory.shapes.receipt import ReceiptJson

# Where a transaction was written: a `(context-tx …)` form in the text, or a tool call.
TxSource = Literal["text", "tool_call"]
# A memory read is `ok` or in `error`; an action `registered`, `cancelled` (a cancellation),
# `refused`, or `withheld` with the rest of a rejected reply.
CallStatus = Literal["ok", "error", "cancelled", "registered", "refused", "withheld"]


class TransactionOutcome(TypedDict):
    """A transaction of the reply: `committed` (with its receipt), `rejected`, `waiting`
    for a delivery in the same reply, `duplicate` of an earlier one, or `skipped`."""

    source: TxSource
    tool_call_id: str | None
    status: Literal["committed", "rejected", "waiting", "duplicate", "skipped"]
    duplicate_of: NotRequired[int]
    ref: NotRequired[str | None]
    transaction: NotRequired[int]
    receipt: NotRequired[ReceiptJson]
    error: NotRequired[ErrorJson | None]
    notes: NotRequired[list[str]]


class CallOutcome(TypedDict):
    """A tool call of the reply, a memory read or an action: what it asked, and its status."""

    tool_call_id: str | None
    name: str
    # Left out for a call whose arguments did not decode.
    arguments: NotRequired[dict[str, Any]]
    status: CallStatus
    ref: NotRequired[str]
    result: NotRequired[Any]
    cancels: NotRequired[Any]
    error: NotRequired[ErrorJson]


class MessageOutcome(TypedDict):
    """The reply's text as an agent message: its `ref`, or why it was not written, and
    `text`, what the user is shown: the reply's text with its transaction forms and
    `(delivers …)` markers taken out (empty when nothing else was said)."""

    text: str
    delivers: list[str]
    ref: NotRequired[str | None]
    thread: NotRequired[str]
    status: NotRequired[Literal["withheld"]]
    error: NotRequired[ErrorJson]
    delivery_error: NotRequired[ErrorJson]


class ReplyOutcome(TypedDict):
    # The part outcomes are documented as free JSON (their shapes are above).
    transactions: Annotated[list[TransactionOutcome], OPAQUE]
    reads: Annotated[list[CallOutcome], OPAQUE]
    actions: Annotated[list[CallOutcome], OPAQUE]
    message: Annotated[MessageOutcome | None, OPAQUE]
    rejected: Annotated[
        bool, Doc("a transaction was rejected: the actions and message were withheld")
    ]
    conflict: bool
    hints: list[str]
    version: int
    tick: int


class ReplyResult(ReplyOutcome):
    feedback: Annotated[str, Doc("what the model should read next")]


def call_outcome(
    call_id: str | None, name: str, arguments: dict[str, Any], status: CallStatus
) -> CallOutcome:
    """A tool call's outcome before what it did: its id, name, decoded arguments, status."""
    return {"tool_call_id": call_id, "name": name, "arguments": arguments, "status": status}


def reply_result(outcome: ReplyOutcome, feedback: str) -> ReplyResult:
    """The reply's outcome with the `feedback` rendered from it."""
    return {**outcome, "feedback": feedback}
