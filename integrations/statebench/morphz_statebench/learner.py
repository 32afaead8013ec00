"""Learning a domain's context from its train trajectories, over Morphz's REST API.

For each trajectory, in a fixed order: one `external_fact` event (the transcript as text, the
trajectory JSON as payload, an idempotency key), one evaluation (the tick moves by one), then
one transaction written by the learner: case frames citing the event, procedures derived from
cases (`supersedes` and `retire` where it generalises), revisions of existing procedures,
and the digested event retired. A rejected transaction goes back to the learner with the
server's errors, at most `retries` times. After 100 trajectories the context is at version
100 and tick 100; `freeze_with_manifest` freezes it and records what it was built from.

Two learners share one interface (`Learner`):
- `OfflineLearner`: deterministic, no model. A case per trajectory from its requests, tool
  calls and outcome; trajectories that used the same set of tools followed one workflow,
  and from the second such case on a procedure stands on them (derived, then revised), each
  case superseded by it and retired.
- `LLMLearner`: a model reads the compiled context and the transcript and writes the
  transaction in the text form (Morphz's protocol instructions as its system prompt).
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from morphz_client import MorphzAPIError, MorphzClient

from morphz_statebench.data import Dataset, Trajectory
from morphz_statebench.models import Model
from morphz_statebench.retrieval import request_words

CASE_REQUEST_CHARS = 600
CASE_OUTCOME_CHARS = 600
THREAD = "learn"


@dataclass
class Proposal:
    """One transaction: the JSON form (`ops`) or the text form (`text`)."""

    reason: str
    ops: list[dict[str, Any]] | None = None
    text: str | None = None
    cost_usd: float = 0.0


@dataclass
class Step:
    """What a learner sees for one trajectory."""

    trajectory: Trajectory
    index: int  # 0-based position in the fixed order
    event_ref: str
    evaluation: dict[str, Any]
    base_version: int
    errors: list[dict[str, Any]] = field(default_factory=list)  # the last rejection, if any


class Learner(Protocol):
    name: str

    def prepare(self, dataset: Dataset) -> None:
        """Called once before the first trajectory (the learner may read the whole set)."""

    def propose(self, step: Step) -> Proposal: ...

    def committed(self, step: Step, proposal: Proposal) -> None:
        """Called once the step's transaction committed (learners keep their own notes)."""


# -- the offline learner ---------------------------------------------------------------------


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _call_text(write: dict[str, Any]) -> str:
    args = ", ".join(
        f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in write["arguments"].items()
    )
    return f"{write['tool']}({args})" + ("" if write["ok"] else " refused")


def case_body(trajectory: Trajectory) -> dict[str, Any]:
    requests = trajectory.requests
    body: dict[str, Any] = {
        "kind": "case",
        "request": _clip(requests[0] if requests else "", CASE_REQUEST_CHARS),
    }
    if len(requests) > 1:
        body["follow_ups"] = [_clip(r, 300) for r in requests[1:6]]
    body["tools"] = trajectory.tools or ["none"]
    writes = [_call_text(w) for w in trajectory.writes]
    body["writes"] = writes or ["none: information only"]
    body["outcome"] = _clip(trajectory.outcome, CASE_OUTCOME_CHARS)
    return body


class OfflineLearner:
    """Deterministic, no model. A case per trajectory (its requests, tool calls in order,
    state changes, outcome). Procedures group cases:
    - `grouping="request"` (default): requests of one kind. A case joins the group of the
      most similar earlier case when their opening requests are close enough (cosine of
      idf-weighted words >= `threshold`; idf over the dataset's opening requests);
    - `grouping="workflow"`: the same set of state-changing tools;
    - `grouping="toolset"`: the same set of tools.
    From a group's second case on, a procedure stands on its cases (derived, then revised
    with each new one): the workflows they followed, the state changes they made, examples
    of the requests; it supersedes each case, which retires at once (R17)."""

    name = "offline"

    def __init__(self, grouping: str = "request", threshold: float = 0.3) -> None:
        if grouping not in ("request", "workflow", "toolset"):
            raise ValueError("grouping is request, workflow or toolset")
        self.grouping = grouping
        self.threshold = threshold
        self.idf: dict[str, float] = {}
        self.vectors: dict[str, dict[str, float]] = {}  # case id -> request vector
        self.group_of: dict[str, str] = {}  # case id -> group key
        self.procedures: dict[str, str] = {}  # group key -> procedure id
        self.members: dict[str, list[str]] = {}  # group key -> case ids
        self.requests: dict[str, str] = {}  # case id -> opening request
        self.sequences: dict[str, dict[str, int]] = {}  # group key -> tool sequences seen
        self.changes: dict[str, dict[str, int]] = {}  # group key -> state changes made

    def prepare(self, dataset: Dataset) -> None:
        docs = [
            set(request_words(t.requests[0] if t.requests else "")) for t in dataset.trajectories
        ]
        n = max(len(docs), 1)
        df: dict[str, int] = {}
        for doc in docs:
            for word in doc:
                df[word] = df.get(word, 0) + 1
        self.idf = {w: math.log(1 + (n - d + 0.5) / (d + 0.5)) for w, d in df.items()}

    def _vector(self, trajectory: Trajectory) -> dict[str, float]:
        words = set(request_words(trajectory.requests[0] if trajectory.requests else ""))
        weights = {w: self.idf.get(w, 1.0) for w in words}
        norm = math.sqrt(sum(x * x for x in weights.values())) or 1.0
        return {w: x / norm for w, x in weights.items()}

    def key(self, trajectory: Trajectory, case: str) -> str:
        if self.grouping == "workflow":
            return "+".join(trajectory.workflow)
        if self.grouping == "toolset":
            return "+".join(trajectory.toolset)
        vector = self._vector(trajectory)
        best, best_sim = None, 0.0
        for other, other_vector in self.vectors.items():  # in learning order: ties go first
            sim = sum(x * other_vector.get(w, 0.0) for w, x in vector.items())
            if sim > best_sim:
                best, best_sim = other, sim
        if best is not None and best_sim >= self.threshold:
            return self.group_of[best]
        return case

    @staticmethod
    def case_id(step: Step) -> str:
        return f"case-{step.index + 1:03d}"

    def propose(self, step: Step) -> Proposal:
        trajectory = step.trajectory
        case = self.case_id(step)
        body = case_body(trajectory)
        ops: list[dict[str, Any]] = [
            {"op": "derive", "id": case, "from": [step.event_ref], "body": body}
        ]
        group = self.key(trajectory, case)
        members = [*self.members.get(group, []), case]
        proc = self.procedures.get(group)
        if len(members) >= 2:
            proc_body = self._procedure_body(group, trajectory, members, body)
            if proc is None:
                proc = f"procedure-{len(self.procedures) + 1:02d}"
                ops.append({"op": "derive", "id": proc, "from": members, "body": proc_body})
                new_members = members
            else:
                ops.append({"op": "revise", "id": proc, "from": [case], "body": proc_body})
                new_members = [case]
            for member in new_members:
                ops.append(
                    {"op": "relate", "subject": proc, "name": "supersedes", "object": member}
                )
            ops.append({"op": "retire", "refs": new_members})
            reason = f"{case} is one more case of {proc} ({len(members)} cases)"
        else:
            reason = f"{case}: the first case of its kind"
        ops.append({"op": "retire", "refs": [step.event_ref]})  # digested into the case
        return Proposal(reason=reason, ops=ops)

    def committed(self, step: Step, proposal: Proposal) -> None:
        trajectory = step.trajectory
        case = self.case_id(step)
        group = self.key(trajectory, case)
        self.group_of[case] = group
        self.vectors[case] = self._vector(trajectory)
        steps = " -> ".join(trajectory.tools or ["none"])
        seen = self.sequences.setdefault(group, {})
        seen[steps] = seen.get(steps, 0) + 1
        changes = self.changes.setdefault(group, {})
        for tool in sorted({w["tool"] for w in trajectory.writes}) or ["none"]:
            changes[tool] = changes.get(tool, 0) + 1
        self.members.setdefault(group, []).append(case)
        if len(self.members[group]) >= 2 and group not in self.procedures:
            self.procedures[group] = f"procedure-{len(self.procedures) + 1:02d}"
        self.requests[case] = case_body(trajectory)["request"]

    def _procedure_body(
        self, group: str, trajectory: Trajectory, members: list[str], latest: dict[str, Any]
    ) -> dict[str, Any]:
        examples = [self.requests[m] for m in members[:-1] if m in self.requests][-2:]
        examples.append(latest["request"])
        seen = dict(self.sequences.get(group, {}))
        steps = " -> ".join(trajectory.tools or ["none"])
        seen[steps] = seen.get(steps, 0) + 1
        changes = dict(self.changes.get(group, {}))
        for tool in sorted({w["tool"] for w in trajectory.writes}) or ["none"]:
            changes[tool] = changes.get(tool, 0) + 1
        common = sorted(seen.items(), key=lambda item: (-item[1], item[0]))[:3]
        made = sorted(changes.items(), key=lambda item: (-item[1], item[0]))
        return {
            "kind": "procedure",
            "requests_like": [_clip(e, 160) for e in examples],
            "workflows": [f"{sequence} ({count}x)" for sequence, count in common],
            "state_changes": [f"{tool} ({count}x)" for tool, count in made],
            "cases": str(len(members)),
        }


# -- the LLM learner -------------------------------------------------------------------------

LLM_TASK = """You are building an agent's procedural memory from past customer-service
conversations of the {domain} domain. The conversation below arrived as {ref}. Write ONE
context transaction (the text form, `(context-tx ...)`, base version {base}) that:
- derives a case frame citing {ref} (its sources): what the user asked, the tools called in
  order, the state changes made or refused, the outcome, what mattered;
- where this case and earlier cases follow one method, derives a procedure frame from them
  (or revises the existing procedure with `from` this case), relates the procedure
  `supersedes` each case it generalises and retires those cases;
- retires {ref} once digested.
Frame ids: lower-case letters, digits and '-'. Answer with the transaction only.

THE ACTIVE CONTEXT (what memory holds now):
{context}

THE CONVERSATION {ref}:
{transcript}
"""


class LLMLearner:
    """A model writes each transaction; rejections go back to it."""

    name = "llm"

    def __init__(self, model: Model, instructions: str = "") -> None:
        self.model = model
        self.instructions = instructions

    def propose(self, step: Step) -> Proposal:
        prompt = LLM_TASK.format(
            domain=step.trajectory.domain,
            ref=step.event_ref,
            base=step.base_version,
            context=step.evaluation.get("text", ""),
            transcript=step.trajectory.transcript(),
        )
        messages: list[dict[str, str]] = []
        if self.instructions:
            messages.append({"role": "system", "content": self.instructions})
        messages.append({"role": "user", "content": prompt})
        if step.errors:
            messages.append(
                {
                    "role": "user",
                    "content": "Morphz rejected your transaction: "
                    + json.dumps(step.errors, ensure_ascii=False)
                    + "\nWrite a corrected transaction.",
                }
            )
        reply = self.model.complete(messages)
        text = extract_tx(reply.text)
        return Proposal(reason="llm", text=text, cost_usd=reply.cost_usd)

    def prepare(self, dataset: Dataset) -> None:
        return None

    def committed(self, step: Step, proposal: Proposal) -> None:
        return None


def extract_tx(text: str) -> str:
    """The first `(context-tx ...)` form in a model's text (the whole text, stripped, when none)."""
    start = text.find("(context-tx")
    if start < 0:
        return text.strip()
    depth = 0
    in_string = False
    escaped = False
    for i in range(start, len(text)):
        ch = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return text[start : i + 1]
    return text[start:]


# -- driving a learner over a dataset --------------------------------------------------------


@dataclass
class LearnReport:
    domain: str
    learner: str
    trajectories: int
    version: int
    tick: int
    seconds: float
    retries: int = 0
    fallbacks: int = 0  # transactions replaced by minimal_case
    cost_usd: float = 0.0
    case_frames: dict[str, str] = field(default_factory=dict)  # case id -> task id
    event_refs: dict[str, str] = field(default_factory=dict)  # event ref -> task id


def event_key(trajectory: Trajectory) -> str:
    return f"statebench:{trajectory.domain}:{trajectory.task_id}:{trajectory.sha256[:16]}"


def minimal_case(step: Step) -> Proposal:
    """The fallback when a learner's transaction is still rejected after its retries: one
    case citing the event, the event retired. Needs no state, so it always applies."""
    case = f"case-{step.index + 1:03d}-fallback"
    return Proposal(
        reason=f"{case}: the learner's transaction was rejected; kept as a plain case",
        ops=[
            {
                "op": "derive",
                "id": case,
                "from": [step.event_ref],
                "body": case_body(step.trajectory),
            },
            {"op": "retire", "refs": [step.event_ref]},
        ],
    )


def learn(
    client: MorphzClient,
    dataset: Dataset,
    learner: Learner,
    *,
    retries: int = 3,
) -> LearnReport:
    """Feed every trajectory of `dataset` to `learner` through `client`'s context.

    Resumable: a trajectory whose transaction already committed (the context's version is
    past its position) is replayed to the learner without writing anything. A transaction
    still rejected after `retries` corrections is replaced by `minimal_case` (counted in
    the report's `fallbacks`), so every trajectory moves the version by exactly one."""
    started = time.perf_counter()
    learner.prepare(dataset)
    report = LearnReport(dataset.domain, learner.name, len(dataset.trajectories), 0, 0, 0.0)
    version = int(client.context()["version"])
    for index, trajectory in enumerate(dataset.trajectories):
        payload = {
            "statebench": {
                "domain": trajectory.domain,
                "task_id": trajectory.task_id,
                "sha256": trajectory.sha256,
            },
            "conversation": trajectory.conversation,
        }
        (event,) = client.append_events(
            [
                {
                    "kind": "external_fact",
                    "content": trajectory.transcript(),
                    "payload": payload,
                    "thread": THREAD,
                    "idempotency_key": event_key(trajectory),
                }
            ]
        )
        report.event_refs[event["ref"]] = trajectory.task_id
        evaluation = client.evaluate(thread=THREAD, idempotency_key=f"{event_key(trajectory)}:eval")
        step = Step(trajectory, index, event["ref"], dict(evaluation), version)
        if version > index:  # committed by an earlier run: let the learner catch up
            proposal = learner.propose(step)
            learner.committed(step, proposal)
            _note_cases(report, proposal, trajectory)
            continue
        proposal, receipt = _commit_with_retries(client, learner, step, retries, report)
        if receipt is None:
            report.fallbacks += 1
            proposal = minimal_case(step)
            receipt = dict(
                client.submit(
                    ops=proposal.ops,
                    base_version=step.base_version,
                    reason=proposal.reason,
                    thread=THREAD,
                    evaluation=step.evaluation["id"],
                )
            )
        version = int(receipt["version"])
        _note_cases(report, proposal, trajectory)
    context = client.context()
    report.version = int(context["version"])
    report.tick = int(context["tick"])
    report.seconds = time.perf_counter() - started
    return report


def _note_cases(report: LearnReport, proposal: Proposal, trajectory: Trajectory) -> None:
    for op in proposal.ops or []:
        if op.get("op") == "derive" and op.get("body", {}).get("kind") == "case":
            report.case_frames[op["id"]] = trajectory.task_id


def _commit_with_retries(
    client: MorphzClient, learner: Learner, step: Step, retries: int, report: LearnReport
) -> tuple[Proposal, dict[str, Any] | None]:
    proposal = Proposal(reason="")
    for attempt in range(retries + 1):
        proposal = learner.propose(step)
        report.cost_usd += proposal.cost_usd
        try:
            if proposal.text is not None:
                receipt = client.submit(
                    proposal.text, thread=THREAD, evaluation=step.evaluation["id"]
                )
            else:
                receipt = client.submit(
                    ops=proposal.ops,
                    base_version=step.base_version,
                    reason=proposal.reason,
                    thread=THREAD,
                    evaluation=step.evaluation["id"],
                )
        except MorphzAPIError as exc:
            step.errors = [{"code": exc.code, "message": str(exc), "details": exc.details}]
            if attempt < retries:
                report.retries += 1
            continue
        learner.committed(step, proposal)
        return proposal, dict(receipt)
    return proposal, None


def digest(frames: list[dict[str, Any]]) -> str:
    """A fingerprint of a context's frames (id, revision, status, body, sources)."""
    canonical = [
        [f["id"], f["revision"], f["status"], f.get("body"), f.get("sources")]
        for f in sorted(frames, key=lambda f: f["id"])
    ]
    return hashlib.sha256(
        json.dumps(canonical, sort_keys=True, ensure_ascii=False).encode()
    ).hexdigest()


def all_frames(client: MorphzClient) -> list[dict[str, Any]]:
    frames: list[dict[str, Any]] = []
    cursor = None
    while True:
        page = client.frames(cursor=cursor, limit=200)
        frames.extend(page["frames"])  # type: ignore[arg-type]
        cursor = page.get("next_cursor")
        if not cursor:
            return frames
