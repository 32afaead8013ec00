from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from memory.queries import contexts_for_person


@login_required
def context_list(request: HttpRequest) -> HttpResponse:
    return render(
        request, "explorer/context_list.html", {"contexts": contexts_for_person(request.user)}
    )
