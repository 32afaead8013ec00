"""The receipt of a committed transaction (R11): what it did, what it freed, the pressure
after it; stored with the transaction and served with its id and event ref."""

from __future__ import annotations

from typing import Annotated, TypedDict

from memory.pressure import PressureState
from memory.shapes.context import PressureJson, pressure_json
from memory.shapes.fields import Doc
from memory.shapes.results import OpResult


class PendingRelease(TypedDict):
    frame: str
    tokens: int
    due_tick: int


class ReceiptJson(TypedDict):
    version: int
    tick: int
    results: Annotated[list[OpResult], Doc("one per operation")]
    released_tokens: int
    pending_release: list[PendingRelease]
    completed_by_successor: list[str]
    pressure: PressureJson


class ServedReceipt(ReceiptJson):
    transaction: Annotated[int, Doc("id of the stored transaction")]
    ref: Annotated[str, Doc("the transaction event in the history")]


def receipt_json(
    version: int,
    tick: int,
    results: list[OpResult],
    released_tokens: int,
    retiring: list[PendingRelease],
    completed_by_successor: list[str],
    state: PressureState,
) -> ReceiptJson:
    """The receipt at the committed `version` and `tick`: one result per operation, the
    tokens released, the frames still `retiring` (by frame id), the requests a successor
    completed and the pressure after the commit."""
    return {
        "version": version,
        "tick": tick,
        "results": results,
        "released_tokens": released_tokens,
        "pending_release": sorted(retiring, key=lambda p: p["frame"]),
        "completed_by_successor": completed_by_successor,
        "pressure": pressure_json(state),
    }


def served_receipt(receipt: ReceiptJson, transaction: int, ref: str) -> ServedReceipt:
    """The receipt as the API answers a commit: with the stored transaction's id and its
    event `ref` (from the commit result; reading the record would cost a query)."""
    return {**receipt, "transaction": transaction, "ref": ref}
