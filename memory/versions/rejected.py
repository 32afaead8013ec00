"""Rejected transactions in an export (R56): stored, not replayed. Each line says after
which commit it was recorded (`after_version`), so an import puts it back between the same
two commits and the transaction list (oldest first) reads as it did; a file without it
(older exports) has them restored after the last commit."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from typing import Any

from django.db.models import OuterRef, Subquery

from memory.kinds import COMMITTED, REJECTED
from memory.models import Context, Evaluation, TransactionRecord
from memory.shapes.exports import RejectedLine


def rejected_lines(context: Context) -> list[RejectedLine]:
    """The context's rejected transactions, oldest first, as export lines."""
    evaluations = {
        pk: n
        for n, pk in enumerate(
            Evaluation.objects.filter(context=context).order_by("pk").values_list("pk", flat=True)
        )
    }
    before = TransactionRecord.objects.filter(
        context=context, status=COMMITTED, pk__lt=OuterRef("pk")
    ).order_by("-pk")
    records = (
        TransactionRecord.objects.filter(context=context, status=REJECTED)
        .annotate(after_version=Subquery(before.values("committed_version")[:1]))
        .order_by("pk")
    )
    return [
        {
            "type": "rejected",
            "author": r.author,
            "author_kind": r.author_kind,
            "thread": r.thread,
            "base_version": r.base_version,
            "reason": r.reason,
            "text": r.text,
            "ops": r.ops,
            "errors": r.errors,
            "frame_ids": list(r.frame_ids),
            "evaluation": evaluations.get(r.evaluation_id) if r.evaluation_id else None,
            "created_at": r.created_at.isoformat(),
            "after_version": r.after_version or 0,
        }
        for r in records
    ]


class RejectedInPlace:
    """Restores an import's rejected lines where they stood: `before(step)` ahead of each
    step replay applies (the lines recorded before that commit), `rest()` at the end."""

    def __init__(self, context: Context, lines: Iterable[Mapping[str, Any]]) -> None:
        self.context = context
        self.pending = deque(lines)
        self.evaluations: list[int] = []  # the context's evaluations so far, by ordinal

    def before(self, step: Mapping[str, Any]) -> None:
        """Ahead of a commit's step: the lines recorded before that commit."""
        version = step.get("version")
        if step["type"] != "transaction" or not isinstance(version, int):
            return
        due = []
        while self.pending and _after(self.pending[0]) < version:
            due.append(self.pending.popleft())
        self._restore(due)

    def rest(self) -> None:
        """After the last step: the lines left (recorded after the last commit)."""
        self._restore(list(self.pending))
        self.pending.clear()

    def _restore(self, lines: list[Mapping[str, Any]]) -> None:
        if not lines:
            return
        # Only the evaluations replayed since the last call are read: one pass in all.
        newer = Evaluation.objects.filter(
            context=self.context, pk__gt=self.evaluations[-1] if self.evaluations else 0
        )
        self.evaluations += newer.order_by("pk").values_list("pk", flat=True)
        evaluations = self.evaluations
        TransactionRecord.objects.bulk_create(
            [
                TransactionRecord(
                    context=self.context,
                    author=r["author"],
                    author_kind=r["author_kind"],
                    thread=r["thread"],
                    base_version=r.get("base_version"),
                    committed_version=None,
                    status=REJECTED,
                    reason=r.get("reason") or "",
                    text=r["text"],
                    ops=r.get("ops"),
                    errors=r.get("errors"),
                    frame_ids=list(r.get("frame_ids") or []),
                    evaluation_id=(
                        evaluations[r["evaluation"]]
                        if isinstance(r.get("evaluation"), int)
                        and 0 <= r["evaluation"] < len(evaluations)
                        else None
                    ),
                )
                for r in lines
            ]
        )


def _after(line: Mapping[str, Any]) -> float:
    """The version a line was recorded after; a line of an older file, after every one."""
    after = line.get("after_version")
    return after if isinstance(after, int) and not isinstance(after, bool) else float("inf")
