"""R67: each framework adapter's example in client/examples/ runs as written on a live
server, offline (scripted models, loopback servers)."""

from __future__ import annotations

import runpy
from pathlib import Path
from typing import Any

EXAMPLES = Path(__file__).resolve().parents[2] / "client" / "examples"


def run_example(name: str, url: str, mz: Any, monkeypatch: Any, capsys: Any) -> str:
    monkeypatch.setenv("MORPHZ_URL", url)
    monkeypatch.setenv("MORPHZ_TOKEN", mz.token)
    monkeypatch.setenv("MORPHZ_CONTEXT", mz.slug)
    runpy.run_path(str(EXAMPLES / name), run_name="__main__")
    return str(capsys.readouterr().out)


def test_the_langgraph_example(
    make_client: Any, live_server: Any, monkeypatch: Any, capsys: Any
) -> None:
    mz = make_client("ex-langgraph")
    out = run_example("langgraph_memory.py", live_server.url, mz, monkeypatch, capsys)
    assert "stored: [{'fact': 'my name is Ada'}]" in out
    frames = mz.frames()["frames"]
    assert [f["body"]["value"] for f in frames] == [{"fact": "my name is Ada"}]


def test_the_openai_agents_example(
    make_client: Any, live_server: Any, monkeypatch: Any, capsys: Any
) -> None:
    mz = make_client("ex-openai-agents")
    out = run_example("openai_agents_session.py", live_server.url, mz, monkeypatch, capsys)
    assert "'who am I?' -> 'You are Ada.'" in out and "items in the session: 4" in out
    assert [e["kind"] for e in mz.events(thread="oa:ada-chat")["events"]] == [
        "user_message",
        "agent_message",
        "user_message",
        "agent_message",
    ]


def test_the_anthropic_memory_tool_example(
    make_client: Any, live_server: Any, monkeypatch: Any, capsys: Any
) -> None:
    mz = make_client("ex-anthropic")
    out = run_example("anthropic_memory_tool.py", live_server.url, mz, monkeypatch, capsys)
    assert "create: File created successfully at: /memories/user.md" in out
    assert "view error: Path /memories/../etc/passwd would escape /memories directory" in out
    assert "delete: Successfully deleted /memories/user.md" in out
    assert [f["body"]["text"] for f in mz.frames(status="retiring")["frames"]] == ["name: Ada L\n"]
