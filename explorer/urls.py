from django.urls import path

from explorer import views

app_name = "explorer"

urlpatterns = [
    path("", views.context_list, name="context_list"),
    path("contexts/<slug:slug>/", views.context_detail, name="context_detail"),
]
