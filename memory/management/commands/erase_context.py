from __future__ import annotations

import getpass
import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memory.erasure.erase import erase
from memory.errors import MorphzError
from memory.models import Context


class Command(BaseCommand):
    help = (
        "Erase content from a context and its whole fork lineage (R64; docs/history.md): "
        "whole events or frames (--ref), spans (--span @e12:11:30) and patterns "
        "(--pattern). Leaves tombstones; prints what was masked."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("--ref", action="append", default=[], help="@e12 or a frame id")
        parser.add_argument(
            "--span", action="append", default=[], help="REF:START:END (characters)"
        )
        parser.add_argument(
            "--pattern", action="append", default=[], help="a text erased wherever it occurs"
        )
        parser.add_argument("--reason", required=True, help="why (kept in the tombstone)")
        parser.add_argument("--by", default=None, help="who asks (default: the OS user)")

    def handle(self, *args: Any, **options: Any) -> None:
        context = Context.objects.filter(slug=options["slug"]).first()
        if context is None:
            raise CommandError(f"no context with slug {options['slug']!r}")
        spans = []
        for text in options["span"]:
            ref, _, rest = text.partition(":")
            start, _, end = rest.partition(":")
            if not (start.isdigit() and end.isdigit()):
                raise CommandError(f"--span {text!r}: use REF:START:END, like @e12:11:30")
            spans.append({"ref": ref, "start": int(start), "end": int(end)})
        try:
            result = erase(
                context.pk,
                refs=options["ref"],
                spans=spans,
                patterns=options["pattern"],
                reason=options["reason"],
                erased_by=f"command:{options['by'] or getpass.getuser()}",
            )
        except MorphzError as exc:
            raise CommandError(f"{exc.code}: {exc.message}") from None
        for slug, places in result.contexts.items():
            self.stdout.write(f"{slug}: {places} place(s) masked")
        self.stdout.write(json.dumps(result.as_dict()["erasures"], ensure_ascii=False))
