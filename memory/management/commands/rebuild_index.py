"""`manage.py rebuild_index [--context SLUG ...] [--clear]`: rebuild search documents from
the facts (R34), with a progress bar. Memory itself is never rewritten."""

from __future__ import annotations

import sys
import time
from typing import Any

from django.core.management.base import CommandError, CommandParser
from tqdm import tqdm

from memory.management.data_command import DataCommand
from memory.models import Context
from memory.search.documents import count_facts, rebuild


class Command(DataCommand):
    help = "Rebuild the search index of every context (or the named ones) from the facts."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--context", action="append", default=None, metavar="SLUG")
        parser.add_argument("--clear", action="store_true", help="delete the documents first")
        parser.add_argument("--batch", type=int, default=500)
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        context_ids = None
        if options["context"]:
            found = dict(
                Context.objects.filter(slug__in=options["context"]).values_list("slug", "pk")
            )
            missing = sorted(set(options["context"]) - set(found))
            if missing:
                raise CommandError(f"no context with slug {', '.join(missing)}")
            context_ids = list(found.values())
        started = time.monotonic()
        total = count_facts(context_ids)
        with tqdm(
            total=total,
            unit="doc",
            desc="rebuild_index",
            file=sys.stderr,
            disable=options["no_progress"],
        ) as bar:
            written = rebuild(
                context_ids=context_ids,
                clear=options["clear"],
                batch_size=max(1, options["batch"]),
                progress=bar.update,
            )
        # Always a line, also when nothing needed writing: silence read as a failure.
        contexts = len(context_ids) if context_ids is not None else Context.objects.count()
        seconds = time.monotonic() - started
        self.stdout.write(
            f"rebuilt the search index of {contexts} context{'' if contexts == 1 else 's'}: "
            f"{written} document{'' if written == 1 else 's'} in {seconds:.1f} s"
        )
