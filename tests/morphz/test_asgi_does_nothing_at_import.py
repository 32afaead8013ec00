"""Importing the ASGI entry point does no work: no database, no Django set-up, no indexer;
the served app is built on its first event (the lifespan startup or the first request)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import sys
import django.apps
import morphz.asgi
assert not django.apps.apps.ready, "Django was set up at import"
started = [m for m in ("pgserver", "memory.search.indexer", "channels.routing") if m in sys.modules]
assert not started, started
assert morphz.asgi.application._app is None
print("idle")
"""


def test_importing_the_asgi_app_starts_nothing() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "idle"
