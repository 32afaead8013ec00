"""Any sequence of operations on two frames, with ticks between commits and grace 0, 1 or
2, commits or is refused with a rule's code: never a database error (a constraint the
engine's decision breaks), the history replays (R51), and each frame has one pending
retirement request, of its current generation, exactly while it is retiring (R14, R15)."""

from __future__ import annotations

import itertools
from typing import Any

from django.db import DatabaseError, transaction
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from memory.contexts import create_context
from memory.errors import MorphzError
from memory.models import Context, Frame, RetirementRequest
from memory.timeline.evaluation import evaluate
from memory.timeline.events import append_event
from memory.tx.engine import submit_transaction
from memory.versions.replay import verify_context

FRAMES = ["a", "b"]
frames = st.sampled_from(FRAMES)
refs = st.sampled_from([*FRAMES, "@e1"])
names = st.sampled_from(["r", "r", "supersedes"])
operations = st.one_of(
    st.builds(lambda f: {"op": "derive", "id": f, "body": {"x": "1"}}, frames),
    st.builds(
        lambda f, s: {"op": "revise", "id": f, "from": s, "body": {"x": "2"}},
        frames,
        st.lists(refs, max_size=2, unique=True),
    ),
    *(
        st.builds(
            lambda s, n, o, k=kind: {"op": k, "subject": s, "name": n, "object": o},
            frames,
            names,
            frames,
        )
        for kind in ("relate", "unrelate")
    ),
    st.builds(lambda r: {"op": "retire", "refs": [r]}, refs),
    st.builds(lambda r: {"op": "restore", "ids": [r]}, refs),
    *(
        st.builds(lambda f, k=kind: {"op": k, "ids": [f]}, frames)
        for kind in ("protect", "unprotect")
    ),
)
steps = st.one_of(st.just("tick"), st.lists(operations, min_size=1, max_size=5))
slugs = itertools.count()


def run(context: Context, step: Any) -> None:
    if step == "tick":
        append_event(context.pk, kind="external_fact", content="heartbeat")
        evaluate(context.pk)
        return
    try:
        with transaction.atomic():
            submit_transaction(context.pk, data={"ops": step})
    except MorphzError:
        pass  # refused by a rule: fine
    except DatabaseError as exc:
        raise AssertionError(f"{step} broke the database: {exc}") from exc


def check_requests(context: Context) -> None:
    for frame in Frame.objects.filter(context=context):
        pending = list(
            RetirementRequest.objects.filter(frame=frame, outcome="pending").values_list(
                "generation", flat=True
            )
        )
        expected = [frame.retire_generation] if frame.status == "retiring" else []
        assert pending == expected, (frame.frame_id, frame.status)


RELATE = {"op": "relate", "subject": "a", "name": "r", "object": "b"}
UNRELATE = {**RELATE, "op": "unrelate"}
REVISE = {"op": "revise", "id": "a", "body": {"x": "3"}}
RETIRE = {"op": "retire", "refs": ["a"]}


@example(grace=1, sequence=[[RELATE], [UNRELATE, RELATE]])
@example(grace=1, sequence=[[RELATE], [UNRELATE, RELATE, UNRELATE], [RELATE]])
@example(grace=2, sequence=[[RETIRE], [REVISE, RETIRE], "tick", "tick"])
@example(grace=2, sequence=[[RETIRE, REVISE, RETIRE], "tick", [REVISE, RETIRE]])
@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from([0, 1, 2]), st.lists(steps, min_size=1, max_size=8))
def test_operations_commit_or_refuse_and_replay(db, grace, sequence):
    with transaction.atomic():
        context = create_context(f"any-{next(slugs)}", grace_ticks=grace)
        append_event(context.pk, kind="tool_result", content="output")
        submit_transaction(
            context.pk, text="(context-tx (derive a (x 0)) (derive b (from a) (x 0)))"
        )
        for step in sequence:
            run(context, step)
        check_requests(context)
        assert verify_context(context) == []
        transaction.set_rollback(True)
