"""The `openai` and `anthropic` implementations of the model protocol, through the real SDKs
against a local server speaking each provider's wire format (loopback, no network)."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest

from tests.agents.conftest import (
    build_release_story,
    check_first_example,
    first_example_policy,
    package_tool,
)
from tests.agents.fake_providers import fake_providers


def _policy(system: str, prompt: str, tools: list[str]) -> Any:
    assert system.startswith("# Morphz memory protocol")
    assert {"context_tx", "recall", "search", "read_event", "frame", "package"} <= set(tools)
    return first_example_policy(prompt)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_first_example_through_each_sdk(make_client: Any, provider: str) -> None:
    from morphz_client.agent import MemoryAgent
    from morphz_client.llm import AnthropicModel, OpenAIModel

    mz = make_client(f"sdk-{provider}")
    build_release_story(mz)
    with fake_providers(_policy) as fake:
        model: Any
        if provider == "openai":
            model = OpenAIModel("gpt-test", base_url=f"{fake.url}/v1", api_key="sk-test")
        else:
            model = AnthropicModel("claude-test", base_url=fake.url, api_key="sk-ant-test")
        at_packaging: dict[str, Any] = {}
        turn = MemoryAgent(mz, model, tools=[package_tool(mz, at_packaging)]).run()
    check_first_example(mz, turn, at_packaging)
    assert len(fake.requests) == 2
    body = fake.requests[0]["body"]
    if provider == "openai":
        assert fake.requests[0]["path"] == "/v1/chat/completions"
        assert fake.requests[0]["headers"]["authorization"] == "Bearer sk-test"
        assert body["model"] == "gpt-test"
        tool = next(t for t in body["tools"] if t["function"]["name"] == "context_tx")
        assert tool["type"] == "function" and tool["function"]["parameters"]["required"] == ["tx"]
        # The reply's tool call ids travel to the server as the actions' call ids.
        assert turn.steps[0].outcome["actions"][0]["tool_call_id"] == "call_1_0"
    else:
        assert fake.requests[0]["path"] == "/v1/messages"
        headers = fake.requests[0]["headers"]
        assert "sk-ant-test" in (headers.get("x-api-key"), headers.get("authorization", "")[7:])
        assert "anthropic-version" in headers
        assert body["model"] == "claude-test" and body["max_tokens"] > 0
        tool = next(t for t in body["tools"] if t["name"] == "context_tx")
        assert tool["input_schema"]["required"] == ["tx"]
        assert turn.steps[0].outcome["actions"][0]["tool_call_id"] == "toolu_1_0"


def _chat_policy(system: str, prompt: str, tools: list[str]) -> Any:
    import re

    from morphz_client.agent import state_version

    request = re.findall(r"\[(@e\d+) user_message[^\]]*OPEN REQUEST\]\n\| (.*)", prompt)
    ref, text = request[-1]
    if text.startswith("remember"):
        colour = text.split()[-1]
        tx = (
            f"(context-tx (base-version {state_version(prompt)})"
            f" (derive user-prefs (from {ref}) (colour {colour})))"
        )
        return f"Noted. (delivers {ref})", [("context_tx", {"tx": tx})]
    found = re.search(r"\(colour (\w+)\)", prompt)
    return (
        f"Your favourite colour is {found.group(1) if found else 'unknown'}. (delivers {ref})",
        [],
    )


def test_chat_command_remembers_across_restarts(make_client: Any) -> None:
    mz = make_client("chat")
    with fake_providers(_chat_policy) as fake:
        env = {
            **os.environ,
            "MORPHZ_URL": str(mz._http.base_url).rstrip("/"),
            "MORPHZ_TOKEN": mz.token,
            "OPENAI_BASE_URL": f"{fake.url}/v1",
            "OPENAI_API_KEY": "sk-test",
            "MORPHZ_MODEL": "gpt-test",
        }
        env.pop("ANTHROPIC_API_KEY", None)
        outputs = []
        for line in ("remember my favourite colour: teal", "what is my favourite colour?"):
            done = subprocess.run(
                [sys.executable, "-m", "morphz_client.chat", "--context", "chat"],
                input=f"{line}\n/quit\n",
                capture_output=True,
                text=True,
                env=env,
                timeout=120,
            )
            assert done.returncode == 0, done.stderr
            outputs.append(done.stdout)
    assert "Noted." in outputs[0]
    assert "Your favourite colour is teal." in outputs[1]
    assert mz.frame("user-prefs")["body"] == {"colour": "teal"}
    assert [e["request"] for e in mz.events(kind="user_message")["events"]] == [
        "delivered",
        "delivered",
    ]


def _run_chat(env: dict[str, str], line: str = "hello") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "morphz_client.chat", "--context", "chat-start"],
        input=f"{line}\n/quit\n",
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def _base_env() -> dict[str, str]:
    env = {**os.environ}
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "MORPHZ_PROVIDER"):
        env.pop(name, None)
    return env


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_chat_without_a_model_key_says_so_and_writes_nothing(
    make_client: Any, provider: str
) -> None:
    mz = make_client("chat-start")
    env = {
        **_base_env(),
        "MORPHZ_URL": str(mz._http.base_url).rstrip("/"),
        "MORPHZ_TOKEN": mz.token,
        "MORPHZ_PROVIDER": provider,
        "MORPHZ_MODEL": "m-test",
    }
    done = _run_chat(env)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert "API_KEY" in done.stderr
    assert mz.events(kind="user_message")["events"] == []


def test_chat_without_a_morphz_token_exits_2() -> None:
    env = {**_base_env(), "OPENAI_API_KEY": "sk-test", "MORPHZ_MODEL": "m"}
    env.pop("MORPHZ_TOKEN", None)
    done = _run_chat(env)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == ["morphz chat: set MORPHZ_TOKEN (or pass --token)"]


def test_chat_with_an_unreachable_morphz_exits_1() -> None:
    env = {
        **_base_env(),
        "OPENAI_API_KEY": "sk-test",
        "MORPHZ_MODEL": "m",
        "MORPHZ_URL": "http://127.0.0.1:9",
        "MORPHZ_TOKEN": "mz_nothing",
    }
    done = _run_chat(env)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("morphz chat: cannot reach Morphz at"), lines
