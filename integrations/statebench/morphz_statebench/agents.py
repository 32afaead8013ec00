"""Morphz agents for STATE-Bench's `--agent-class` (import in the benchmark's environment).

- `MorphzRetrieveAgent` (a `StateBenchAgent`): `retrieve_learnings(query, top_k)` searches
  the domain's frozen learned context and returns `top_k` rendered learnings. Read-only.
- `MorphzAgent` (a `BaseAgent`, with `MorphzModelClient` as `--agent-client-class`): each
  task forks the domain's learned context at its frozen version; the task's messages and
  tool results enter the fork as events (bulk append), every model call is an evaluation
  whose compiled text (the learned procedures among it) goes into the model input, the model
  may write transactions while it works (a `(context-tx ...)` in its reply commits in the
  fork), and `ingest_trajectory` records the fork, its base version and every evaluation.

Both read `contexts.json` from `MORPHZ_STATEBENCH_WORKDIR` (see `manifest.py`). Neither
reads the runtime context's task summary or requirements: only `domain` and `task_id`.
"""

from __future__ import annotations

import hashlib
import json
import threading
from typing import Any

from morphz_client import MorphzAPIError, MorphzClient
from state_bench.agents.base import AgentRuntimeContext, AgentTurnResponse, BaseAgent
from state_bench.agents.state_bench import StateBenchAgent
from state_bench.client import BaseLLMClient

from morphz_statebench.learner import extract_tx
from morphz_statebench.manifest import LearnedContext, fork, load_contexts
from morphz_statebench.models import Model, ModelReply, chat_messages, model_from_env
from morphz_statebench.retrieval import Retriever

THREAD = "task"
_lock = threading.Lock()
_cache: dict[str, LearnedContext] = {}


def learned_context(domain: str) -> LearnedContext:
    with _lock:
        if not _cache:
            _cache.update(load_contexts())
        if domain not in _cache:
            raise RuntimeError(
                f"no learned Morphz context for {domain!r}: run `python -m morphz_statebench "
                "learn` first (or set MORPHZ_STATEBENCH_WORKDIR)"
            )
        return _cache[domain]


def _domain(runtime_context: AgentRuntimeContext | None) -> str:
    if runtime_context is None:
        raise RuntimeError("Morphz agents need the runtime context's domain")
    return runtime_context.domain


class MorphzRetrieveAgent(StateBenchAgent):
    """The built-in agent with Morphz as its `retrieve_learnings`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.learned = learned_context(_domain(self.runtime_context))
        self.retriever = Retriever(self.learned.client())
        self.retrieved: list[dict[str, Any]] = []

    def retrieve_learnings(self, query: str, top_k: int = 3) -> list[str]:
        learnings = self.retriever.retrieve(query, top_k)
        self.retrieved.append({"query": query, "frames": [item.frame_id for item in learnings]})
        return [item.text for item in learnings]

    def ingest_trajectory(self, trajectory: Any) -> None:
        trajectory.metadata["morphz"] = {
            "agent": "retrieve",
            "domain": self.learned.domain,
            "learned": {"slug": self.learned.slug, "version": self.learned.manifest.version},
            "retrievals": self.retrieved,
        }


class MorphzModelClient(BaseLLMClient):
    """`--agent-client-class` for `MorphzAgent`: the model from the environment (see
    models.py), or any `Model` given in code (tests pass a scripted one)."""

    def __init__(self, model: Model | None = None) -> None:
        self.model = model

    @classmethod
    def from_env(cls) -> MorphzModelClient:
        return cls(model_from_env())

    def complete(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
    ) -> ModelReply:
        if self.model is None:
            raise RuntimeError("MorphzModelClient has no model")
        return self.model.complete(messages, tools)


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


class MorphzAgent(BaseAgent):
    """Each task in its own fork of the learned context; every model call an evaluation."""

    def __init__(
        self,
        client: Any,
        system_prompt: str,
        tools: list[dict[str, Any]],
        tool_handlers: dict[str, Any],
        runtime_context: AgentRuntimeContext | None = None,
        retrieve_learnings_top_k: int = 3,
        **_: Any,
    ) -> None:
        super().__init__(runtime_context=runtime_context)
        if not hasattr(client, "complete"):
            raise TypeError("MorphzAgent needs --agent-client-class MorphzModelClient")
        self.model = client
        self.top_k = retrieve_learnings_top_k
        self.learned = learned_context(_domain(runtime_context))
        task = runtime_context.task_id if runtime_context else "task"
        with self.learned.client() as source:
            self.fork = fork(source, self.learned.manifest.version)
        self.mz = MorphzClient(self.learned.url, self.fork["token"], context=self.fork["slug"])
        self.task_id = task
        self.retriever = Retriever(self.mz)
        self.users = 0  # user messages appended so far
        self.results = 0  # tool results appended so far
        self.evaluations: list[dict[str, Any]] = []
        self.learnings_text: str | None = None
        self.open_requests: list[str] = []
        self.transactions: list[dict[str, Any]] = []
        self.learned_ids = set(self.learned.manifest.frames)

    # -- the conversation into the fork ------------------------------------------------

    def _new_events(self, conversation: list[dict[str, Any]]) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = []
        users = results = 0
        for item in conversation:
            role = item.get("role")
            if role == "user":
                users += 1
                if users > self.users:
                    events.append(
                        {
                            "kind": "user_message",
                            "content": str(item.get("content") or ""),
                            "thread": THREAD,
                            "idempotency_key": f"{self.task_id}:user:{users}",
                        }
                    )
            elif role == "assistant":
                for call in item.get("tool_calls") or []:
                    results += 1
                    if results > self.results:
                        events.append(
                            {
                                "kind": "tool_result",
                                "content": json.dumps(call.get("result"), ensure_ascii=False),
                                "payload": {
                                    "tool": call.get("name"),
                                    "arguments": call.get("arguments"),
                                },
                                "thread": THREAD,
                                "idempotency_key": f"{self.task_id}:tool:{results}",
                            }
                        )
        self.users, self.results = max(users, self.users), max(results, self.results)
        return events

    def _opening(self, conversation: list[dict[str, Any]]) -> str:
        return next(
            (str(i.get("content") or "") for i in conversation if i.get("role") == "user"), ""
        )

    def generate_next_turn(
        self,
        *,
        system_prompt: str,
        conversation: list[dict[str, Any]],
        tools: list[dict[str, Any]],
    ) -> AgentTurnResponse:
        events = self._new_events(conversation)
        if events:
            for item in self.mz.append_events(events):  # type: ignore[arg-type]
                if item["kind"] == "user_message":
                    self.open_requests.append(item["ref"])
        evaluation: dict[str, Any] = dict(self.mz.evaluate(thread=THREAD))
        memory = str(evaluation.get("text") or "")
        if self.learnings_text is None:
            found = self.retriever.retrieve(self._opening(conversation), self.top_k)
            self.learnings_text = "\n\n".join(item.text for item in found)
            retrieved = [item.frame_id for item in found]
        else:
            retrieved = []
        system = (
            f"{system_prompt}\n\n# Memory (Morphz: procedures learned from past tasks, then "
            f"this task's observations)\n{memory}\n\n# Relevant past cases\n{self.learnings_text}"
        )
        frames = [f.get("id") for f in (evaluation.get("context") or {}).get("frames") or []]
        self.evaluations.append(
            {
                "id": evaluation["id"],
                "text_sha256": _sha(memory),
                "learned_frames": sorted(f for f in frames if f in self.learned_ids),
                "retrieved": retrieved,
                "system_sha256": _sha(system),
            }
        )
        reply: ModelReply = self.model.complete(chat_messages(system, conversation), tools)
        self.add_token_usage(input_tokens=reply.input_tokens, output_tokens=reply.output_tokens)
        if reply.cost_usd:
            self.add_cost_usd(reply.cost_usd)
        text = reply.text
        if "(context-tx" in text:
            tx = extract_tx(text)
            text = text.replace(tx, "").strip()
            try:
                receipt = self.mz.submit(tx, thread=THREAD, evaluation=int(evaluation["id"]))
                self.transactions.append({"version": receipt["version"]})
            except MorphzAPIError as exc:
                self.transactions.append({"rejected": exc.code})
        if not reply.tool_calls and text:
            # the reply answers the user's open requests (R3)
            self.mz.append_events(
                [
                    {
                        "kind": "agent_message",
                        "content": text,
                        "thread": THREAD,
                        "delivers": self.open_requests,
                    }
                ]
            )
            self.open_requests = []
        return AgentTurnResponse(text=text, tool_calls=list(reply.tool_calls))

    def ingest_trajectory(self, trajectory: Any) -> None:
        trajectory.metadata["morphz"] = {
            "agent": "full",
            "domain": self.learned.domain,
            "learned": {
                "slug": self.learned.slug,
                "version": self.learned.manifest.version,
                "frames_digest": self.learned.manifest.frames_digest,
            },
            "fork": {
                "slug": self.fork["slug"],
                "token": self.fork["token"],
                "forked_from": self.fork.get("forked_from"),
            },
            "evaluations": self.evaluations,
            "transactions": self.transactions,
        }
        self.mz.close()
