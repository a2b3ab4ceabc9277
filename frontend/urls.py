from django.contrib.auth import views as auth_views
from django.urls import path

from frontend.views import config, events, failover, mirror_detail, overview

urlpatterns = [
    path("", overview.overview, name="dashboard"),
    path("login/", auth_views.LoginView.as_view(template_name="frontend/login.html"), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("events/", events.events, name="events"),
    path("clusters/", config.cluster_list, name="clusters"),
    path("clusters/new/", config.cluster_form, name="cluster-new"),
    path("clusters/<str:alias>/edit/", config.cluster_form, name="cluster-edit"),
    path("mirrors/", config.mirror_list, name="mirrors"),
    path("mirrors/new/", config.mirror_form, name="mirror-new"),
    path("mirrors/<str:name>/edit/", config.mirror_form, name="mirror-edit"),
    path("mirrors/<str:name>/failover/", failover.failover_page, name="mirror-failover-page"),
    path("mirrors/<str:name>/", mirror_detail.mirror_detail, name="mirror-detail"),
    path("import/", config.import_page, name="import"),
]
