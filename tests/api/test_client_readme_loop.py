"""The README's agent loop (client/examples/agent_loop.py) runs as written against the demo
context on a live server."""

from __future__ import annotations

import runpy
from pathlib import Path
from typing import Any

import pytest

from memory.demo.player import load_demo
from memory.models import Frame
from tests.api.live import unthrottled  # noqa: F401

EXAMPLE = Path(__file__).resolve().parents[2] / "client" / "examples" / "agent_loop.py"


@pytest.mark.usefixtures("unthrottled")
def test_readme_agent_loop_runs_against_the_demo(
    live_server: Any, transactional_db: Any, tmp_path: Path, monkeypatch: Any, capsys: Any
) -> None:
    login = load_demo(tmp_path)
    assert login.token
    monkeypatch.setenv("MORPHZ_URL", live_server.url)
    monkeypatch.setenv("MORPHZ_TOKEN", login.token)
    runpy.run_path(str(EXAMPLE), run_name="__main__")
    out = capsys.readouterr().out
    assert "committed version" in out
    assert "recall:" in out and "search:" in out
    smoke = Frame.objects.get(context__slug="demo", frame_id__startswith="smoke-test-")
    assert smoke.body == {"staging": "passed", "checks": "12"}
    # Twice in a row works too: the frame id comes from the new event.
    runpy.run_path(str(EXAMPLE), run_name="__main__")
    assert (
        Frame.objects.filter(context__slug="demo", frame_id__startswith="smoke-test-").count() == 2
    )
