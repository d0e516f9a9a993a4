from django.urls import path
from django.views.i18n import JavaScriptCatalog

from . import manage, passwords, views

urlpatterns = [
    path("accounts/login/", views.ThrottledLoginView.as_view(), name="login"),
    path("accounts/logout/", views.SignOutView.as_view(), name="logout"),
    path("accounts/password/", passwords.PasswordChangeView.as_view(), name="password-change"),
    path("", views.home, name="home"),
    path("i18n/setlang/", views.set_language, name="set_language"),
    path("jsi18n/", JavaScriptCatalog.as_view(packages=["frontend"]), name="javascript-catalog"),
    path("campaigns/<int:pk>/annotate/", views.annotate, name="annotate"),
    path("campaigns/<int:pk>/disagreements/", views.disagreements, name="disagreements"),
    path("campaigns/<int:pk>/dashboard/", views.dashboard, name="dashboard"),
    path("assignments/<int:pk>/", views.assignment, name="assignment"),
    path("batches/<int:pk>/review/", views.review, name="review"),
    path("runs/", views.runs, name="runs"),
    path("reports/<slug:slug>/", views.report, name="report-page"),
    path("reports/<slug:slug>/embed/", views.report_embed, name="report-embed"),
    path("reports/<slug:slug>/status/", views.report_status, name="report-status"),
    path("reports/<slug:slug>/download/<str:fmt>/", views.report_download, name="report-download"),
    path("manage/", manage.manage_home, name="manage"),
    path("manage/upload/", manage.upload, name="manage-upload"),
    path("manage/verdicts/", manage.verdicts, name="manage-verdicts"),
    path("manage/benchmarks/<slug:slug>/lm-eval/", manage.lmeval_task, name="manage-lmeval-task"),
    path("manage/campaigns/new/", manage.campaign_new, name="manage-campaign-new"),
    path("manage/campaigns/<int:pk>/", manage.campaign_overview, name="manage-campaign"),
    path("manage/campaigns/<int:pk>/cut/", manage.cut, name="manage-cut"),
    path("manage/campaigns/<int:pk>/settings/", manage.campaign_settings, name="manage-settings"),
    path("manage/campaigns/<int:pk>/members/", manage.members, name="manage-members"),
    path("manage/campaigns/<int:pk>/members/<int:user_pk>/reset-password/", manage.reset_password,
         name="manage-reset-password"),
    path("manage/memberships/<int:pk>/active/", manage.membership_active, name="manage-membership-active"),
    path("manage/invitations/<int:pk>/withdraw/", manage.withdraw_invitation, name="manage-withdraw-invitation"),
    path("invitations/<int:pk>/<str:answer>/", views.answer_invitation, name="answer-invitation"),
    path("manage/batches/<int:pk>/hand-in/", manage.hand_in, name="manage-hand-in"),
]
