from django.urls import path

from explorer.consumers import ContextConsumer

websocket_urlpatterns = [
    path("ws/contexts/<slug:slug>/", ContextConsumer.as_asgi()),
]
