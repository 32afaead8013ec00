"""STATE-Bench's real orchestrator, in its own Python 3.12 environment, runs train tasks with
the Morphz full agent (scripted model replaying the recorded tool calls, scripted user), and
the audit checks the run; a tampered run fails it.

The environment is made once per (interpreter, STATE-Bench pyproject, our packages' pyproject
files, checkout) and kept in the user's cache folder (`MORPHZ_STATEBENCH_VENV` names another
place); our two packages are installed editable, so code changes need no reinstall.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from memory.contexts import create_context, issue_token
from memory.models import Context
from memory.search.indexer import drain
from tests.statebench.conftest import INTEGRATION, ROOT

pytestmark = pytest.mark.usefixtures("history_served")

TASKS = ["1-cancel_economy_domestic", "2-cancel_business_international", "7-book_simple_domestic"]
LEARNED = 12  # trajectories learned for this test (the replayed tasks are among them)


def python312() -> str:
    candidates = [
        os.environ.get("MORPHZ_STATEBENCH_PYTHON", ""),
        shutil.which("python3.12") or "",
        *sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.12*/bin/python3.12"))),
        "/usr/bin/python3.12",
        "/usr/local/bin/python3.12",
    ]
    for candidate in candidates:
        if not candidate:
            continue
        try:
            out = subprocess.run(
                [candidate, "--version"], capture_output=True, text=True, timeout=30
            )
        except OSError:
            continue
        if out.returncode == 0 and out.stdout.startswith("Python 3.12"):
            return candidate
    message = "no Python 3.12 interpreter (set MORPHZ_STATEBENCH_PYTHON)"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message)
    pytest.skip(message)


def statebench_venv(statebench_dir: Path) -> Path:
    interpreter = python312()
    key = hashlib.sha256()
    for part in (
        interpreter,
        str(ROOT),
        (statebench_dir / "pyproject.toml").read_text(),
        (ROOT / "client" / "pyproject.toml").read_text(),
        (INTEGRATION / "pyproject.toml").read_text(),
    ):
        key.update(part.encode())
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "morphz"
    venv = Path(
        os.environ.get("MORPHZ_STATEBENCH_VENV", cache / f"statebench-{key.hexdigest()[:16]}")
    )
    python = venv / "bin" / "python"
    done = venv / ".installed"
    if done.exists():
        return python
    uv = ROOT / ".tools" / "bin" / "uv"
    env = {**os.environ, "UV_PYTHON_DOWNLOADS": "never"}
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([str(uv), "venv", "-q", "--python", interpreter, str(venv)], check=True, env=env)
    subprocess.run(
        [
            str(uv), "pip", "install", "-q", "--python", str(python),
            str(statebench_dir), "-e", str(ROOT / "client"), "-e", str(INTEGRATION),
        ],
        check=True,
        env=env,
    )  # fmt: skip
    done.write_text("ok\n")
    return python


def test_real_orchestrator_replays_train_tasks_through_forks_and_the_audit_passes(
    live_server: Any,
    transactional_db: Any,
    unthrottled: Any,
    statebench_dir: Path,
    data_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from morphz_statebench.audit import audit
    from morphz_statebench.manifest import load_contexts, save_context

    python = statebench_venv(statebench_dir)
    monkeypatch.setenv("MORPHZ_STATEBENCH_WORKDIR", str(tmp_path))
    context = create_context("sb-travel", capacity_tokens=2_000_000)
    token = issue_token(context).raw
    from morphz_client import MorphzClient
    from morphz_statebench.data import load_domain
    from morphz_statebench.learner import OfflineLearner, learn
    from morphz_statebench.manifest import LearnedContext, freeze_with_manifest

    dataset = load_domain(data_dir, "travel", limit=LEARNED)
    assert set(TASKS) <= {t.task_id for t in dataset.trajectories}
    with MorphzClient(live_server.url, token, context="sb-travel") as client:
        report = learn(client, dataset, OfflineLearner())
        drain()
        manifest = freeze_with_manifest(client, dataset, report)
    save_context(LearnedContext("travel", live_server.url, "sb-travel", token, manifest))
    last_seq = Context.objects.get(slug="sb-travel").last_seq
    assert manifest.frozen and manifest.version == LEARNED

    out = tmp_path / "results"
    run = subprocess.run(
        [
            str(python), "-m", "morphz_statebench", "scripted",
            "--statebench-dir", str(statebench_dir),
            "--domain", "travel", "--tasks", ",".join(TASKS), "--out", str(out),
            "--retrieve-query", "I need to cancel my flight",
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "MORPHZ_STATEBENCH_WORKDIR": str(tmp_path)},
        timeout=600,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    for task in TASKS:
        assert f"travel/{task}:" in run.stdout and "results identical" in run.stdout
    assert "audit passed: 3 trajectories" in run.stdout
    # the retrieve agent, built as run_batch builds it: top_k strings through the
    # benchmark's own handler (which forces top_k=3 whatever the model asks)
    assert "retrieve_learnings: 3 learnings" in run.stdout
    assert (
        Context.objects.get(slug="sb-travel").version,
        Context.objects.get(slug="sb-travel").last_seq,
    ) == (LEARNED, last_seq)

    # each task ran in its own fork of the learned context at its frozen version
    records = [json.loads((out / "run1" / f"{t}.json").read_text())["morphz"] for t in TASKS]
    forks = [r["fork"]["slug"] for r in records]
    assert len(set(forks)) == 3
    for slug in forks:
        fork = Context.objects.get(slug=slug)
        assert fork.forked_from is not None and fork.forked_from.slug == "sb-travel"
        assert fork.tick > LEARNED  # the task's own events were evaluated in the fork
    source = Context.objects.get(slug="sb-travel")
    assert (source.version, source.frozen) == (LEARNED, True)
    assert all(
        r["evaluations"] and any(e["learned_frames"] for e in r["evaluations"]) for r in records
    )
    assert audit(out, tmp_path).ok

    # a tampered run fails the audit: the text said sent to the model is not the server's
    path = out / "run1" / f"{TASKS[0]}.json"
    data = json.loads(path.read_text())
    data["morphz"]["evaluations"][0]["text_sha256"] = "0" * 64
    path.write_text(json.dumps(data))
    tampered = audit(out, tmp_path)
    assert not tampered.ok
    assert any("not the server's compiled text" in p for p in tampered.problems)
    data["morphz"]["evaluations"][0]["text_sha256"] = records[0]["evaluations"][0]["text_sha256"]
    path.write_text(json.dumps(data))
    assert audit(out, tmp_path).ok
    # and so does a learned context written to after freezing
    learned = load_contexts(tmp_path)["travel"]
    admin = issue_token(Context.objects.get(slug=learned.slug), scope="admin").raw  # unfreezes
    with MorphzClient(live_server.url, admin, context=learned.slug) as client:
        client._request("PATCH", client._ctx(), json={"frozen": False})
        client.submit(
            ops=[{"op": "derive", "id": "late-note", "body": {"x": "y"}}],
            base_version=LEARNED,
            reason="late",
        )
    changed = audit(out, tmp_path)
    assert any("not frozen" in p for p in changed.problems)
    assert any("moved from version" in p for p in changed.problems)
