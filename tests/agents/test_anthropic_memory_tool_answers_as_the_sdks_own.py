"""R67: `MorphzMemoryTool` answers every `memory_20250818` command as the `anthropic` SDK's own
local filesystem memory tool does (the same strings, the same error strings), and refuses
paths that leave `/memories`."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from anthropic.lib.tools import ToolError
from anthropic.lib.tools._beta_builtin_memory_tool import BetaLocalFilesystemMemoryTool

COMMANDS: list[dict[str, Any]] = [
    {"command": "view", "path": "/memories"},
    {"command": "view", "path": "/memories/none.md"},
    {"command": "create", "path": "/memories/notes.md", "file_text": "alpha\nbeta\ngamma\n"},
    {"command": "create", "path": "/memories/notes.md", "file_text": "again"},
    {"command": "create", "path": "/memories/people/ada.md", "file_text": "Ada: likes tea\n"},
    {"command": "create", "path": "/memories/people/team/bob.md", "file_text": "Bob\n"},
    {"command": "create", "path": "/memories/people/team/deep/x.md", "file_text": "x"},
    {"command": "create", "path": "/memories/.hidden.md", "file_text": "secret"},
    {"command": "create", "path": "/memories/unicode.md", "file_text": "测试 ✓\n"},
    {"command": "view", "path": "/memories"},
    {"command": "view", "path": "/memories/people"},
    {"command": "view", "path": "/memories/notes.md"},
    {"command": "view", "path": "/memories/notes.md", "view_range": [2, 3]},
    {"command": "view", "path": "/memories/notes.md", "view_range": [2, -1]},
    {"command": "view", "path": "/memories/./people/../notes.md"},
    {"command": "str_replace", "path": "/memories/notes.md", "old_str": "beta", "new_str": "B"},
    {"command": "str_replace", "path": "/memories/notes.md", "old_str": "zeta", "new_str": "Z"},
    {"command": "str_replace", "path": "/memories/notes.md", "old_str": "a", "new_str": "A"},
    {"command": "str_replace", "path": "/memories/people", "old_str": "a", "new_str": "A"},
    {"command": "str_replace", "path": "/memories/no.md", "old_str": "a", "new_str": "A"},
    {"command": "insert", "path": "/memories/notes.md", "insert_line": 0, "insert_text": "top"},
    {"command": "insert", "path": "/memories/notes.md", "insert_line": 4, "insert_text": "end\n"},
    {"command": "insert", "path": "/memories/notes.md", "insert_line": 9, "insert_text": "x"},
    {"command": "insert", "path": "/memories/no.md", "insert_line": 0, "insert_text": "x"},
    {"command": "view", "path": "/memories/notes.md"},
    {"command": "rename", "old_path": "/memories/notes.md", "new_path": "/memories/n2.md"},
    {"command": "rename", "old_path": "/memories/n2.md", "new_path": "/memories/unicode.md"},
    {"command": "rename", "old_path": "/memories/gone.md", "new_path": "/memories/g2.md"},
    {"command": "rename", "old_path": "/memories", "new_path": "/memories/x"},
    {"command": "rename", "old_path": "/memories/people", "new_path": "/memories/folks"},
    {"command": "view", "path": "/memories/folks/team/bob.md"},
    {"command": "view", "path": "/memories/people"},
    {"command": "view", "path": "/memories/n2.md"},
    {"command": "delete", "path": "/memories/n2.md"},
    {"command": "delete", "path": "/memories/n2.md"},
    {"command": "view", "path": "/memories/n2.md"},
    {"command": "create", "path": "/memories/n2.md", "file_text": "back again"},
    {"command": "view", "path": "/memories/n2.md"},
    {"command": "delete", "path": "/memories/folks"},
    {"command": "view", "path": "/memories/folks/ada.md"},
    {"command": "delete", "path": "/memories"},
    {"command": "view", "path": "/memories/../secrets"},
    {"command": "create", "path": "/memories/../../etc/x", "file_text": "x"},
    {"command": "view", "path": "/etc/passwd"},
    {"command": "rename", "old_path": "/memories/n2.md", "new_path": "/memories/../n2.md"},
    {"command": "view", "path": "/memories"},
]


def answer(tool: Any, command: dict[str, Any]) -> tuple[str, str]:
    try:
        return "ok", str(tool.call(command))
    except ToolError as exc:
        return "error", str(exc.content)


def dir_sizes_blind(text: str) -> str:
    lines = text.split("\n")
    if lines[0].startswith("Here're the files and directories"):
        lines[1] = "DIR\t" + lines[1].split("\t", 1)[1]
        lines = [re.sub(r"^[0-9.]+[BKMG](\t.*/)$", r"DIR\1", line) for line in lines]
    return "\n".join(lines)


def test_every_command_answers_as_the_sdks_own(make_client: Any, tmp_path: Path) -> None:
    from morphz_client.anthropic_memory import MorphzMemoryTool

    reference = BetaLocalFilesystemMemoryTool(base_path=str(tmp_path))
    ours = MorphzMemoryTool(make_client("anthropic-memory"))
    answers: list[tuple[str, str]] = []
    for command in COMMANDS:
        theirs_kind, theirs = answer(reference, command)
        our_kind, our = answer(ours, command)
        assert (our_kind, dir_sizes_blind(our)) == (theirs_kind, dir_sizes_blind(theirs)), command
        answers.append((our_kind, our))
    # Not only errors: the listings and edits were real.
    assert answers[9][1].split("\n")[2:] == [
        "17B\t/memories/notes.md",
        "20B\t/memories/people/",
        "15B\t/memories/people/ada.md",
        "5B\t/memories/people/team/",
        "11B\t/memories/unicode.md",
    ]
    assert answers[24][1].endswith("     4\tgamma\n     5\tend\n     6\t")


def test_paths_outside_memories_are_refused(make_client: Any) -> None:
    from morphz_client.anthropic_memory import MorphzMemoryTool

    mz = make_client("anthropic-paths")
    tool = MorphzMemoryTool(mz)
    for path, message in [
        ("/memories/../x", "Path /memories/../x would escape /memories directory"),
        ("/memories/a/../../x", "Path /memories/a/../../x would escape /memories directory"),
        ("/memoriesX/a", "Path must start with /memories, got: /memoriesX/a"),
        ("memories/a", "Path must start with /memories, got: memories/a"),
        ("/tmp/a", "Path must start with /memories, got: /tmp/a"),
    ]:
        kind, text = answer(tool, {"command": "create", "path": path, "file_text": "x"})
        assert (kind, text) == ("error", message)
    assert mz.frames()["frames"] == []  # nothing was written


def test_files_are_frames_with_history(make_client: Any) -> None:
    from morphz_client.anthropic_memory import MorphzMemoryTool, frame_id_of_path

    mz = make_client("anthropic-frames")
    tool = MorphzMemoryTool(mz)
    tool.call({"command": "create", "path": "/memories/a.md", "file_text": "one\n"})
    tool.call(
        {"command": "str_replace", "path": "/memories/a.md", "old_str": "one", "new_str": "2"}
    )
    frame = mz.frame(frame_id_of_path("/memories/a.md"))
    assert frame["body"] == {"store": "memory_tool", "path": "/memories/a.md", "text": "2\n"}
    assert [r["body"]["text"] for r in frame["revisions"]] == ["one\n", "2\n"]
    assert frame_id_of_path("/memories/A.md") != frame_id_of_path("/memories/a.md")
