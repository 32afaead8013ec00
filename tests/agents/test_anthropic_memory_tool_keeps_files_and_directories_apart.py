"""A memory path is a file or a directory, never both: creating or renaming to a path under
a file is refused (the SDK's own tool fails there with the filesystem's NotADirectoryError),
and nothing is written."""

from __future__ import annotations

from typing import Any

import pytest
from anthropic.lib.tools import ToolError
from anthropic.lib.tools._beta_builtin_memory_tool import BetaLocalFilesystemMemoryTool


def test_a_file_is_no_directory(make_client: Any, tmp_path: Any) -> None:
    from morphz_client.anthropic_memory import MorphzMemoryTool

    mz = make_client("anthropic-file-dir")
    tool = MorphzMemoryTool(mz)
    tool.call({"command": "create", "path": "/memories/notes.txt", "file_text": "x"})
    tool.call({"command": "create", "path": "/memories/a.md", "file_text": "y"})
    version = mz.context()["version"]
    for command in (
        {"command": "create", "path": "/memories/notes.txt/child", "file_text": "z"},
        {"command": "create", "path": "/memories/notes.txt/deep/child", "file_text": "z"},
        {"command": "rename", "old_path": "/memories/a.md", "new_path": "/memories/notes.txt/a"},
    ):
        with pytest.raises(ToolError) as caught:
            tool.call(command)
        assert "/memories/notes.txt is a file" in str(caught.value.content)
    assert mz.context()["version"] == version
    sdk = BetaLocalFilesystemMemoryTool(base_path=str(tmp_path))
    sdk.call({"command": "create", "path": "/memories/notes.txt", "file_text": "x"})
    with pytest.raises(NotADirectoryError):
        sdk.call({"command": "create", "path": "/memories/notes.txt/child", "file_text": "z"})
