"""The cast for memory tests: a release team's context, built through real memory functions."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from memory.contexts import create_context
from memory.models import Context, Frame
from memory.search import indexer
from memory.shapes import ReceiptJson
from memory.shapes.evaluation import EvaluationResult
from memory.timeline.evaluation import evaluate
from memory.timeline.events import append_event
from memory.tx.engine import submit_transaction


class Agent:
    """Drives one context the way an agent would: observe, evaluate, commit."""

    def __init__(self, context: Context) -> None:
        self.context = context

    def refresh(self) -> Context:
        self.context.refresh_from_db()
        return self.context

    @property
    def version(self) -> int:
        return self.refresh().version

    @property
    def tick(self) -> int:
        return self.refresh().tick

    def observe(self, content: str, kind: str = "tool_result", **kw: Any) -> str:
        return append_event(self.context.pk, kind=kind, content=content, **kw).event.ref

    def commit(self, text: str, **kw: Any) -> ReceiptJson:
        return submit_transaction(self.context.pk, text=text, **kw).receipt

    def evaluate(self, **kw: Any) -> EvaluationResult:
        return evaluate(self.context.pk, **kw)

    def advance_ticks(self, n: int) -> None:
        """n evaluations, each claiming one external fact (one tick each)."""
        for i in range(n):
            self.observe(f"heartbeat {i}", kind="external_fact")
            self.evaluate()

    def frame(self, frame_id: str) -> Frame:
        return Frame.objects.get(context=self.context, frame_id=frame_id)


@pytest.fixture
def release_team(db: Any) -> Agent:
    return Agent(create_context("release-team", name="Release team"))


@pytest.fixture
def release_log(release_team: Agent) -> str:
    """@e42: a long regression-test log, after 41 earlier tool results."""
    for i in range(1, 42):
        release_team.observe(f"earlier output {i}")
    log = "\n".join(f"test_{n:04d} ... ok" for n in range(3000)) + "\n3000 passed"
    ref = release_team.observe(log)
    assert ref == "@e42"
    return ref


@pytest.fixture
def release_frame(release_team: Agent, release_log: str) -> Agent:
    """Frame `release` waiting for tests, as in docs/design.md."""
    release_team.commit("(context-tx (derive release (goal ship-v1) (stage waiting-for-tests)))")
    return release_team


FIRST_EXAMPLE = """(context-tx
  (base-version {base})
  (reason "测试结果已吸收，继续准备发布")
  (derive test-result (from @e42) (tests passed))
  (revise release (goal ship-v1) (stage packaging))
  (relate test-result supports release)
  (retire @e42))"""


@pytest.fixture
def first_example() -> str:
    return FIRST_EXAMPLE


@contextmanager
def running_indexer() -> Iterator[Callable[[Callable[[], bool]], None]]:
    """The index worker's loop (`run_forever`, polling every 0.05 s) in a thread, on its own
    connection (so the data it should see must be committed: `transactional_db`). Yields
    `wait_until(done)`, which polls `done` for up to 30 s; the worker stops on exit."""
    stop = threading.Event()
    worker = threading.Thread(
        target=indexer.run_forever, args=(stop,), kwargs={"poll_seconds": 0.05}
    )

    def wait_until(done: Callable[[], bool]) -> None:
        deadline = time.monotonic() + 30
        while not done() and time.monotonic() < deadline:
            time.sleep(0.05)

    worker.start()
    try:
        yield wait_until
    finally:
        stop.set()
        worker.join(10)
