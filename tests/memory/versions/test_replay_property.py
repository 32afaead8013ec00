"""A stateful property test (R51): random workloads (appends, deliveries, actions,
evaluations with and without threads, transactions of every operation including rejected
ones, retirements crossing their expiry, successor completions, settings changes); after
every step the state rebuilt from the history equals the stored state."""

from __future__ import annotations

import contextlib
import itertools
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from memory.contexts import create_context, update_context_settings
from memory.errors import InvalidRequest, MorphzError
from memory.models import Event, Frame
from memory.timeline.evaluation import evaluate
from memory.timeline.events import append_event, register_action
from memory.tx.engine import submit_transaction
from memory.versions.replay import verify_context

_names = itertools.count()
FRAME_IDS = ["a", "b", "c", "d", "e"]
THREADS = ["main", "side"]


class History(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.context = create_context(f"prop-{next(_names)}", grace_ticks=2, capacity_tokens=400)
        self.pk = self.context.pk

    # -- helpers ---------------------------------------------------------------------------

    def _events(self, **filters: Any) -> list[int]:
        return list(
            Event.objects.filter(context_id=self.pk, **filters).values_list("seq", flat=True)
        )

    def _frames(self) -> list[str]:
        return list(Frame.objects.filter(context_id=self.pk).values_list("frame_id", flat=True))

    def _commit(self, ops: str) -> None:
        # a rejected transaction is history too; it must change nothing
        with contextlib.suppress(MorphzError):
            submit_transaction(self.pk, text=f'(context-tx (reason "p") {ops})')

    # -- rules -----------------------------------------------------------------------------

    @rule(
        kind=st.sampled_from(["user_message", "tool_result", "agent_message", "external_fact"]),
        thread=st.sampled_from(THREADS),
        text=st.text(alphabet="abc xyz", min_size=0, max_size=30),
    )
    def append(self, kind: str, thread: str, text: str) -> None:
        if kind == "user_message" and not text.strip():
            # It would open a request for nothing: refused, and nothing is written.
            with pytest.raises(InvalidRequest):
                append_event(self.pk, kind=kind, content=text, thread=thread)
            return
        append_event(self.pk, kind=kind, content=text, thread=thread)

    @rule(data=st.data())
    def deliver(self, data: st.DataObject) -> None:
        open_refs = self._events(request_state="open")
        if open_refs:
            seq = data.draw(st.sampled_from(open_refs))
            append_event(self.pk, kind="tool_result", content="done", delivers=[f"@e{seq}"])

    @rule(name=st.sampled_from(["deploy", "build"]))
    def action(self, name: str) -> None:
        with contextlib.suppress(MorphzError):  # refused in maintenance
            register_action(self.pk, name=name, arguments={"n": 1})

    @rule(thread=st.sampled_from([None, "main", "side"]), continuation=st.booleans())
    def evaluate(self, thread: str | None, continuation: bool) -> None:
        evaluate(self.pk, thread=thread, continuation=continuation)

    @rule(data=st.data())
    def transaction(self, data: st.DataObject) -> None:
        frames = self._frames()
        events = self._events(is_observation=True)
        refs = frames + [f"@e{s}" for s in events]
        op = data.draw(
            st.sampled_from(
                [
                    "derive",
                    "revise",
                    "relate",
                    "unrelate",
                    "retire",
                    "restore",
                    "protect",
                    "unprotect",
                    "successor",
                ]
            )
        )
        fid = data.draw(st.sampled_from(FRAME_IDS))
        other = data.draw(st.sampled_from(FRAME_IDS))
        value = data.draw(st.integers(0, 9))
        source = data.draw(st.sampled_from(refs)) if refs else None
        sources = f"(from {source}) " if source and source != fid else ""
        if op == "derive":
            self._commit(f"(derive {fid} {sources}(v {value}))")
        elif op == "revise":
            self._commit(f"(revise {fid} {sources}(v {value}))")
        elif op in ("relate", "unrelate"):
            name = data.draw(st.sampled_from(["supports", "supersedes"]))
            self._commit(f"({op} {fid} {name} {other})")
        elif op in ("retire", "restore"):
            target = data.draw(st.sampled_from(refs)) if refs else fid
            keyword = "retire" if op == "retire" else "restore"
            self._commit(f"({keyword} {target})")
        elif op in ("protect", "unprotect"):
            self._commit(f"({op} {fid})")
        else:
            new = f"{fid}-next-{value}"
            self._commit(f"(derive {new} (from {fid}) (v {value})) (relate {new} supersedes {fid})")

    @rule(grace=st.integers(0, 3), capacity=st.sampled_from([200, 400, 2000]))
    def change_settings(self, grace: int, capacity: int) -> None:
        """Settings are history too (a grace change moves later due ticks, a capacity change
        can enter or leave maintenance)."""
        update_context_settings(self.pk, grace_ticks=grace, capacity_tokens=capacity)

    @invariant()
    def replay_equals_state(self) -> None:
        differences = verify_context(self.context)
        assert differences == [], differences


@pytest.mark.django_db
def test_replay_equals_the_stored_state_after_every_step() -> None:
    run_state_machine_as_test(
        History,
        settings=settings(
            max_examples=12,
            stateful_step_count=14,
            deadline=None,
            suppress_health_check=list(HealthCheck),
        ),
    )
