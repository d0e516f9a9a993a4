from django.contrib.auth import views as auth_views
from django.urls import path

from . import views

urlpatterns = [
    path("accounts/login/", views.ThrottledLoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("", views.home, name="home"),
    path("campaigns/<int:pk>/annotate/", views.annotate, name="annotate"),
    path("campaigns/<int:pk>/disagreements/", views.disagreements, name="disagreements"),
    path("campaigns/<int:pk>/dashboard/", views.dashboard, name="dashboard"),
    path("assignments/<int:pk>/", views.assignment, name="assignment"),
    path("batches/<int:pk>/review/", views.review, name="review"),
    path("batches/<int:pk>/review/figures/", views.review_figures, name="review-figures"),
    path("runs/", views.runs, name="runs"),
    path("reports/<slug:slug>/", views.report, name="report-page"),
    path("reports/<slug:slug>/embed/", views.report_embed, name="report-embed"),
]
