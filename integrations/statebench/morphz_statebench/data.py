"""STATE-Bench train trajectories as the learners read them.

A trajectory file is `{"conversation": [...]}`: messages with `role` (system, user,
assistant) and `content`; an assistant message may carry `tool_calls: [{name, arguments,
result}]`. Only the conversation is read: never a task's summary, requirements or type
(the benchmark's maintainers reject learning from those).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DOMAINS = ("travel", "customer_support", "shopping_assistant")
# Tools that only read: everything else changes the environment's state.
READ_TOOL = re.compile(r"^(get|search|check|validate|list|lookup|find)_")
MAX_RESULT_CHARS = 1500


@dataclass(frozen=True)
class Trajectory:
    domain: str
    task_id: str
    path: Path
    sha256: str
    conversation: list[dict[str, Any]]

    @property
    def requests(self) -> list[str]:
        """What the user said, in order (the first is the opening request)."""
        return [str(m.get("content") or "") for m in self.conversation if m.get("role") == "user"]

    @property
    def tool_calls(self) -> list[dict[str, Any]]:
        return [
            call
            for m in self.conversation
            if m.get("role") == "assistant"
            for call in (m.get("tool_calls") or [])
        ]

    @property
    def tools(self) -> list[str]:
        """Tool names in call order, consecutive repeats folded."""
        out: list[str] = []
        for call in self.tool_calls:
            name = str(call.get("name"))
            if not out or out[-1] != name:
                out.append(name)
        return out

    @property
    def writes(self) -> list[dict[str, Any]]:
        """The state-changing calls with their arguments and whether they succeeded."""
        out = []
        for call in self.tool_calls:
            name = str(call.get("name"))
            if READ_TOOL.match(name):
                continue
            result = call.get("result")
            failed = isinstance(result, dict) and bool(result.get("error"))
            out.append({"tool": name, "arguments": call.get("arguments") or {}, "ok": not failed})
        return out

    @property
    def workflow(self) -> tuple[str, ...]:
        """The state-changing tools used (as a set): trajectories that changed the same kinds
        of state followed one workflow; ("read-only",) when nothing was changed."""
        return tuple(sorted({w["tool"] for w in self.writes})) or ("read-only",)

    @property
    def toolset(self) -> tuple[str, ...]:
        """Every tool used, as a set (a finer grouping than `workflow`)."""
        return tuple(sorted({str(c.get("name")) for c in self.tool_calls})) or ("no-tools",)

    @property
    def outcome(self) -> str:
        """The agent's last reply."""
        for message in reversed(self.conversation):
            if message.get("role") == "assistant" and message.get("content"):
                return str(message["content"])
        return ""

    def transcript(self) -> str:
        """The conversation as plain text (tool results cut to MAX_RESULT_CHARS each)."""
        lines: list[str] = []
        for message in self.conversation:
            role = str(message.get("role"))
            if role == "system":
                continue
            for call in message.get("tool_calls") or []:
                args = json.dumps(call.get("arguments") or {}, ensure_ascii=False, sort_keys=True)
                result = json.dumps(call.get("result"), ensure_ascii=False, sort_keys=True)
                if len(result) > MAX_RESULT_CHARS:
                    result = result[:MAX_RESULT_CHARS] + " …"
                lines.append(f"TOOL {call.get('name')}({args}) -> {result}")
            content = str(message.get("content") or "").strip()
            if content:
                lines.append(f"{role.upper()}: {content}")
        return "\n".join(lines)


@dataclass
class Dataset:
    """The train trajectories of one domain, in a fixed order (by task number, then id)."""

    domain: str
    trajectories: list[Trajectory] = field(default_factory=list)

    @property
    def input_hashes(self) -> dict[str, str]:
        return {t.task_id: t.sha256 for t in self.trajectories}


def _order(path: Path) -> tuple[int, str]:
    head = path.stem.split("-", 1)[0]
    return (int(head) if head.isdigit() else 1 << 30, path.stem)


def trajectories_dir(root: Path) -> Path:
    """Where the train trajectories are under a STATE-Bench checkout or a data folder."""
    for candidate in (
        root / "datasets" / "train_task_trajectories",
        root / "train_trajectories",
        root,
    ):
        if candidate.is_dir() and any((candidate / d).is_dir() for d in DOMAINS):
            return candidate
    raise FileNotFoundError(f"no STATE-Bench train trajectories under {root}")


def load_domain(root: Path, domain: str, limit: int | None = None) -> Dataset:
    if domain not in DOMAINS:
        raise ValueError(f"unknown domain {domain!r}; one of {', '.join(DOMAINS)}")
    folder = trajectories_dir(root) / domain
    files = sorted(folder.glob("*.json"), key=_order)
    if limit is not None:
        files = files[:limit]
    dataset = Dataset(domain)
    for path in files:
        raw = path.read_bytes()
        data = json.loads(raw)
        dataset.trajectories.append(
            Trajectory(
                domain=domain,
                task_id=path.stem,
                path=path,
                sha256=hashlib.sha256(raw).hexdigest(),
                conversation=list(data["conversation"]),
            )
        )
    return dataset


def parse_domains(value: str) -> list[str]:
    if value == "all":
        return list(DOMAINS)
    names = [part.strip() for part in value.split(",") if part.strip()]
    for name in names:
        if name not in DOMAINS:
            raise ValueError(f"unknown domain {name!r}; one of {', '.join(DOMAINS)} or all")
    return names
