"""The first worked example (docs/design.md), run through the memory agent loop by a scripted
model (a deterministic policy behind the same model protocol as the real SDKs)."""

from __future__ import annotations

from typing import Any

from tests.agents.conftest import (
    build_release_story,
    check_first_example,
    first_example_policy,
    package_tool,
)


def test_first_example_through_the_loop(make_client: Any) -> None:
    from morphz_client.agent import MemoryAgent, ModelReply, ScriptedModel, ToolCall

    mz = make_client("release-team")
    build_release_story(mz)

    def policy(request: Any) -> Any:
        text, calls = first_example_policy(request.prompt)
        return ModelReply(
            text, [ToolCall(f"c{request.step}_{i}", n, a) for i, (n, a) in enumerate(calls)]
        )

    model = ScriptedModel(policy)
    at_packaging: dict[str, Any] = {}
    turn = MemoryAgent(mz, model, tools=[package_tool(mz, at_packaging)]).run()
    check_first_example(mz, turn, at_packaging)
    # The model got the protocol's instructions as its system text and @e42 as a preview.
    first = model.requests[0]
    assert first.system == mz.protocol()["instructions"]
    assert "read_event ref=@e42" in first.prompt
    assert {
        "context_tx",
        "recall",
        "search",
        "read_event",
        "frame",
        "cancel_action",
        "package",
    } == {t["name"] for t in first.tools}
    # The second call shows the outcome of the first reply, compactly.
    second = model.requests[1].prompt
    assert "## outcome of your previous reply" in second
    assert "committed: version 13" in second and "action @e" in second
