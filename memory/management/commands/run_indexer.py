"""`manage.py run_indexer [--once] [--batch N] [--poll S]`: the search index worker (R34).

Several workers (and the in-process thread of the served app) can run at once: each batch
claims its intents with SKIP LOCKED, and applying an intent twice gives the same document.
"""

from __future__ import annotations

import signal
import threading
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from memory.search.indexer import DEFAULT_BATCH, DEFAULT_POLL_SECONDS, drain, run_forever


class Command(BaseCommand):
    help = "Apply pending search index intents; loops until interrupted unless --once."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--once", action="store_true", help="drain the outbox once and exit")
        parser.add_argument("--batch", type=int, default=DEFAULT_BATCH, help="intents per batch")
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
        self.stdout.write("indexer running; Ctrl-C stops it")
        run_forever(stop, poll_seconds=max(0.01, options["poll"]), batch_size=batch)
        self.stdout.write("indexer stopped")
