"""The design document's first example, run through the memory agent loop by a scripted
model (a deterministic policy behind the same model protocol as the real SDKs)."""

from __future__ import annotations

import re
from typing import Any

from tests.agents.conftest import FIRST_EXAMPLE, build_release_story


def _policy_factory(seen: list[dict[str, Any]]) -> Any:
    from morphz_client.agent import ModelReply, ToolCall, state_version

    def policy(request: Any) -> Any:
        prompt = request.prompt
        seen.append({"step": request.step, "prompt": prompt, "system": request.system})
        packaged = re.search(r"\[(@e\d+) tool_result[^\]]*\]\npackaged (\S+)", prompt)
        if packaged:
            # Step 2: the packaging result arrived as a new observation.
            ref, artifact = packaged.group(1), packaged.group(2)
            return ModelReply(
                text=f"Packaging finished: {artifact}.",
                tool_calls=[
                    ToolCall(
                        "call_3",
                        "context_tx",
                        {
                            "tx": f"(context-tx (base-version {state_version(prompt)})"
                            f' (reason "packaging result absorbed")'
                            f" (revise release (from {ref}) (goal ship-v1) (stage packaged)"
                            f" (artifact {artifact}))"
                            f" (retire {ref}))"
                        },
                    )
                ],
            )
        # Step 1: @e42 is shown as a preview whose tail says the suite passed.
        assert "[@e42 tool_result" in prompt and "3000 passed" in prompt
        return ModelReply(
            text="The regression suite passed (@e42); packaging started.",
            tool_calls=[
                ToolCall("call_1", "package", {"target": "ship-v1"}),
                ToolCall(
                    "call_2", "context_tx", {"tx": FIRST_EXAMPLE.format(base=state_version(prompt))}
                ),
            ],
        )

    return policy


def test_first_example_through_the_loop(make_client: Any) -> None:
    from morphz_client.agent import MemoryAgent, ScriptedModel, Tool

    mz = make_client("release-team")
    build_release_story(mz)
    at_packaging: dict[str, Any] = {}

    def package(arguments: dict[str, Any]) -> str:
        # What memory says while the packaging command runs (after the reply was taken apart).
        at_packaging["release"] = mz.frame("release")
        at_packaging["frames"] = mz.frames()["frames"]
        at_packaging["actions"] = mz.events(kind="action")["events"]
        return "packaged shop-web-1.0.0.tgz"

    seen: list[dict[str, Any]] = []
    model = ScriptedModel(_policy_factory(seen))
    agent = MemoryAgent(
        mz,
        model,
        tools=[
            Tool(
                "package",
                "Build the release package",
                {"type": "object", "properties": {"target": {"type": "string"}}},
                package,
            )
        ],
    )
    turn = agent.run()

    assert turn.status == "answered", turn
    assert turn.answer == "Packaging finished: shop-web-1.0.0.tgz."
    assert len(turn.steps) == 2
    # The model got the protocol's instructions as its system text, @e42 as a preview.
    assert seen[0]["system"].startswith("# Morphz memory protocol")
    assert "read_event ref=@e42" in seen[0]["prompt"]

    first = turn.steps[0].outcome
    # One reply, taken apart: the transaction committed, the tool call became an action.
    assert [t["status"] for t in first["transactions"]] == ["committed"]
    assert first["transactions"][0]["receipt"]["version"] == 13
    assert [(a["name"], a["status"]) for a in first["actions"]] == [("package", "registered")]
    action_ref = first["actions"][0]["ref"]
    assert first["message"]["ref"]

    # Memory while packaging ran is as the document says: tests passed, ready to package;
    # nothing claims the packaging succeeded.
    release = at_packaging["release"]
    assert release["revision"] == 2 and release["body"] == {"goal": "ship-v1", "stage": "packaging"}
    frames = {f["id"]: f for f in at_packaging["frames"]}
    assert frames["test-result"]["sources"] == ["@e42"]
    assert frames["test-result"]["body"] == {"tests": "passed"}
    assert not any("packaged" in str(f["body"]) for f in at_packaging["frames"])
    assert at_packaging["actions"][0]["ref"] == action_ref
    assert mz.relations(subject="test-result")["relations"][0]["object"] == "release"
    assert mz.read_event("@e42", length=1)["status"] == "retired"
    assert mz.read_event_text("@e42").endswith("3000 passed")  # history keeps it all

    # The packaging result arrived as a new observation delivering the action...
    result_ref = turn.steps[0].tool_results[0]["ref"]
    result = mz.read_event(result_ref)
    assert result["kind"] == "tool_result" and result["content"] == "packaged shop-web-1.0.0.tgz"
    assert int(result_ref[2:]) > int(action_ref[2:])
    assert result_ref in turn.steps[1].evaluation["claimed"]
    # ...and only then did memory say the package exists, citing that observation.
    release = mz.frame("release")
    assert release["body"] == {
        "goal": "ship-v1",
        "stage": "packaged",
        "artifact": "shop-web-1.0.0.tgz",
    }
    assert result_ref in release["sources"]
    history = release["write_history"]
    assert [h["version"] for h in history] == [1, 13, 14]
    assert history[1]["text"] == FIRST_EXAMPLE.format(base=12)
