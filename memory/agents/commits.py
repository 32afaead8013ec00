"""The transactions of one model reply (R57), committed in order: a repeat commits once,
a rejection skips the rest, and one refused only for retiring a request the same reply
delivers waits for that delivery. Each committed transaction gets advisory notes on what a
model often does not mean (R59). `memory.agents.replies` takes the whole reply apart.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from memory.agents.parts import Parts, error_json
from memory.errors import ErrorCode, InvalidRequest, MorphzError
from memory.models import Frame
from memory.shapes.errors import ErrorJson
from memory.shapes.errors import error_json as shaped_error
from memory.shapes.replies import TransactionOutcome
from memory.tx.engine import Author, submit_transaction
from memory.tx.lang import TxError, parse_text

# A field of two or more bare words: the language reads it as a list, which a model writing
# (note two words) rarely means (R59).
_BARE_LIST_RE = re.compile(r"\(([a-z][A-Za-z0-9_.:-]*)((?:[ \t]+[^\s()\[\]\"@;]+){2,})\)")


def part_key(key: str | None, part: str, index: int | None = None) -> str | None:
    """The idempotency key of one part of a reply sent under `key` (None without one)."""
    if key is None:
        return None
    return f"{key}:{part}" if index is None else f"{key}:{part}:{index}"


def _same_ops(tx_text: Any) -> str | None:
    """What makes two transactions of one reply the same: their operations (R57)."""
    if not isinstance(tx_text, str):
        return None
    try:
        return json.dumps(parse_text(tx_text)["ops"], sort_keys=True)
    except TxError:
        return " ".join(tx_text.split())


@dataclass(frozen=True, kw_only=True)
class Commits:
    """The reply's transactions as they commit; see `commit_all`."""

    context_id: int
    author: Author
    thread: str
    evaluation_id: int | None
    key: str | None

    def submit(self, index: int, tx_text: Any, entry: TransactionOutcome) -> None:
        """Commit one transaction; `entry` gets its status and receipt or error."""
        try:
            if not isinstance(tx_text, str) or not tx_text.strip():
                raise InvalidRequest(
                    "context_tx needs `tx`: the transaction text, starting with (context-tx",
                    details=[{"field": "tx"}],
                )
            dropped = _dropped_fields(self.context_id, tx_text)
            result = submit_transaction(
                self.context_id,
                text=tx_text,
                author=self.author,
                thread=self.thread,
                evaluation_id=self.evaluation_id,
                idempotency_key=part_key(self.key, "tx", index),
            )
        except MorphzError as exc:
            entry["status"] = "rejected"
            entry["error"] = error_json(exc)
            return
        entry.pop("error", None)
        entry["status"] = "committed"
        entry["ref"] = result.event_ref
        entry["transaction"] = result.record_id
        entry["receipt"] = result.receipt
        notes = [
            f"revise {frame_id} dropped {', '.join(keys)} (revise replaces the whole body; "
            "write every field you keep)"
            for frame_id, keys in dropped.items()
        ] + _syntax_notes(tx_text)
        if notes:
            entry["notes"] = notes


def commit_all(commits: Commits, parts: Parts) -> list[TransactionOutcome]:
    """Commit the reply's transactions in order. After a rejection the rest are skipped; a
    repeat of an earlier transaction is `duplicate` (committed once); one refused only for
    retiring a request this reply delivers is `waiting` (committed after the delivery)."""
    out: list[TransactionOutcome] = []
    seen: dict[str, int] = {}
    failed = False
    for index, (source, call_id, tx_text) in enumerate(parts.transactions):
        # Every path below sets the status; `skipped` is the one that sets nothing else.
        entry: TransactionOutcome = {"source": source, "tool_call_id": call_id, "status": "skipped"}
        out.append(entry)
        same = _same_ops(tx_text)
        if same is not None and same in seen:
            first = seen[same]
            entry["status"] = "duplicate"
            entry["duplicate_of"] = first
            entry["ref"] = out[first].get("ref")
            entry["error"] = shaped_error(
                ErrorCode.DUPLICATE_TRANSACTION,
                f"the same transaction as transaction {first} of this reply (written twice); "
                "it was taken once",
                [{"index": index, "duplicate_of": first}],
            )
            continue
        if same is not None:
            seen[same] = index
        if failed:
            entry["error"] = None
            continue
        commits.submit(index, tx_text, entry)
        error = entry.get("error")
        if entry["status"] == "rejected" and error is not None:
            if _waits_for_delivery(error, parts.delivers):
                entry["status"] = "waiting"
            else:
                failed = True
    return out


def _waits_for_delivery(error: ErrorJson, delivers: list[str]) -> bool:
    """Whether a rejection is only `request_pending` for requests this reply delivers."""
    ops = [d for d in error.get("details") or [] if isinstance(d, dict) and "index" in d]
    return bool(ops) and all(
        d.get("code") == ErrorCode.REQUEST_PENDING and d.get("ref") in delivers for d in ops
    )


def _syntax_notes(tx_text: str) -> list[str]:
    """Notes on what the transaction says that a model often does not mean (R59): a field
    of bare words read as a list, a field key ending in a colon."""
    notes = []
    for key, words in _BARE_LIST_RE.findall(tx_text):
        if key in ("context-tx", "derive", "revise", "relate", "unrelate", "from"):
            continue
        items = words.split()
        if key.endswith(":"):
            continue
        notes.append(
            f"({key} {' '.join(items)}) is the list [{' '.join(items)}] of {len(items)} "
            f'words; for one text write ({key} "{" ".join(items)}")'
        )
    for key in re.findall(r"\(([a-z][A-Za-z0-9_.-]*):[ \t]", tx_text):
        notes.append(f"field key {key}: has a colon in its name; a field is ({key} value)")
    return notes


def _dropped_fields(context_id: int, tx_text: str) -> dict[str, list[str]]:
    """For each `revise` in the transaction, the fields of the current body it leaves out:
    the most common slip (a revise replaces the whole body). Advisory only."""
    try:
        ops = parse_text(tx_text)["ops"]
    except TxError:
        return {}
    revised = {op["id"]: op["body"] for op in ops if op["op"] == "revise"}
    if not revised:
        return {}
    bodies = dict(
        Frame.objects.filter(context_id=context_id, frame_id__in=list(revised)).values_list(
            "frame_id", "body"
        )
    )
    dropped = {}
    for frame_id, body in revised.items():
        old = bodies.get(frame_id)
        if isinstance(old, dict) and isinstance(body, dict):
            missing = [key for key in old if key not in body]
            if missing:
                dropped[frame_id] = missing
    return dropped
