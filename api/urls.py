from django.urls import path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from api.views import (
    actions,
    contexts,
    diff,
    erasures,
    evaluations,
    events,
    forks,
    frames,
    health,
    index,
    protocol,
    recall,
    relations,
    replies,
    search,
    transactions,
)

CONTEXT = "v1/contexts/<slug:slug>/"

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="docs"),
    path("health/live/", health.LiveView.as_view(), name="api-health-live"),
    path("health/ready/", health.ReadyView.as_view(), name="api-health-ready"),
    path("v1/", index.ApiIndexView.as_view(), name="api-index"),
    path("v1/contexts/", contexts.ContextListView.as_view(), name="api-contexts"),
    path(CONTEXT, contexts.ContextDetailView.as_view(), name="api-context"),
    path(CONTEXT + "events/", events.EventListView.as_view(), name="api-events"),
    path(CONTEXT + "events/<int:seq>/", events.EventDetailView.as_view(), name="api-event"),
    path(CONTEXT + "evaluations/", evaluations.EvaluationView.as_view(), name="api-evaluations"),
    path(
        CONTEXT + "evaluations/<int:evaluation_id>/",
        evaluations.EvaluationDetailView.as_view(),
        name="api-evaluation",
    ),
    path(CONTEXT + "forks/", forks.ForkView.as_view(), name="api-forks"),
    path(CONTEXT + "diff/", diff.DiffView.as_view(), name="api-diff"),
    path(
        CONTEXT + "transactions/",
        transactions.TransactionView.as_view(),
        name="api-transactions",
    ),
    path(CONTEXT + "frames/", frames.FrameListView.as_view(), name="api-frames"),
    path(CONTEXT + "frames/<str:frame_id>/", frames.FrameDetailView.as_view(), name="api-frame"),
    path(
        CONTEXT + "frames/<str:frame_id>/body/",
        frames.FrameBodyView.as_view(),
        name="api-frame-body",
    ),
    path(
        CONTEXT + "frames/<str:frame_id>/revisions/<int:revision>/",
        frames.FrameRevisionView.as_view(),
        name="api-frame-revision",
    ),
    path(CONTEXT + "relations/", relations.RelationListView.as_view(), name="api-relations"),
    path(CONTEXT + "recall/", recall.RecallView.as_view(), name="api-recall"),
    path(CONTEXT + "search/", search.SearchView.as_view(), name="api-search"),
    path(CONTEXT + "actions/", actions.ActionView.as_view(), name="api-actions"),
    path(CONTEXT + "erasures/", erasures.ErasureView.as_view(), name="api-erasures"),
    path(CONTEXT + "protocol/", protocol.ProtocolView.as_view(), name="api-protocol"),
    path(CONTEXT + "replies/", replies.ReplyView.as_view(), name="api-replies"),
    path(
        CONTEXT + "actions/<int:seq>/cancel/",
        actions.ActionCancelView.as_view(),
        name="api-action-cancel",
    ),
    # Anything else under /api/ answers the standard error shape (never Django's HTML 404).
    re_path(r"^[\s\S]*$", index.ApiNotFoundView.as_view(), name="api-not-found"),
]
