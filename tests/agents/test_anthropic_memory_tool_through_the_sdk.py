"""R67: the `anthropic` SDK's tool runner drives `MorphzMemoryTool` against a loopback server
speaking the Messages API: the model's memory commands land as frames, and their answers
and error strings come back to the model as tool results."""

from __future__ import annotations

from typing import Any

from anthropic import Anthropic

from tests.agents.loopback_wire import loopback

STEPS: list[dict[str, Any]] = [
    {"command": "view", "path": "/memories"},
    {"command": "create", "path": "/memories/user.md", "file_text": "name: Ada\n"},
    {"command": "view", "path": "/memories/../etc/passwd"},
    {"command": "str_replace", "path": "/memories/user.md", "old_str": "Ada", "new_str": "Ada L"},
]


def script(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The model: one memory command per turn, then a closing text. (The SDK's runner sends
    only what is new since the last reply, so the turn is read from the tool result's id.)"""
    content = body["messages"][-1]["content"]
    blocks = content if isinstance(content, list) else []
    answered = [b["tool_use_id"] for b in blocks if b.get("type") == "tool_result"]
    turn = int(answered[-1].removeprefix("toolu_")) + 1 if answered else 0
    if turn < len(STEPS):
        return [{"type": "tool_use", "id": f"toolu_{turn}", "name": "memory", "input": STEPS[turn]}]
    return [{"type": "text", "text": "Remembered."}]


def tool_results(bodies: list[dict[str, Any]]) -> list[tuple[bool, str]]:
    out = []
    for m in [m for body in bodies for m in body["messages"]]:
        if m["role"] == "user" and isinstance(m["content"], list):
            for block in m["content"]:
                if block.get("type") == "tool_result":
                    content = block["content"]
                    text = content if isinstance(content, str) else content[0]["text"]
                    out.append((bool(block.get("is_error")), text))
    return out


def test_the_tool_runner_drives_the_memory_tool(make_client: Any) -> None:
    from morphz_client.anthropic_memory import MorphzMemoryTool

    mz = make_client("anthropic-runner")
    with loopback(script) as server:
        client = Anthropic(base_url=server.url, api_key="offline", max_retries=0, timeout=10)
        runner = client.beta.messages.tool_runner(
            model="scripted",
            max_tokens=256,
            messages=[{"role": "user", "content": "Remember that my name is Ada."}],
            tools=[MorphzMemoryTool(mz)],
        )
        final = runner.until_done()
        assert final.content[0].text == "Remembered."  # type: ignore[union-attr]
        bodies = [r["body"] for r in server.requests]
    first = bodies[0]
    assert first["tools"] == [{"type": "memory_20250818", "name": "memory"}]
    assert len(bodies) == len(STEPS) + 1
    assert tool_results(bodies) == [
        (
            False,
            "Here're the files and directories up to 2 levels deep in /memories, "
            "excluding hidden items:\n0B\t/memories",
        ),
        (False, "File created successfully at: /memories/user.md"),
        (True, "Path /memories/../etc/passwd would escape /memories directory"),
        (
            False,
            "The memory file has been edited. Here is the snippet showing the change "
            "(with line numbers):\n     1\tname: Ada L\n     2\t",
        ),
    ]
    texts = [f["body"]["text"] for f in mz.frames()["frames"]]
    assert texts == ["name: Ada L\n"]
