from django.urls import path

from .api import ReportView

urlpatterns = [path("reports/", ReportView.as_view(), name="report")]
