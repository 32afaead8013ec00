"""Two memory tools racing to make one path a file and a directory: whichever commits
second sees the clash, undoes its own change and says so, so the path stays a file or a
directory (at worst neither), never both (a filesystem refuses the second atomically)."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from anthropic.lib.tools import ToolError
from morphz_client.anthropic_memory import MorphzMemoryTool, frame_id_of_path


class CheckedEarlier(MorphzMemoryTool):
    """A tool whose first look at the files is the one it took before another writer
    committed: the check a racing writer passed."""

    def __init__(self, client: Any, seen: dict[str, dict[str, Any]]) -> None:
        super().__init__(client)
        self.seen: dict[str, dict[str, Any]] | None = seen

    def _files(self) -> dict[str, dict[str, Any]]:
        if self.seen is not None:
            seen, self.seen = self.seen, None
            return seen
        return super()._files()


def _live(mz: Any) -> set[str]:
    return set(MorphzMemoryTool(mz)._files())


def test_a_file_made_over_a_new_directory_is_undone(make_client: Any) -> None:
    mz = make_client("race-file-over-dir")
    late = CheckedEarlier(mz, MorphzMemoryTool(mz)._files())
    MorphzMemoryTool(mz).call({"command": "create", "path": "/memories/x/c.txt", "file_text": "1"})

    with pytest.raises(ToolError) as caught:
        late.call({"command": "create", "path": "/memories/x", "file_text": "2"})

    assert "/memories/x/c.txt was made under /memories/x" in str(caught.value.content)
    assert _live(mz) == {"/memories/x/c.txt"}
    assert mz.frame(frame_id_of_path("/memories/x"))["status"] != "active"


def test_a_file_made_under_a_new_file_is_undone(make_client: Any) -> None:
    mz = make_client("race-dir-under-file")
    late = CheckedEarlier(mz, MorphzMemoryTool(mz)._files())
    MorphzMemoryTool(mz).call({"command": "create", "path": "/memories/x", "file_text": "1"})

    with pytest.raises(ToolError) as caught:
        late.call({"command": "create", "path": "/memories/x/c.txt", "file_text": "2"})

    assert "/memories/x became a file" in str(caught.value.content)
    assert _live(mz) == {"/memories/x"}


def test_a_rename_under_a_new_file_is_undone_and_the_old_path_kept(make_client: Any) -> None:
    mz = make_client("race-rename")
    tool = MorphzMemoryTool(mz)
    tool.call({"command": "create", "path": "/memories/a.md", "file_text": "kept"})
    late = CheckedEarlier(mz, tool._files())
    tool.call({"command": "create", "path": "/memories/y", "file_text": "1"})

    with pytest.raises(ToolError):
        late.call({"command": "rename", "old_path": "/memories/a.md", "new_path": "/memories/y/a"})

    assert _live(mz) == {"/memories/a.md", "/memories/y"}
    assert tool.call({"command": "view", "path": "/memories/a.md"}).endswith("\tkept")


@pytest.mark.slow
def test_concurrent_tools_never_leave_a_path_both_file_and_directory(
    make_client: Any, live_server: Any
) -> None:
    from morphz_client import MorphzClient

    mz = make_client("race-threads")
    for round_ in range(8):
        barrier = threading.Barrier(2)

        def make(path: str, barrier: threading.Barrier) -> None:
            client = MorphzClient(live_server.url, mz.token, context="race-threads")
            try:
                barrier.wait()
                MorphzMemoryTool(client).call({"command": "create", "path": path, "file_text": "t"})
            except ToolError:
                pass
            finally:
                client.close()

        paths = (f"/memories/r{round_}", f"/memories/r{round_}/c.txt")
        threads = [threading.Thread(target=make, args=(p, barrier)) for p in paths]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        live = _live(mz)
        assert not set(paths) <= live, (round_, sorted(live))
