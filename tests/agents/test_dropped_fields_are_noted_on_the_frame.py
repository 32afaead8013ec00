"""A revise that drops fields is committed, and the frame carries a note in the next
compiled inputs until the next revise (R59): the next session sees what was lost."""

from __future__ import annotations

from typing import Any

import pytest

from memory.contexts import create_context
from memory.models import Context
from memory.timeline.compile import compile_active_context
from memory.tx.engine import submit_transaction


@pytest.fixture
def ctx(db: Any) -> Any:
    context = create_context("dropped")
    submit_transaction(
        context.pk, text="(context-tx (derive release (goal ship-v1) (stage testing) (owner ana)))"
    )
    return context


def _frame(ctx: Any) -> tuple[Any, str]:
    compiled = compile_active_context(Context.objects.get(pk=ctx.pk))
    (frame,) = compiled["context"]["frames"]
    return frame, compiled["text"]


def test_the_note_stays_until_the_next_revise(ctx: Any) -> None:
    submit_transaction(ctx.pk, text="(context-tx (revise release (stage packaging)))")
    frame, text = _frame(ctx)
    assert frame["dropped"] == {"version": 2, "fields": ["goal", "owner"]}
    assert "[frame release r2 active] · fields dropped at version 2: goal, owner\n" in text
    # Other commits do not clear it: it is the frame's, until its next revise.
    submit_transaction(ctx.pk, text="(context-tx (derive other (k v)))")
    compiled = compile_active_context(Context.objects.get(pk=ctx.pk))
    assert "fields dropped at version 2: goal, owner" in compiled["text"]
    submit_transaction(
        ctx.pk, text="(context-tx (revise release (goal ship-v1) (stage packaging)))"
    )
    compiled = compile_active_context(Context.objects.get(pk=ctx.pk))
    release = next(f for f in compiled["context"]["frames"] if f["id"] == "release")
    assert "dropped" not in release
    assert "fields dropped" not in compiled["text"]


def test_a_revise_that_keeps_every_field_has_no_note(ctx: Any) -> None:
    submit_transaction(
        ctx.pk,
        text="(context-tx (revise release (goal ship-v1) (stage packaging) (owner ana) (new x)))",
    )
    frame, text = _frame(ctx)
    assert "dropped" not in frame and "fields dropped" not in text
