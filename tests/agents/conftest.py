"""Agents tests: a live server on the test database and a client for a fresh context."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from memory.contexts import create_context, issue_token
from tests.api.live import unthrottled  # noqa: F401


@pytest.fixture
def make_client(live_server: Any, transactional_db: Any, request: Any) -> Iterator[Any]:
    """`make_client(slug, **settings)`: a context and a client holding its token."""
    request.getfixturevalue("unthrottled")
    from morphz_client import MorphzClient

    clients: list[Any] = []

    def make(slug: str, **settings: Any) -> Any:
        context = create_context(slug, **settings)
        client = MorphzClient(live_server.url, issue_token(context).raw, context=slug)
        client.token = issue_token(context).raw
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


FIRST_EXAMPLE = """(context-tx
  (base-version {base})
  (reason "测试结果已吸收，继续准备发布")
  (derive test-result (from @e42) (tests passed))
  (revise release (goal ship-v1) (stage packaging))
  (relate test-result supports release)
  (retire @e42))"""

TEST_LOG = "\n".join(f"test_{n:04d} ... ok" for n in range(3000)) + "\n3000 passed"


def build_release_story(mz: Any) -> None:
    """The design document's setting, exactly: `release` waits for tests, the regression
    log is @e42 and the context is at version 12 when the model reads it. The padding is
    agent work: 29 earlier tool outputs, digested into 11 frames and retired (each commit is
    an event too)."""
    mz.submit("(context-tx (derive release (goal ship-v1) (stage waiting-for-tests)))")
    outputs = [
        mz.append_event("tool_result", f"earlier output {i}: build step {i} finished")["ref"]
        for i in range(1, 30)
    ]
    mz.evaluate()
    for batch in range(11):
        refs = " ".join(outputs[batch::11])
        mz.submit(
            f"(context-tx (derive step-batch-{batch} (from {refs}) (outcome finished))"
            f" (retire {refs}))"
        )
    log = mz.append_event("tool_result", TEST_LOG)
    assert log["ref"] == "@e42"
    assert mz.context()["version"] == 12
