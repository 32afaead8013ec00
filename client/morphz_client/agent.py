"""A memory agent loop: the model changes its own memory in the same reply in which it acts.

How it works: docs/internals.md, section `client/morphz_client/agent.py`."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from morphz_protocol import TOOLS

from morphz_client.client import MorphzClient
from morphz_client.errors import prompt_text

__all__ = [
    "ChatModel",
    "MemoryAgent",
    "ModelReply",
    "ModelRequest",
    "ScriptedModel",
    "Step",
    "Tool",
    "ToolCall",
    "TurnResult",
    "build_prompt",
]


@dataclass
class ToolCall:
    """One tool call of a model reply: the provider's call `id`, the tool `name` and its
    decoded `arguments`."""

    id: str
    name: str
    arguments: dict[str, Any]


@dataclass
class ModelReply:
    """What a model returned: text and tool calls, provider-neutral."""

    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    raw: Any = None


@dataclass
class ModelRequest:
    """One model call: `system` (the instructions), `prompt` (compiled context and the
    outcome of the previous reply) and `tools` (neutral: name, description, parameters)."""

    system: str
    prompt: str
    tools: list[dict[str, Any]]
    step: int = 0
    evaluation: dict[str, Any] = field(default_factory=dict)


class ChatModel(Protocol):
    """What the agent loop needs of a model: one stateless call per step."""

    def complete(self, request: ModelRequest) -> ModelReply:
        """Answer one request: the reply's text and tool calls."""
        ...


class ScriptedModel:
    """A deterministic model: `policy(request) -> ModelReply`. Records every request."""

    def __init__(self, policy: Callable[[ModelRequest], ModelReply]) -> None:
        self.policy = policy
        self.requests: list[ModelRequest] = []

    def complete(self, request: ModelRequest) -> ModelReply:
        """Record the request and answer it with the policy."""
        self.requests.append(request)
        return self.policy(request)


@dataclass
class Tool:
    """An external tool the model may call; `handler(arguments)` runs it and returns its
    result (text, or anything JSON-able)."""

    name: str
    description: str
    parameters: dict[str, Any]
    handler: Callable[[dict[str, Any]], Any]

    def definition(self) -> dict[str, Any]:
        """The tool as the model sees it: `{name, description, parameters}` (JSON Schema)."""
        return {"name": self.name, "description": self.description, "parameters": self.parameters}


@dataclass
class Step:
    """One step of a turn: the evaluation the model read, its reply, the outcome of taking the
    reply apart (transactions, reads, actions, message, feedback) and the results of the
    external tools it ran."""

    evaluation: dict[str, Any]
    reply: ModelReply
    outcome: dict[str, Any]
    tool_results: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class TurnResult:
    """`status`: `answered`, `max_steps` or `rejected` (retries used up); `answer`: what the
    user is shown, the reply's text without transaction forms or `(delivers …)` markers."""

    status: str
    answer: str
    steps: list[Step]


FEEDBACK_HEADING = "## outcome of your previous reply"


def build_prompt(compiled_text: str, feedback: str | None) -> str:
    """The user text of a model call: the compiled context, then the previous outcome."""
    if not feedback:
        return compiled_text
    return f"{compiled_text.rstrip()}\n\n{FEEDBACK_HEADING}\n{feedback}\n"


_STATE_VERSION_RE = re.compile(r"· version (\d+) ·")


def state_version(prompt: str) -> int | None:
    """The version on the compiled context's state line (what base-version should say)."""
    match = _STATE_VERSION_RE.search(prompt)
    return int(match.group(1)) if match else None


def _result_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


class MemoryAgent:
    """The loop of the module docstring, on one context and thread."""

    def __init__(
        self,
        mz: MorphzClient,
        model: ChatModel,
        *,
        tools: Sequence[Tool] = (),
        thread: str | None = None,
        max_steps: int = 8,
        max_retries: int = 2,
        instructions: str | None = None,
    ) -> None:
        self.mz = mz
        self.model = model
        taken = {tool["name"] for tool in TOOLS}
        clashes = sorted(tool.name for tool in tools if tool.name in taken)
        if clashes:
            raise ValueError(f"tool names reserved for memory tools: {', '.join(clashes)}")
        self.tools = {tool.name: tool for tool in tools}
        self.thread = thread
        self.max_steps = max_steps
        self.max_retries = max_retries
        self._instructions = instructions

    @property
    def instructions(self) -> str:
        """The model protocol's instructions for this context (asked of the server once, unless
        given when the agent was made)."""
        if self._instructions is None:
            self._instructions = str(self.mz.protocol()["instructions"])
        return self._instructions

    def tool_definitions(self) -> list[dict[str, Any]]:
        """The tools offered to the model: the memory tools, then the external ones."""
        return [*TOOLS, *(tool.definition() for tool in self.tools.values())]

    def run(self, user_message: str | None = None, *, kind: str = "user_message") -> TurnResult:
        """One turn: append the input (if any), then step until the model answers."""
        if user_message is not None:
            self.mz.append_event(kind, user_message, thread=self.thread)  # type: ignore[arg-type]
        steps: list[Step] = []
        feedback: str | None = None
        retries = 0
        for number in range(self.max_steps):
            evaluation = self.mz.evaluate(thread=self.thread)
            request = ModelRequest(
                system=self.instructions,
                prompt=build_prompt(prompt_text(evaluation), feedback),
                tools=self.tool_definitions(),
                step=number,
                evaluation=dict(evaluation),
            )
            reply = self.model.complete(request)
            outcome = self.mz.take_apart(
                reply.text,
                [
                    {"id": call.id, "name": call.name, "arguments": call.arguments}
                    for call in reply.tool_calls
                ],
                thread=self.thread,
                evaluation=evaluation["id"],
                tools=list(self.tools),
            )
            step = Step(dict(evaluation), reply, outcome)
            steps.append(step)
            step.tool_results = self._run_actions(outcome)
            feedback = outcome["feedback"]
            rejected = any(t["status"] != "committed" for t in outcome["transactions"])
            said = _said(outcome)
            if rejected:
                retries += 1
                if retries > self.max_retries:
                    return TurnResult("rejected", said, steps)
                continue
            busy = outcome["actions"] or outcome["reads"]
            if not busy and said.strip():
                return TurnResult("answered", said, steps)
        return TurnResult("max_steps", _said(steps[-1].outcome) if steps else "", steps)

    def _run_actions(self, outcome: dict[str, Any]) -> list[dict[str, Any]]:
        """Run each registered action and append its result, delivering the action."""
        results = []
        for action in outcome["actions"]:
            if action["status"] != "registered":
                continue
            tool = self.tools.get(action["name"])
            if tool is None:
                content = f"error: no tool named {action['name']!r} is available"
            else:
                try:
                    content = _result_text(tool.handler(action["arguments"]))
                except Exception as exc:  # a failing tool is a result the model must see
                    content = f"error: {type(exc).__name__}: {exc}"
            event = self.mz.append_event(
                "tool_result",
                content,
                payload={"tool_call_id": action["tool_call_id"], "name": action["name"]},
                thread=self.thread,
                delivers=[action["ref"]],
            )
            results.append({"action": action["ref"], "ref": event["ref"], "content": content})
        return results


def _said(outcome: dict[str, Any]) -> str:
    """What the user is shown of a reply: its text without transaction forms or
    `(delivers …)` markers, as the server recorded it (or would have, when withheld)."""
    message = outcome.get("message")
    return str(message.get("text") or "") if message else ""
