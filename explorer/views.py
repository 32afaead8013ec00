"""Explorer pages: thin views that check access, read once and render (writes go through the
REST API from the page's script, so a person's correction is an ordinary transaction)."""

from __future__ import annotations

import difflib
import json
from typing import Any, cast

from django.contrib.auth.decorators import user_passes_test
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.csrf import ensure_csrf_cookie

from memory.read.access import context_for_person, contexts_for_person, person_can_see_all
from memory.read.explorer import context_cards, explorer_snapshot
from memory.replicas import Floor, read_preferring_replica
from memory.shapes.explorer import ExplorerSnapshot

# What the page embeds is bounded: a large body or transaction text is left
# out of the first paint and loaded through the API when the frame is selected.
EMBED_BODY_CHARS = 4_000
EMBED_TEXT_CHARS = 4_000


def bounded_snapshot(snapshot: ExplorerSnapshot) -> ExplorerSnapshot:
    # The page's script reads `body_omitted` on a frame, a key the API's frame has not.
    for frame in cast(list[dict[str, Any]], snapshot["frames"]):
        size = len(json.dumps(frame["body"], ensure_ascii=False))
        if size > EMBED_BODY_CHARS:
            frame["body"] = {"(not loaded)": f"{size} characters; select the frame to load it"}
            frame["body_omitted"] = True
    for record in snapshot["transactions"]:
        text = record.get("text") or ""
        if len(text) > EMBED_TEXT_CHARS:
            record["text"] = text[:EMBED_TEXT_CHARS] + f"… ({len(text)} characters)"
            record["text_truncated"] = True
    return snapshot


# Only staff people review memory; anyone else is sent to the admin login form.
staff_required = user_passes_test(person_can_see_all)


@staff_required
def context_list(request: HttpRequest) -> HttpResponse:
    cards = context_cards(contexts_for_person(request.user))
    return render(request, "explorer/context_list.html", {"cards": cards})


@staff_required
@ensure_csrf_cookie  # the page's script sends the cookie's token as X-CSRFToken
def context_detail(request: HttpRequest, slug: str) -> HttpResponse:
    context = context_for_person(slug, request.user)
    if context is None:
        # A page that says what happened and where to go, not Django's bare "Not Found".
        slugs = [c.slug for c in contexts_for_person(request.user)]
        similar = difflib.get_close_matches(slug, slugs, n=3, cutoff=0.6)
        return render(
            request, "explorer/no_context.html", {"slug": slug, "similar": similar}, status=404
        )
    # The page's snapshot may come from a replica that shows the context as the primary
    # did a moment ago (R68); without replicas this is the call itself.
    floor = Floor(context.pk, context.version, context.last_seq)
    snapshot = read_preferring_replica(floor, lambda: bounded_snapshot(explorer_snapshot(context)))
    return render(
        request,
        "explorer/context.html",
        {
            "context": context,
            "snapshot": snapshot,
            "page": {
                "slug": context.slug,
                "api": f"/api/v1/contexts/{context.slug}/",
                "ws": f"/ws/contexts/{context.slug}/",
                "user": request.user.get_username(),
            },
        },
    )
