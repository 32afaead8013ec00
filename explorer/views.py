"""Explorer pages: thin views that check access, read once and render (writes go through the
REST API from the page's script, so a person's correction is an ordinary transaction)."""

from __future__ import annotations

from django.contrib.auth.decorators import user_passes_test
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.csrf import ensure_csrf_cookie

from memory.read.access import context_for_person, contexts_for_person, person_can_see_all
from memory.read.explorer import context_cards, explorer_snapshot

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
        raise Http404("no such context")
    snapshot = explorer_snapshot(context)
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
