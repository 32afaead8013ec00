from __future__ import annotations

import sys
from typing import Any

from django.core.management.base import CommandError, CommandParser

from memory.management.data_command import DataCommand
from memory.models import Context
from memory.versions.replay import verify_context


class Command(DataCommand):
    help = (
        "Rebuild a context's state from its history alone and compare it with the stored "
        "state (R51): prints OK, or each difference and exits with status 1."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slugs", nargs="*", help="contexts to verify")
        parser.add_argument("--all", action="store_true", help="verify every context")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["all"]:
            contexts = list(Context.objects.filter(scratch=False).order_by("slug"))
        else:
            if not options["slugs"]:
                raise CommandError("name a context (or --all)")
            contexts = []
            for slug in options["slugs"]:
                context = Context.objects.filter(slug=slug).first()
                if context is None:
                    raise CommandError(f"no context {slug!r}")
                contexts.append(context)
        failed = False
        for context in contexts:
            differences = verify_context(context)
            if differences:
                failed = True
                self.stdout.write(f"{context.slug}: {len(differences)} difference(s)")
                for line in differences:
                    self.stdout.write(f"  {line}")
            else:
                self.stdout.write(
                    f"{context.slug}: OK (version {context.version}, {context.last_seq} events)"
                )
            erased = context.erasures.count()
            if erased:
                self.stdout.write(f"  {erased} erasure tombstone(s): erased content is masked")
            if context.unverified_import:
                self.stdout.write(
                    "  history UNVERIFIED: imported from an export no key of this server signed"
                )
        if failed:
            sys.exit(1)
