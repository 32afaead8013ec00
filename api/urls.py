from django.urls import path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from api import views, views_agents, views_erasure, views_history, views_memory

CONTEXT = "v1/contexts/<slug:slug>/"

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="docs"),
    path("v1/", views.ApiIndexView.as_view(), name="api-index"),
    path("v1/contexts/", views.ContextListView.as_view(), name="api-contexts"),
    path(CONTEXT, views.ContextDetailView.as_view(), name="api-context"),
    path(CONTEXT + "events/", views.EventListView.as_view(), name="api-events"),
    path(CONTEXT + "events/<int:seq>/", views.EventDetailView.as_view(), name="api-event"),
    path(CONTEXT + "evaluations/", views.EvaluationView.as_view(), name="api-evaluations"),
    path(
        CONTEXT + "evaluations/<int:evaluation_id>/",
        views_history.EvaluationDetailView.as_view(),
        name="api-evaluation",
    ),
    path(CONTEXT + "forks/", views_history.ForkView.as_view(), name="api-forks"),
    path(CONTEXT + "diff/", views_history.DiffView.as_view(), name="api-diff"),
    path(
        CONTEXT + "transactions/",
        views_memory.TransactionView.as_view(),
        name="api-transactions",
    ),
    path(CONTEXT + "frames/", views_memory.FrameListView.as_view(), name="api-frames"),
    path(
        CONTEXT + "frames/<str:frame_id>/",
        views_memory.FrameDetailView.as_view(),
        name="api-frame",
    ),
    path(
        CONTEXT + "frames/<str:frame_id>/body/",
        views_memory.FrameBodyView.as_view(),
        name="api-frame-body",
    ),
    path(
        CONTEXT + "frames/<str:frame_id>/revisions/<int:revision>/",
        views_memory.FrameRevisionView.as_view(),
        name="api-frame-revision",
    ),
    path(CONTEXT + "relations/", views_memory.RelationListView.as_view(), name="api-relations"),
    path(CONTEXT + "recall/", views_memory.RecallView.as_view(), name="api-recall"),
    path(CONTEXT + "search/", views_memory.SearchView.as_view(), name="api-search"),
    path(CONTEXT + "actions/", views.ActionView.as_view(), name="api-actions"),
    path(CONTEXT + "erasures/", views_erasure.ErasureView.as_view(), name="api-erasures"),
    path(CONTEXT + "protocol/", views_agents.ProtocolView.as_view(), name="api-protocol"),
    path(CONTEXT + "replies/", views_agents.ReplyView.as_view(), name="api-replies"),
    path(
        CONTEXT + "actions/<int:seq>/cancel/",
        views_agents.ActionCancelView.as_view(),
        name="api-action-cancel",
    ),
    # Anything else under /api/ answers the standard error shape (never Django's HTML 404).
    re_path(r"^[\s\S]*$", views.ApiNotFoundView.as_view(), name="api-not-found"),
]
