from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import renderers, serializers
from rest_framework.exceptions import APIException, NotFound
from rest_framework.permissions import BasePermission, IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from benchmarks.permissions import can_see_gold

from .limits import ReportBusy, report_slot
from .render import FORMATS
from .selectors import ScopeError
from .service import make_report


class InvalidScope(APIException):
    status_code = 400
    default_code = "invalid_scope"


class CanReadReports(BasePermission):
    """Reports show gold and everyone's labels: staff and researchers only."""

    message = "Reports are for staff and researchers."

    def has_permission(self, request, view):
        return can_see_gold(request.user)


class ReportRenderer(renderers.BaseRenderer):
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        return FORMATS[self.format][0](data).encode("utf-8")


def renderer(fmt):
    _, media_type, _ = FORMATS[fmt]
    return type(f"{fmt.title()}ReportRenderer", (ReportRenderer,), {"format": fmt, "media_type": media_type})


class ReportQuery(serializers.Serializer):
    benchmark = serializers.SlugField()
    campaign = serializers.IntegerField(required=False, min_value=1)
    gold_version = serializers.IntegerField(required=False, min_value=1)


@extend_schema(
    parameters=[
        OpenApiParameter("benchmark", str, required=True, description="Benchmark slug"),
        OpenApiParameter("campaign", int, description="Only this campaign's items and labels"),
        OpenApiParameter("gold_version", int, description="Frozen gold version number (default: the newest frozen one, "
                                                          "else the gold published with the data)"),
        OpenApiParameter("format", str, enum=list(FORMATS), description="json (default), csv, html or latex"),
    ],
    responses={(200, "application/json"): OpenApiTypes.OBJECT, (200, "text/csv"): OpenApiTypes.STR,
               (200, "text/html"): OpenApiTypes.STR, (200, "application/x-latex"): OpenApiTypes.STR},
    description="The human-versus-model report; keys are documented in reports/SCHEMA.md.",
)
class ReportView(APIView):
    permission_classes = [IsAuthenticated & CanReadReports]
    # DRF picks the renderer from ?format=, so each format is a renderer; JSON first as the default.
    renderer_classes = [renderer(fmt) for fmt in FORMATS]

    def get(self, request):
        query = ReportQuery(data=request.query_params)
        if not query.is_valid():
            return Response({"code": "invalid_query", "detail": "Some parameters are not valid.", "errors": query.errors},
                            status=400)
        try:
            with report_slot(request):
                report = make_report(**query.validated_data)
        except ScopeError as error:
            raise (NotFound if error.status == 404 else InvalidScope)(str(error)) from None
        except ReportBusy as busy:
            return Response(busy.as_dict(), status=429, headers={"Retry-After": str(busy.retry_after)})
        fmt = request.accepted_renderer.format
        response = Response(report)
        if fmt != "json":
            name = f"report-{query.validated_data['benchmark']}.{FORMATS[fmt][2]}"
            response["Content-Disposition"] = f'inline; filename="{name}"'
        return response

    def finalize_response(self, request, response, *args, **kwargs):
        # Errors are JSON ({"detail": ...}) whatever format was asked for.
        if response.status_code >= 400 and getattr(request, "accepted_renderer", None) is not None:
            request.accepted_renderer, request.accepted_media_type = renderers.JSONRenderer(), "application/json"
        return super().finalize_response(request, response, *args, **kwargs)
