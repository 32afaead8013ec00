"""What the model reads after a reply was taken apart: a few compact lines (R46)."""

from __future__ import annotations

from memory.errors import Conflict
from memory.shapes.errors import ErrorJson
from memory.shapes.replies import MessageOutcome, ReplyOutcome, TransactionOutcome


def _receipt_line(entry: TransactionOutcome) -> str:
    receipt = entry["receipt"]
    pressure = receipt["pressure"]
    line = (
        f"- transaction {entry['ref']} committed: version {receipt['version']}; "
        f"released {receipt['released_tokens']} tokens; pressure {pressure['level']} "
        f"({pressure['used_tokens']}/{pressure['capacity_tokens']})"
    )
    for pending in receipt.get("pending_release") or []:
        line += f"; {pending['frame']} retiring until tick {pending['due_tick']}"
    done = receipt.get("completed_by_successor") or []
    if done:
        line += f"; retired by successor: {', '.join(str(d) for d in done)}"
    return line


def _rejection_lines(error: ErrorJson) -> list[str]:
    if error["code"] == Conflict.code:
        return [
            f"- transaction NOT written (conflict): {error['message']}. The context below is "
            "current: write the transaction again against its version."
        ]
    ops = [d for d in error.get("details") or [] if isinstance(d, dict) and "index" in d]
    if not ops:
        where = ""
        detail = (error.get("details") or [{}])[0]
        if isinstance(detail, dict) and "line" in detail:
            where = f" at line {detail['line']}, column {detail['column']}"
        return [f"- transaction NOT written ({error['code']}{where}): {error['message']}"]
    lines = ["- transaction NOT written; fix and resubmit:"]
    for op in ops:
        lines.append(f"  op {op['index']} {op['op']}: {op['code']}: {op['message']}")
    return lines


def _transaction_lines(transactions: list[TransactionOutcome]) -> list[str]:
    lines = []
    for entry in transactions:
        if entry["status"] == "committed":
            lines.append(_receipt_line(entry))
            lines.extend(f"  note: {note}" for note in entry.get("notes") or [])
        elif entry["status"] == "rejected" and entry["error"] is not None:
            lines.extend(_rejection_lines(entry["error"]))
        elif entry["status"] == "duplicate":
            taken = f" as {entry['ref']}" if entry.get("ref") else ""
            lines.append(
                "- the same transaction was given twice in this reply (text and tool call, or "
                f"two calls): taken once{taken}; do not write it again"
            )
        else:
            lines.append("- a later transaction was skipped (an earlier one was rejected)")
    return lines


def _message_line(message: MessageOutcome) -> str:
    error = message.get("error")
    if error:
        return f"- reply NOT recorded: {error['code']}: {error['message']}"
    line = f"- reply recorded as {message['ref']} on thread {message['thread']}"
    if message["delivers"]:
        line += f", delivers {' '.join(message['delivers'])}"
    if message.get("delivery_error"):
        line += f"; delivery refused: {message['delivery_error']['message']}"
    return line


def render_feedback(result: ReplyOutcome) -> str:
    """The outcome of a reply as a few lines for the model's next input."""
    lines = _transaction_lines(result["transactions"])
    withheld = [a for a in result["actions"] if a["status"] == "withheld"]
    message = result["message"]
    what = []
    if withheld:
        names = ", ".join(a["name"] for a in withheld)
        what.append(f"{len(withheld)} action(s) not registered ({names})")
    if message is not None and message.get("status") == "withheld":
        what.append("its message not recorded or delivered")
    if what:
        lines.append(
            f"- reply NOT taken: {'; '.join(what)}, because a transaction was rejected; fix "
            "the transaction and send the whole reply again (actions and text included)"
        )
    for entry in result["reads"]:
        if entry["status"] == "ok":
            lines.append(f"- {entry['name']}: result in {entry['ref']}")
        else:
            error = entry["error"]
            lines.append(f"- {entry['name']} failed: {error['code']}: {error['message']}")
    for entry in result["actions"]:
        if entry["status"] == "withheld":
            continue
        if entry["status"] == "cancelled":
            lines.append(f"- action {entry['cancels']} cancelled ({entry['ref']})")
        elif entry["status"] == "registered":
            lines.append(
                f"- action {entry['ref']} {entry['name']} registered; its result arrives as a "
                "new observation"
            )
        else:
            error = entry["error"]
            lines.append(f"- action {entry['name']} refused: {error['code']}: {error['message']}")
    if message is not None and message.get("status") != "withheld":
        lines.append(_message_line(message))
    lines.extend(f"- hint: {hint}" for hint in result.get("hints") or [])
    return "\n".join(lines) if lines else "- nothing to do in that reply"
