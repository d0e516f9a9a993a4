from django.urls import re_path
from rest_framework.routers import SimpleRouter

from . import api, export_api

router = SimpleRouter()
router.register("campaigns", api.CampaignViewSet, basename="campaign")
router.register("memberships", api.MembershipViewSet, basename="membership")
router.register("batches", api.BatchViewSet, basename="batch")
router.register("assignments", api.AssignmentViewSet, basename="assignment")
router.register("annotations", api.AnnotationViewSet, basename="annotation")
router.register("disagreements", api.DisagreementViewSet, basename="disagreement")
router.register("gold-versions", api.GoldVersionViewSet, basename="gold-version")

urlpatterns = router.urls + [
    re_path(r"^campaigns/(?P<pk>[0-9]+)/annotations/export/$", export_api.AnnotationExportView.as_view(),
         name="campaign-annotations-export"),
]
