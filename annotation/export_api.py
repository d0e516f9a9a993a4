"""GET /api/v1/campaigns/ID/annotations/export/?format=csv|jsonl: the campaign's raw annotations."""
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import renderers
from rest_framework.response import Response
from rest_framework.views import APIView

from . import exports, policy
from .permissions import CanReadLabels


class ExportRenderer(renderers.BaseRenderer):
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        return exports.FORMATS[self.format][0](data).encode("utf-8")


def renderer(fmt):
    return type(f"{fmt.title()}AnnotationsRenderer", (ExportRenderer,),
                {"format": fmt, "media_type": exports.FORMATS[fmt][1]})


@extend_schema(
    parameters=[OpenApiParameter("format", str, enum=list(exports.FORMATS), description="csv (default) or jsonl")],
    responses={(200, "text/csv"): OpenApiTypes.STR, (200, "application/x-ndjson"): OpenApiTypes.STR},
    description="Every label of the campaign, one row each (superseded rounds included): annotator, round, "
                f"reading time, superseded flag and more ({', '.join(exports.COLUMNS)}). For those who may read the "
                "campaign's labels, as the annotations endpoint. CSV cells that a spreadsheet would read as a "
                "formula start with a single quote.")
class AnnotationExportView(APIView):
    permission_classes = [CanReadLabels]
    renderer_classes = [renderer(fmt) for fmt in exports.FORMATS]

    def get(self, request, pk):
        campaign = get_object_or_404(policy.visible_campaigns(request.user), pk=pk)
        self.check_object_permissions(request, campaign)
        fmt = request.accepted_renderer.format
        response = Response(exports.annotation_rows(exports.labels_for_export(request.user, campaign)))
        response["Content-Disposition"] = f'attachment; filename="annotations-campaign-{campaign.pk}.{fmt}"'
        return response

    def finalize_response(self, request, response, *args, **kwargs):
        # Errors are JSON ({"detail": ...}) whatever format was asked for.
        if response.status_code >= 400 and getattr(request, "accepted_renderer", None) is not None:
            request.accepted_renderer, request.accepted_media_type = renderers.JSONRenderer(), "application/json"
        return super().finalize_response(request, response, *args, **kwargs)
