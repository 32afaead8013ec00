"""Anthropic's client-side memory tool (`memory_20250818`) on Morphz frames (R67):
`MorphzMemoryTool(client)`, a `BetaAbstractMemoryTool` of the `anthropic` SDK.

How it works: docs/internals.md, section `client/morphz_client/anthropic_memory.py`."""

from __future__ import annotations

import hashlib
import posixpath
import re
from typing import Any

from anthropic.lib.tools import BetaAbstractMemoryTool, ToolError
from anthropic.types.beta import (
    BetaMemoryTool20250818CreateCommand,
    BetaMemoryTool20250818DeleteCommand,
    BetaMemoryTool20250818InsertCommand,
    BetaMemoryTool20250818RenameCommand,
    BetaMemoryTool20250818StrReplaceCommand,
    BetaMemoryTool20250818ViewCommand,
)

from morphz_client.client import MorphzClient
from morphz_client.errors import MorphzAPIError, NotFoundError

__all__ = ["MorphzMemoryTool", "frame_id_of_path"]

ROOT = "/memories"
STORE_MARK = "memory_tool"
_PREFIX = "mem-"
_NOT_ID = re.compile(r"[^a-z0-9_-]+")
_LINE_WIDTH = 6  # the tool's line numbers are right-aligned in six columns
_MAX_LINES = 999_999


def frame_id_of_path(path: str) -> str:
    """The frame id of the file at checked path `path` (stable; one per path)."""
    digest = hashlib.sha256(path.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    readable = _NOT_ID.sub("-", path[len(ROOT) :].lower()).strip("-")[:64].rstrip("-")
    return f"{_PREFIX}{readable}-{digest}" if readable else f"{_PREFIX}{digest}"


def checked_path(path: str) -> str:
    """`path` resolved (`.`, `..`, repeated `/`) inside `/memories`; ToolError when it does not
    start there or would leave it."""
    if not isinstance(path, str) or not (path == ROOT or path.startswith(ROOT + "/")):
        raise ToolError(f"Path must start with /memories, got: {path}")
    if "\x00" in path:
        raise ToolError(f"Path {path} is not a valid path (it holds a NUL character)")
    relative = path[len(ROOT) :].lstrip("/")
    if not relative:
        return ROOT
    resolved = posixpath.normpath(relative)
    if resolved == ".":
        return ROOT
    if resolved == ".." or resolved.startswith("../") or resolved.startswith("/"):
        raise ToolError(f"Path {path} would escape /memories directory")
    return f"{ROOT}/{resolved}"


def _size(nbytes: int) -> str:
    """A size as the tool shows it: 0B, 512B, 1.5K, 2M."""
    if nbytes == 0:
        return "0B"
    unit = min((nbytes.bit_length() - 1) // 10, 3)
    value = nbytes / (1024**unit)
    shown = f"{int(value)}" if value == int(value) else f"{value:.1f}"
    return shown + "BKMG"[unit]


def _numbered(lines: list[str], first: int) -> str:
    return "\n".join(f"{str(n + first).rjust(_LINE_WIDTH)}\t{line}" for n, line in enumerate(lines))


class MorphzMemoryTool(BetaAbstractMemoryTool):
    """The memory tool's commands over frames of one Morphz context (see the module
    docstring). Each command raises `ToolError` with the tool's error string; a Morphz error
    (a frozen context, a body the server refuses) comes back as its message too."""

    def __init__(self, client: MorphzClient, *, thread: str | None = None) -> None:
        super().__init__()
        self.client = client
        self.thread = thread

    # -- reading -------------------------------------------------------------------------

    def _file(self, path: str) -> dict[str, Any] | None:
        """The live frame of the file at checked `path`, or None."""
        try:
            frame = self.client.frame(frame_id_of_path(path), history_limit=1)
        except NotFoundError:
            return None
        body = frame.get("body") or {}
        if frame.get("status") != "active" or body.get("path") != path:
            return None
        return dict(frame)

    def _files(self) -> dict[str, dict[str, Any]]:
        """Every live file: path -> frame."""
        files: dict[str, dict[str, Any]] = {}
        cursor = None
        while True:
            page = self.client.frames(status="active", cursor=cursor, limit=500)
            for frame in page["frames"]:
                body = frame.get("body") or {}
                if frame["id"].startswith(_PREFIX) and body.get("store") == STORE_MARK:
                    files[body["path"]] = dict(frame)
            cursor = page["next_cursor"]
            if cursor is None:
                return files

    @staticmethod
    def _under(files: dict[str, dict[str, Any]], directory: str) -> dict[str, dict[str, Any]]:
        prefix = directory.rstrip("/") + "/"
        return {p: f for p, f in files.items() if p.startswith(prefix)}

    def _text_of(self, path: str, shown: str) -> tuple[dict[str, Any], str]:
        frame = None if path == ROOT else self._file(path)
        if frame is None:
            if path == ROOT or self._under(self._files(), path):
                raise ToolError(f"The path {shown} is not a file.")
            raise ToolError(f"The path {shown} does not exist. Please provide a valid path.")
        return frame, str(frame["body"]["text"])

    # -- writing -------------------------------------------------------------------------

    def _commit(self, ops: list[dict[str, Any]], why: str) -> None:
        try:
            self.client.submit(ops=ops, reason=f"memory tool: {why}", thread=self.thread)
        except MorphzAPIError as exc:
            raise ToolError(f"The memory was not changed: {exc.message}") from exc

    def _commit_apart(
        self, ops: list[dict[str, Any]], why: str, made: list[str], undo: list[dict[str, Any]]
    ) -> None:
        """Commit `ops`, which make the files at `made`, then look again: a writer that checked
        before another committed can make a file where the other made a directory (frames of
        different ids do not conflict, where a filesystem refuses atomically). Whoever sees
        such a clash after committing undoes its own change with `undo` and says so: the
        later writer always sees it, so at most one of the two stays (at worst neither)."""
        self._commit(ops, why)
        clash = _clash(self._files(), made)
        if clash is not None:
            self._commit(undo, f"undo {why}: {clash}")
            raise ToolError(f"The memory was not changed: {clash}; view it and retry.")

    def _write_ops(self, path: str, text: str, *, exists: bool | None) -> list[dict[str, Any]]:
        """The operations that make the file at `path` hold `text`: a revise of a live file, a
        derive of a new one, a restore then revise of a deleted one."""
        frame_id = frame_id_of_path(path)
        body = {"store": STORE_MARK, "path": path, "text": text}
        if exists:
            return [{"op": "revise", "id": frame_id, "body": body}]
        try:
            self.client.frame(frame_id, history_limit=1)
        except NotFoundError:
            return [{"op": "derive", "id": frame_id, "body": body}]
        return [
            {"op": "restore", "ids": [frame_id]},
            {"op": "revise", "id": frame_id, "body": body},
        ]

    def _revise(self, frame: dict[str, Any], text: str, why: str) -> None:
        """Revise a file read at its `changed_version`: a concurrent edit is a conflict, and
        the model is told to view the file again."""
        body = {**frame["body"], "text": text}
        try:
            self.client.submit(
                ops=[{"op": "revise", "id": frame["id"], "body": body}],
                base_version=frame["changed_version"],
                reason=f"memory tool: {why}",
                thread=self.thread,
            )
        except MorphzAPIError as exc:
            if exc.code == "conflict":
                raise ToolError(
                    f"The file {frame['body']['path']} changed meanwhile; view it and retry."
                ) from exc
            raise ToolError(f"The memory was not changed: {exc.message}") from exc

    # -- the commands --------------------------------------------------------------------

    def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        """`view`: a file's lines numbered (`view_range` [first, last], -1 the end) or a directory's
        listing two levels deep."""
        path = checked_path(command.path)
        frame = None if path == ROOT else self._file(path)
        if frame is None:
            files = self._files()
            under = self._under(files, path)
            if path != ROOT and not under:
                raise ToolError(
                    f"The path {command.path} does not exist. Please provide a valid path."
                )
            return self._listing(command.path, path, under)
        text = str(frame["body"]["text"])
        lines = text.split("\n")
        if len(lines) > _MAX_LINES:
            raise ToolError(f"File {command.path} exceeds maximum line limit of 999,999 lines.")
        first = 1
        if command.view_range and len(command.view_range) == 2:
            start = max(1, command.view_range[0]) - 1
            end = len(lines) if command.view_range[1] == -1 else command.view_range[1]
            lines, first = lines[start:end], start + 1
        return f"Here's the content of {command.path} with line numbers:\n" + _numbered(
            lines, first
        )

    def _listing(self, shown: str, path: str, under: dict[str, dict[str, Any]]) -> str:
        """Files and directories up to two levels below `path`, by name, hidden ones left out."""
        sizes: dict[str, int] = {}
        for file_path, frame in under.items():
            nbytes = len(str(frame["body"]["text"]).encode("utf-8", "surrogatepass"))
            parts = file_path[len(path.rstrip("/")) + 1 :].split("/")
            for depth in range(1, len(parts) + 1):
                key = "/".join(parts[:depth]) + ("/" if depth < len(parts) else "")
                sizes[key] = sizes.get(key, 0) + nbytes
        total = sum(sizes[k] for k in sizes if "/" not in k.rstrip("/"))

        def shown_entries(prefix: str, depth: int) -> list[str]:
            """The lines of the entries directly under `prefix`, each directory followed by
            its own entries while `depth` is below 2."""
            names = sorted(
                {
                    k[len(prefix) :].split("/")[0] + ("/" if "/" in k[len(prefix) :] else "")
                    for k in sizes
                    if k.startswith(prefix) and k != prefix
                }
            )
            out: list[str] = []
            for name in names:
                if name.startswith("."):
                    continue
                out.append(f"{_size(sizes[prefix + name])}\t{shown}/{prefix}{name.rstrip('/')}")
                if name.endswith("/"):
                    out[-1] += "/"
                    if depth < 2:
                        out.extend(shown_entries(prefix + name, depth + 1))
            return out

        header = (
            f"Here're the files and directories up to 2 levels deep in {shown}, "
            "excluding hidden items:"
        )
        return "\n".join([header, f"{_size(total)}\t{shown}", *shown_entries("", 1)])

    def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        """`create`: a new file (a derived frame, or a deleted one restored)."""
        path = checked_path(command.path)
        files = self._files()
        if path == ROOT or path in files or self._under(files, path):
            raise ToolError(f"File {command.path} already exists")
        _refuse_under_a_file(files, path, command.path)
        ops = self._write_ops(path, command.file_text, exists=False)
        undo = [{"op": "retire", "refs": [frame_id_of_path(path)]}]
        self._commit_apart(ops, f"create {path}", [path], undo)
        return f"File created successfully at: {command.path}"

    def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        """`str_replace`: replace the one occurrence of `old_str` (an error for none or several)."""
        path = checked_path(command.path)
        frame, text = self._text_of(path, command.path)
        count = text.count(command.old_str)
        if count == 0:
            raise ToolError(
                f"No replacement was performed, old_str `{command.old_str}` did not appear "
                f"verbatim in {command.path}."
            )
        if count > 1:
            lines, start = [], 0
            while (at := text.find(command.old_str, start)) != -1:
                lines.append(text[:at].count("\n") + 1)
                start = at + 1
            raise ToolError(
                f"No replacement was performed. Multiple occurrences of old_str "
                f"`{command.old_str}` in lines: {', '.join(map(str, lines))}. "
                "Please ensure it is unique"
            )
        changed = text[: text.find(command.old_str)].count("\n")
        new_text = text.replace(command.old_str, command.new_str)
        self._revise(frame, new_text, f"str_replace in {path}")
        new_lines = new_text.split("\n")
        first, last = max(0, changed - 2), min(len(new_lines), changed + 3)
        return (
            "The memory file has been edited. Here is the snippet showing the change "
            "(with line numbers):\n" + _numbered(new_lines[first:last], first + 1)
        )

    def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        """`insert`: put `insert_text` after line `insert_line` (0: at the top)."""
        path = checked_path(command.path)
        frame, text = self._text_of(path, command.path)
        lines = text.split("\n")
        if lines[-1] == "":
            lines.pop()
        if command.insert_line < 0 or command.insert_line > len(lines):
            raise ToolError(
                f"Invalid `insert_line` parameter: {command.insert_line}. "
                f"It should be within the range [0, {len(lines)}]."
            )
        lines.insert(command.insert_line, command.insert_text.rstrip("\n"))
        new_text = "\n".join(lines)
        if not new_text.endswith("\n"):
            new_text += "\n"
        self._revise(frame, new_text, f"insert in {path}")
        return f"The file {command.path} has been edited."

    def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        """`delete`: retire a file's frame, or every frame under a directory."""
        path = checked_path(command.path)
        if path == ROOT:
            raise ToolError("Cannot delete the /memories directory itself")
        frame = self._file(path)
        frames = [frame] if frame is not None else list(self._under(self._files(), path).values())
        if not frames:
            raise ToolError(f"The path {command.path} does not exist")
        self._commit([{"op": "retire", "refs": [f["id"] for f in frames]}], f"delete {path}")
        return f"Successfully deleted {command.path}"

    def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        """`rename`: a file or directory to a new path that does not exist yet."""
        old, new = checked_path(command.old_path), checked_path(command.new_path)
        if old == ROOT:
            raise ToolError("Cannot rename the /memories directory itself")
        files = self._files()
        if new == ROOT or new in files or self._under(files, new):
            raise ToolError(f"The destination {command.new_path} already exists")
        moving = {old: files[old]} if old in files else self._under(files, old)
        if not moving:
            raise ToolError(f"The path {command.old_path} does not exist")
        if new.startswith(old + "/"):
            raise ToolError(f"Cannot move {command.old_path} into itself")
        _refuse_under_a_file(files, new, command.new_path)
        ops: list[dict[str, Any]] = []
        for path, frame in sorted(moving.items()):
            target = new + path[len(old) :]
            ops.extend(self._write_ops(target, str(frame["body"]["text"]), exists=False))
        ops.append({"op": "retire", "refs": [f["id"] for f in moving.values()]})
        made = [new + path[len(old) :] for path in sorted(moving)]
        undo = [
            {"op": "restore", "ids": [f["id"] for f in moving.values()]},
            {"op": "retire", "refs": [frame_id_of_path(path) for path in made]},
        ]
        self._commit_apart(ops, f"rename {old} to {new}", made, undo)
        return f"Successfully renamed {command.old_path} to {command.new_path}"

    def clear_all_memory(self) -> str:
        """Delete every file (their frames retire)."""
        files = self._files()
        if files:
            self._commit([{"op": "retire", "refs": [f["id"] for f in files.values()]}], "clear")
        return "All memory cleared"


def _file_above(files: dict[str, dict[str, Any]], path: str) -> str | None:
    """The directory of `path` that is a file in `files`, or None."""
    parent = path.rsplit("/", 1)[0]
    while parent.startswith(ROOT + "/"):
        if parent in files:
            return parent
        parent = parent.rsplit("/", 1)[0]
    return None


def _refuse_under_a_file(files: dict[str, dict[str, Any]], path: str, shown: str) -> None:
    """ToolError when a directory of `path` is a file: a path is a file or a directory,
    never both (a filesystem answers NotADirectoryError)."""
    above = _file_above(files, path)
    if above is not None:
        raise ToolError(f"Cannot create {shown}: {above} is a file, not a directory")


def _clash(files: dict[str, dict[str, Any]], made: list[str]) -> str | None:
    """What makes one of the paths `made` both a file and a directory in `files`, or None."""
    for path in made:
        above = _file_above(files, path)
        if above is not None:
            return f"{above} became a file while {path} was made under it"
        inside = sorted(p for p in files if p.startswith(path + "/"))
        if inside:
            return f"{inside[0]} was made under {path} meanwhile"
    return None
