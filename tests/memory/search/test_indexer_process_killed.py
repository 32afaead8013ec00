"""A real `run_indexer` process killed with SIGKILL in the middle of its work loses nothing:
every target is either indexed or still in the outbox, and a restart finishes the job (R34)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.db import connection

from memory.contexts import create_context
from memory.models import IndexIntent, SearchDocument
from memory.search import indexer
from memory.search.query import search
from memory.timeline.events import append_event
from morphz.devserver import database_url

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.django_db(transaction=True)
def test_a_run_indexer_process_killed_mid_work_loses_nothing():
    context = create_context("sigkill")
    # Large, word-rich events so a batch takes long enough to be caught in the middle.
    text = " ".join(f"word{n}" for n in range(20_000))
    for i in range(60):
        append_event(context.pk, kind="tool_result", content=f"killed drill {i} {text}")
    total = IndexIntent.objects.count()
    assert total == 60

    env = {
        **os.environ,
        "DATABASE_URL": database_url(connection.settings_dict),
        "LOG_LEVEL": "WARNING",
    }
    worker = subprocess.Popen(
        [sys.executable, "manage.py", "run_indexer", "--batch", "7", "--poll", "0.05"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        # Kill it once it has committed at least one batch and is working on another.
        while IndexIntent.objects.count() == total and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.05)
        worker.send_signal(signal.SIGKILL)
        worker.wait(10)
    finally:
        if worker.poll() is None:
            worker.kill()

    remaining = IndexIntent.objects.count()
    indexed = SearchDocument.objects.count()
    assert 0 < indexed < total  # it died part-way
    assert indexed + remaining == total  # each target is indexed or still pending

    assert indexer.drain() == remaining  # the restart applies what was left
    assert SearchDocument.objects.count() == total
    assert IndexIntent.objects.count() == 0
    hits = search(context, "killed drill", limit=100)["hits"]
    assert len(hits) == 60
