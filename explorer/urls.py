from django.templatetags.static import static
from django.urls import path
from django.views.generic import RedirectView

from explorer import views

app_name = "explorer"

urlpatterns = [
    path("", views.context_list, name="context_list"),
    path("contexts/<slug:slug>/", views.context_detail, name="context_detail"),
    # Browsers ask for /favicon.ico by themselves, whatever the page's <link rel=icon> says.
    path("favicon.ico", RedirectView.as_view(url=static("favicon.svg"), permanent=True)),
]
