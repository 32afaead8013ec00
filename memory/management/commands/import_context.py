from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError, CommandParser
from tqdm import tqdm

from memory.errors import MorphzError
from memory.management.data_command import DataCommand
from memory.versions.exchange import import_context, read_export


class Command(DataCommand):
    help = (
        "Import a context from an export file: rebuilt through the engine and verified "
        "against the exported state; prints the new token alone on the last line."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file")
        parser.add_argument("--slug", default=None, help="default: the exported slug")
        parser.add_argument("--quiet", action="store_true", help="no progress bar")
        parser.add_argument(
            "--allow-unverified",
            action="store_true",
            help="import a file no key of this server signed (R65); the context then says "
            "its history is unverified everywhere it is shown",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            exported = read_export(options["file"])  # read once: the size and the steps
            total = len(exported.steps)
            with tqdm(total=total, unit="step", desc="import", disable=options["quiet"]) as bar:
                result = import_context(
                    exported,
                    slug=options["slug"],
                    progress=lambda _s: _tick(bar),
                    allow_unverified=options["allow_unverified"],
                )
        except MorphzError as exc:
            raise CommandError(f"{exc.code}: {exc.message}") from None
        except OSError as exc:
            raise CommandError(str(exc)) from None
        if result.context.unverified_import:
            self.stdout.write("warning: imported UNVERIFIED: no key of this server signed it")
        self.stdout.write(
            f"imported {result.context.slug} (version {result.context.version}, "
            f"{result.steps} steps), verified equal to the export; API token (shown once):"
        )
        self.stdout.write(result.token.raw)


def _tick(bar: tqdm[Any]) -> None:
    bar.update()
