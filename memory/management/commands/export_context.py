from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError, CommandParser
from tqdm import tqdm

from memory.management.data_command import DataCommand
from memory.models import Context, Evaluation
from memory.versions.exchange import export_context


class Command(DataCommand):
    help = "Export a context to one file (gzip JSON Lines, see docs/history.md)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("file")
        parser.add_argument("--quiet", action="store_true", help="no progress bar")

    def handle(self, *args: Any, **options: Any) -> None:
        context = Context.objects.filter(slug=options["slug"]).first()
        if context is None:
            raise CommandError(f"no context {options['slug']!r}")
        total = context.last_seq + Evaluation.objects.filter(context=context).count()
        with tqdm(
            total=total, unit="step", desc=f"export {context.slug}", disable=options["quiet"]
        ) as bar:
            counts = export_context(context, options["file"], progress=lambda _s: _tick(bar))
        self.stdout.write(
            f"exported {context.slug} (version {context.version}): {counts['steps']} steps, "
            f"{counts['rejected']} rejected transactions -> {options['file']}"
        )


def _tick(bar: tqdm[Any]) -> None:
    bar.update()
