"""Scripted runs: train tasks replayed through the benchmark's real orchestrator, offline.

The scripted model replays a recorded train trajectory's assistant turns (its tool calls,
then its reply text) through the Morphz agent, and the scripted user replays the recorded
user messages; STATE-Bench's orchestrator executes the tools in the task's real environment.
The recorded tool results must come back identical: the agent, its fork and the harness
changed nothing in what the tools saw. Runs in the benchmark's environment (Python 3.12).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from morphz_statebench.data import trajectories_dir
from morphz_statebench.models import ModelReply, ScriptedModel


class ScriptedUser:
    """The simulator's client: answers with the recorded user messages after the opening."""

    def __init__(self, conversation: list[dict[str, Any]]) -> None:
        self.replies = [
            str(m.get("content") or "") for m in conversation if m.get("role") == "user"
        ][1:]

    def complete_chat(self, messages: list[dict[str, str]], **_: Any) -> str:
        return self.replies.pop(0) if self.replies else "[TASK_DONE]"


def replay_script(conversation: list[dict[str, Any]]) -> ScriptedModel:
    """A model that answers turn k with the recorded assistant message k: its tool calls
    first, then (once their results are in) its text."""
    turns = [m for m in conversation if m.get("role") == "assistant"]

    def script(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> ModelReply:
        turn = sum(1 for m in messages if m.get("role") == "user") - 1
        recorded = turns[min(turn, len(turns) - 1)]
        calls = recorded.get("tool_calls") or []
        if calls and messages[-1].get("role") != "tool":
            return ModelReply(
                tool_calls=[
                    {"name": c["name"], "arguments": c.get("arguments") or {}} for c in calls
                ]
            )
        return ModelReply(text=str(recorded.get("content") or ""))

    return ScriptedModel(script=script)


@dataclass
class ScriptedResult:
    task_id: str
    path: Path
    tool_calls: int
    mismatches: list[str] = field(default_factory=list)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def run_scripted(
    statebench_dir: Path,
    domain: str,
    task_ids: list[str],
    out: Path,
    *,
    agent: str = "full",
) -> list[ScriptedResult]:
    from state_bench.domain import get_domain_config
    from state_bench.env_loader import load_task_environment
    from state_bench.orchestrator import run_task
    from state_bench.paths import domain_tasks_dir
    from state_bench.schemas import TaskDefinition

    from morphz_statebench.agents import MorphzAgent, MorphzModelClient

    if agent != "full":
        raise ValueError("scripted runs drive the full agent")
    config = get_domain_config(domain)
    recorded_dir = trajectories_dir(statebench_dir) / domain
    results = []
    for task_id in task_ids:
        task = TaskDefinition.load(domain_tasks_dir(domain) / f"{task_id}.json")
        env_data, _ = load_task_environment(config, task)
        recorded = json.loads((recorded_dir / f"{task_id}.json").read_text())["conversation"]
        trajectory = run_task(
            task,
            env_data,
            task.user_id,
            MorphzModelClient(replay_script(recorded)),
            domain=config,
            simulator_client=ScriptedUser(recorded),
            agent_class=MorphzAgent,
            trajectory_metadata={"agent_name": "MorphzAgent", "scripted": True},
        )
        path = out / "run1" / f"{task_id}.json"
        trajectory.save(path)
        want = [
            c for m in recorded if m.get("role") == "assistant" for c in m.get("tool_calls") or []
        ]
        got = [
            c
            for m in trajectory.conversation
            if m.get("role") == "assistant"
            for c in m.get("tool_calls") or []
        ]
        result = ScriptedResult(task_id, path, len(got))
        if len(want) != len(got):
            result.mismatches.append(f"{len(got)} tool calls, recorded {len(want)}")
        for i, (w, g) in enumerate(zip(want, got, strict=False)):
            if w["name"] != g["name"] or _canonical(w.get("result")) != _canonical(g.get("result")):
                result.mismatches.append(f"call {i} {w['name']}: result differs from the recording")
        results.append(result)
    return results


def check_retrieve_agent(domain: str, query: str, top_k: int = 3) -> list[str]:
    """Build the retrieve agent as run_batch would (the built-in client, never called here:
    its key is a placeholder) and call `retrieve_learnings` through the benchmark's own tool
    handler, which enforces `top_k` and `list[str]`."""
    import os

    from state_bench.agents.base import AgentRuntimeContext
    from state_bench.client import LLMClient
    from state_bench.domain import get_domain_config

    from morphz_statebench.agents import MorphzRetrieveAgent

    os.environ.setdefault("MORPHZ_STATEBENCH_PLACEHOLDER_KEY", "not-used")
    config = get_domain_config(domain)
    agent = MorphzRetrieveAgent(
        LLMClient(
            provider="openai",
            deployment="scripted",
            api_key_var="MORPHZ_STATEBENCH_PLACEHOLDER_KEY",
        ),
        "system",
        config.tool_schemas,
        {},
        runtime_context=AgentRuntimeContext(task_id="check", user_id="u", domain=domain, now=""),
        retrieve_learnings_top_k=top_k,
    )
    answer = agent.tool_handlers["retrieve_learnings"]({"query": query, "top_k": 10})
    learnings: list[str] = answer["learnings"]
    return learnings
