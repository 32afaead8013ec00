"""`manage.py search_embeddings`: how far search's documents are embedded by the embedder
in use (R61: after a change of model the index worker re-embeds them when idle)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from memory.search.documents import embedding_progress


class Command(BaseCommand):
    help = "Say how many search documents the embedder in use has embedded."

    def handle(self, *args: Any, **options: Any) -> None:
        progress = embedding_progress()
        share = progress["embedded"] / progress["documents"] if progress["documents"] else 1.0
        self.stdout.write(
            f"{progress['model']}: {progress['embedded']} of {progress['documents']} documents"
            f" embedded ({share:.0%})"
        )
