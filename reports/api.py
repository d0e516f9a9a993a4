from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import renderers, serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from .access import ReportPending, report_for
from .contract import EQUIVALENCE_MARGIN_MAX, ReportOptions
from .limits import report_slot
from .readable import GAP_RULES
from .render import FORMATS

PENDING_RETRY_AFTER_S = 2


class ReportRenderer(renderers.BaseRenderer):
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        # A served report arrives as its text (reports.access.report_for); an error or progress as a dict.
        return (data if isinstance(data, str) else FORMATS[self.format][0](data)).encode("utf-8")


def renderer(fmt):
    _, media_type, _ = FORMATS[fmt]
    return type(f"{fmt.title()}ReportRenderer", (ReportRenderer,), {"format": fmt, "media_type": media_type})


class ReportQuery(serializers.Serializer):
    benchmark = serializers.SlugField()
    campaign = serializers.IntegerField(required=False, min_value=1)
    gold_version = serializers.IntegerField(required=False, min_value=1)
    rule = serializers.ChoiceField(choices=list(GAP_RULES), required=False)
    min_items = serializers.IntegerField(required=False, min_value=0, max_value=1_000_000)
    min_agreement_items = serializers.IntegerField(required=False, min_value=0, max_value=1_000_000)
    min_raters = serializers.IntegerField(required=False, min_value=0, max_value=1000)
    equivalence_margin = serializers.FloatField(required=False, min_value=0, max_value=EQUIVALENCE_MARGIN_MAX)

    OPTIONS = ("rule", "min_items", "min_agreement_items", "min_raters", "equivalence_margin")


@extend_schema(
    parameters=[
        OpenApiParameter("benchmark", str, required=True, description="Benchmark slug"),
        OpenApiParameter("campaign", int, description="Only this campaign's items and labels"),
        OpenApiParameter("gold_version", int, description="Frozen gold version number (default: the campaign's pinned "
                                                          "gold, or the benchmark's chosen gold, else the gold "
                                                          "published with the data)"),
        OpenApiParameter("format", str, enum=list(FORMATS), description="json (default), csv, html or latex"),
        OpenApiParameter("rule", str, enum=list(GAP_RULES), description="How log-likelihood runs are scored for the "
                                                                        "gap: each run's own rule (default), acc, "
                                                                        "acc_norm or per_token"),
        OpenApiParameter("min_items", int, description="Figures from fewer items are flagged small sample (30)"),
        OpenApiParameter("min_agreement_items", int, description="Agreement from fewer items is flagged (30)"),
        OpenApiParameter("min_raters", int, description="Agreement from fewer raters per item is flagged (3)"),
        OpenApiParameter("equivalence_margin", float, description="A gap whose confidence sequence lies within "
                                                                  "[-margin, margin] is equivalent (0.05; 0 to 10)"),
    ],
    responses={(200, "application/json"): OpenApiTypes.OBJECT, (202, "application/json"): OpenApiTypes.OBJECT,
               (200, "text/csv"): OpenApiTypes.STR, (200, "text/html"): OpenApiTypes.STR,
               (200, "application/x-latex"): OpenApiTypes.STR},
    description="The human-versus-model report; keys are documented in reports/SCHEMA.md. A campaign's report is "
                "for staff, researchers and the campaign's managers, viewers and experts (not a gold panel's voting "
                "experts; none but staff who label on the benchmark); a benchmark-wide one for staff and researchers "
                "(not those who label on it) (reports/access.py). Reports are computed on the `cpu` queue and stored: "
                "while one is computed (none yet, or an input changed since) the answer is 202 with its state and "
                "progress, and Retry-After.",
)
class ReportView(APIView):
    permission_classes = [IsAuthenticated]
    # DRF picks the renderer from ?format=, so each format is a renderer; JSON first as the default.
    renderer_classes = [renderer(fmt) for fmt in FORMATS]

    def get(self, request):
        query = ReportQuery(data=request.query_params)
        if not query.is_valid():
            return Response({"code": "invalid_query", "detail": "Some parameters are not valid.",
                             "errors": query.errors}, status=400)
        scope = {k: v for k, v in query.validated_data.items() if k not in ReportQuery.OPTIONS}
        chosen = {k: v for k, v in query.validated_data.items() if k in ReportQuery.OPTIONS}
        fmt = request.accepted_renderer.format
        try:
            with report_slot(request):
                report = report_for(request.user, **scope, options=ReportOptions(**chosen), fmt=fmt)
        except ReportPending as pending:
            return Response(pending.as_dict(), status=202, headers={"Retry-After": str(PENDING_RETRY_AFTER_S)})
        response = Response(report)
        if fmt != "json":
            name = f"report-{query.validated_data['benchmark']}.{FORMATS[fmt][2]}"
            response["Content-Disposition"] = f'inline; filename="{name}"'
        return response

    def finalize_response(self, request, response, *args, **kwargs):
        # Errors and "still computing" are JSON ({"detail": ...}) whatever format was asked for.
        if ((response.status_code >= 400 or response.status_code == 202)
                and getattr(request, "accepted_renderer", None) is not None):
            request.accepted_renderer, request.accepted_media_type = renderers.JSONRenderer(), "application/json"
        return super().finalize_response(request, response, *args, **kwargs)
