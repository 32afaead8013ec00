"""`manage.py run_indexer [--once] [--batch N] [--poll S]`: the search index worker (R34).

Several workers (and the in-process thread of the served app) can run at once: each batch
claims its intents with SKIP LOCKED, and applying an intent twice gives the same document.
"""

from __future__ import annotations

import os
import signal
import threading
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from memory.search.indexer import DEFAULT_BATCH, DEFAULT_POLL_SECONDS, drain, run_forever


def watch_parent(parent: int, stop: threading.Event, every: float = 1.0) -> threading.Thread:
    """Set `stop` once this process's parent is no longer `parent` (it died and the process
    was re-parented): an indexer never outlives the server that started it."""

    def watch() -> None:
        while not stop.wait(every):
            if os.getppid() != parent:
                stop.set()

    thread = threading.Thread(target=watch, name="parent-watch", daemon=True)
    thread.start()
    if os.getppid() != parent:  # the parent died before the watch began
        stop.set()
    return thread


class Command(BaseCommand):
    help = "Apply pending search index intents; loops until interrupted unless --once."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--once", action="store_true", help="drain the outbox once and exit")
        parser.add_argument("--batch", type=int, default=DEFAULT_BATCH, help="intents per batch")
        parser.add_argument(
            "--parent",
            type=int,
            default=None,
            help="stop when this process (the server that started it) is gone",
        )
        parser.add_argument(
            "--poll", type=float, default=DEFAULT_POLL_SECONDS, help="idle poll seconds"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        batch = max(1, options["batch"])
        if options["once"]:
            applied = drain(batch_size=batch)
            self.stdout.write(f"applied {applied} index intents")
            return
        stop = threading.Event()
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: stop.set())
        if options["parent"]:
            watch_parent(options["parent"], stop)
        self.stdout.write("indexer running; Ctrl-C stops it")
        run_forever(stop, poll_seconds=max(0.01, options["poll"]), batch_size=batch)
        self.stdout.write("indexer stopped")
