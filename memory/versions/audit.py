"""What each model call was given (R55): evaluations, read back.

- `list_evaluations(context, *, thread=None, after_pk=0, limit=50) -> Page[Evaluation]`:
  oldest first, summaries (no compiled text).
- `get_evaluation(context, evaluation_id) -> dict`: one evaluation with the compiled input it
  returned (structured `context`, rendered `text`, `tokens`), its view version, tick and the
  refs it claimed. NotFound for an id of another context.
"""

from __future__ import annotations

from typing import Any, cast

from memory.errors import NotFound
from memory.models import Context, Evaluation
from memory.read.paging import Page
from memory.shapes.versions import EvaluationDetail, EvaluationSummary


def evaluation_summary(evaluation: Evaluation) -> EvaluationSummary:
    """One evaluation without its compiled text: id, thread, tick (and whether it advanced),
    view version, claimed refs, expired frame ids, last seq, tokens, created_at (R55)."""
    result = evaluation.result or {}
    return {
        "id": evaluation.pk,
        "thread": evaluation.thread,
        "continuation": evaluation.continuation,
        "tick": evaluation.tick,
        "advanced_tick": evaluation.advanced_tick,
        "view_version": evaluation.view_version,
        "claimed": [f"@e{seq}" for seq in evaluation.claimed_seqs],
        "expired": list(result.get("expired") or []),
        "last_seq": evaluation.last_seq,
        "tokens": result.get("tokens"),
        "created_at": evaluation.created_at.isoformat(),
    }


def evaluation_detail(evaluation: Evaluation) -> EvaluationDetail:
    """The summary plus `input` (the compiled context and text the model was given),
    `frames_seen` (id, revision, status) and `observations_seen` (refs) (R55)."""
    result = evaluation.result or {}
    raw = result.get("context")
    compiled: dict[str, Any] = raw if isinstance(raw, dict) else {}
    return {
        **evaluation_summary(evaluation),
        "input": {"context": result.get("context"), "text": result.get("text", "")},
        "frames_seen": [
            {"id": f.get("id"), "revision": f.get("revision"), "status": f.get("status")}
            for f in compiled.get("frames") or []
            if isinstance(f, dict)
        ],
        # Every compiled observation holds its ref (memory.shapes.observation_json).
        "observations_seen": [
            cast(str, o.get("ref"))
            for o in compiled.get("observations") or []
            if isinstance(o, dict)
        ],
    }


def list_evaluations(
    context: Context, *, thread: str | None = None, after_pk: int = 0, limit: int = 50
) -> Page[Evaluation]:
    """At most `limit` evaluations of the context after id `after_pk`, oldest first (their
    compiled text not loaded), and whether more follow."""
    queryset = Evaluation.objects.filter(context=context, pk__gt=after_pk).defer("result")
    if thread:
        queryset = queryset.filter(thread=thread)
    rows = list(queryset.order_by("pk")[: limit + 1])
    return Page(items=rows[:limit], has_more=len(rows) > limit)


def get_evaluation(context: Context, evaluation_id: int) -> EvaluationDetail:
    """`evaluation_detail` of one evaluation; NotFound for an id of another context."""
    evaluation = Evaluation.objects.filter(context=context, pk=evaluation_id).first()
    if evaluation is None:
        raise NotFound(
            f"evaluation {evaluation_id} does not exist in this context",
            details=[{"evaluation": evaluation_id}],
        )
    return evaluation_detail(evaluation)
