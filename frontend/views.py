"""Pages. Each view checks who may open the page and hands the page its ids; the page's JS reads and
writes through the REST API, so the rules stay in the apps' actions and selectors."""
import io
import json
import tempfile
from contextlib import nullcontext
from pathlib import Path
from urllib.parse import urlencode

from django.contrib import admin, messages
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse, HttpResponseBadRequest, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext, gettext_noop
from django.views.decorators.clickjacking import xframe_options_sameorigin
from django.views.decorators.http import require_POST

import studies
from annotation import actions, policy, selectors
from annotation.models import Assignment, Batch, Invitation, Role
from annotation.permissions import can_create_campaigns
from benchmarks.formschema import localized
from benchmarks.models import Benchmark
from core.api import http_status
from core.errors import ActionError
from modeleval import arena, selfchat_runs, training
from modeleval.models import Backend, Mode, ModelSpec, PositionPolicy
from modeleval.permissions import can_evaluate_models
from reports.access import (
    ReportPending,
    check_report_access,
    readable_benchmark_reports,
    readable_report_campaigns,
    status_of,
    stored_report_for,
)
from reports.api import ReportQuery
from reports.contract import ReportOptions
from reports.hf_dataset import export_dataset, zip_folder
from reports.limits import ReportBusy, report_slot
from reports.readable import GAP_RULES, RULES
from reports.render import FORMATS
from studies.botchat import recipe as botchat

from .access import campaign_with_role, may_manage
from .throttling import guard
from .tokens import revoke_tokens

# The report page's downloads, by the names their formats go by.
REPORT_DOWNLOADS = {"html": "HTML", "csv": "CSV", "json": "JSON", "latex": "LaTeX"}
# The report option `rule`'s own choice ("run"); the others are named in reports.readable.RULES.
RUN_RULE_TEXT = gettext_noop("run: each run's own rule")


class ThrottledLoginView(auth_views.LoginView):
    """Django's sign-in under the one sign-in throttle (frontend/throttling.py)."""

    def post(self, request, *args, **kwargs):
        def attempt():
            response = super(ThrottledLoginView, self).post(request, *args, **kwargs)
            return response, response.status_code == 302 and request.user.is_authenticated

        return guard(request, request.POST.get("username", ""), attempt, lambda wait: sign_in_refused(request, wait))


class SignOutView(auth_views.LogoutView):
    """Django's sign-out; with "revoke_token" ticked (the default on every page's sign-out form) the person's API
    token ends too, so that a token copied from this session stops working with it."""

    def post(self, request, *args, **kwargs):
        if request.user.is_authenticated and request.POST.get("revoke_token"):
            revoke_tokens(request.user)
        return super().post(request, *args, **kwargs)


def admin_sign_out(request, extra_context=None):
    """The admin's sign-out (its own page, with no box to untick) ends the person's API token too, as the site's
    sign-out does by default: a token copied from the admin's session stops working with it."""
    if request.method == "POST" and request.user.is_authenticated:
        revoke_tokens(request.user)
    return admin.site.logout(request, extra_context)


def sign_in_refused(request, wait):
    """The sign-in page saying how long to wait (the throttle sets 429 and Retry-After)."""
    return render(request, "registration/login.html",
                  {"throttled_seconds": wait, "next": request.POST.get("next", "")})


@login_required
def home(request):
    user = request.user
    roles_by = policy.roles_by_campaign(user)
    campaigns = []
    with_report = readable_report_campaigns(user)
    for campaign in policy.visible_campaigns(user).order_by("name"):
        access = policy.access_of(user, campaign, roles_by.get(campaign.pk, ()))
        # The roles by their names in the person's language.
        campaigns.append({"campaign": campaign, "roles": [Role(role).label for role in sorted(access.roles)],
                          "may_manage": access.may_manage,
                          "waiting": selectors.waiting_for(access),
                          "report": campaign.pk in with_report})
    reports = readable_benchmark_reports(user).order_by("slug")
    return render(request, "frontend/home.html", {"campaigns": campaigns, "reports": reports,
                                                  "model_runs": can_evaluate_models(user), "manage": may_manage(user),
                                                  "invitations": [
                                                      {"invitation": i, "role": gettext(policy.ROLE_NAMES[i.role])}
                                                      for i in selectors.pending_invitations(user)]})


@login_required
@require_POST
def answer_invitation(request, pk, answer):
    """The invited person accepts or declines an invitation from their home page (someone else's is not found)."""
    invitation = get_object_or_404(Invitation.objects.select_related("campaign"), pk=pk, user=request.user)
    act = {"accept": actions.accept_invitation, "decline": actions.decline_invitation}.get(answer)
    if act is None:
        raise Http404
    try:
        act(invitation, actor=request.user)
    except ActionError as error:
        messages.error(request, error.detail)
    else:
        role = gettext(policy.ROLE_NAMES[invitation.role])
        messages.success(request, (gettext("You joined %(campaign)s as %(role)s.") if answer == "accept" else
                                   gettext("You declined to join %(campaign)s as %(role)s."))
                         % {"campaign": invitation.campaign.name, "role": role})
    return redirect("home")


@login_required
def annotate(request, pk):
    campaign, _ = campaign_with_role(request, pk, lambda c: {c.worker_role}, "label its items")
    return render(request, "frontend/annotate.html", {"campaign": campaign, "assignment_id": ""})


@login_required
def assignment(request, pk):
    """A lease by its URL (a bookmark, a reload): only its annotator may open it."""
    lease = get_object_or_404(Assignment.objects.select_related("campaign"), pk=pk)
    if lease.annotator_id != request.user.pk:
        raise PermissionDenied("This item is leased to someone else.")
    return render(request, "frontend/annotate.html", {"campaign": lease.campaign, "assignment_id": lease.pk})


@login_required
def review(request, pk):
    batch = get_object_or_404(Batch.objects.select_related("campaign", "settings"), pk=pk)
    campaign, access = campaign_with_role(request, batch.campaign_id, policy.READ_QC, "see QC reviews")
    estimates = selectors.annotator_estimates(campaign, batch=batch) if access.reads_annotator_figures else None
    return render(request, "frontend/review.html", {"batch": batch, "campaign": campaign, "reviews": access.reviews,
                                                    "estimates": estimates})


@login_required
def disagreements(request, pk):
    campaign, access = campaign_with_role(request, pk, policy.READ_DISAGREEMENTS, "see its disagreements")
    # A gold panel's experts vote blind: they may decide disagreements but the queue shows no names.
    blind = access.votes_blind
    # The most uncertain items under the annotator model, on request; never for blind voters (it reads labels).
    uncertain_first = request.GET.get("order") == "uncertain" and not blind
    return render(request, "frontend/disagreements.html", {
        "campaign": campaign, "can_resolve": access.may_resolve, "blind": blind,
        "tasks": {t.pk: localized(t.form, translation.get_language()) for t in campaign.tasks.all()},
        "estimates": selectors.annotator_estimates(campaign) if uncertain_first else None})


@login_required
def dashboard(request, pk):
    campaign, access = campaign_with_role(request, pk, policy.READ_BATCHES, "see its dashboard")
    # A batch links to its review page only for those the review page lets in (experts, say, are not).
    return render(request, "frontend/dashboard.html", {"campaign": campaign, "with_report": access.reads_gold,
                                                       "can_export": access.reads_labels,
                                                       "batch_links": access.holds(policy.READ_QC)})


@login_required
def runs(request):
    if not can_evaluate_models(request.user):
        raise PermissionDenied("Model runs are for staff and researchers.")
    return render(request, "frontend/runs.html", {
        "models": ModelSpec.objects.order_by("name"), "benchmarks": Benchmark.objects.order_by("slug"),
        "base_models": ModelSpec.objects.filter(backend=Backend.LOCAL, trained_by=None).order_by("name"),
        # Local checkpoints and models behind an API write self-chat dialogues; classifiers trained here cannot.
        "selfchat_models": ModelSpec.objects.filter(trained_by=None).exclude(source__startswith=ModelSpec.RELEASED)
        .order_by("name"),
        "training": training.DEFAULTS, "position_policies": PositionPolicy.choices,
        # Self-chat and arena pairs (modeleval.selfchat_runs, modeleval.arena), for the same people.
        "seed_benchmarks": selfchat_runs.seed_benchmarks(), "selfchat": selfchat_runs.DEFAULTS,
        "botchat": botchat.SELFCHAT_SETTINGS, "botchat_api": botchat.SELFCHAT_API_SETTINGS,
        "selfchat_presets": studies.presets_for(Mode.SELFCHAT),
        **selfchat_runs.CHOICES, "botchat_min_utterances": arena.BOTCHAT_ARENA_MIN_UTTERANCES,
        "can_create_campaigns": can_create_campaigns(request.user)})


def report_benchmark(request, slug, campaign):
    """The benchmark of a report page, when the user may read that report (reports.access)."""
    try:
        check_report_access(request.user, slug, campaign)
    except ActionError as error:
        raise PermissionDenied(str(error)) from None
    return get_object_or_404(Benchmark, slug=slug)


def campaign_parameter(request):
    """?campaign= of a report page: a campaign id, None when absent, or the 400 answer for anything else."""
    raw = request.GET.get("campaign", "")
    if raw == "":
        return None
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 18:
        return HttpResponseBadRequest("invalid_campaign: campaign must be a campaign id (digits).",
                                      content_type="text/plain; charset=utf-8")
    return int(raw)


def report_choices(request):
    """The reader's choices on a report page (the rule for the gap, the small-sample thresholds), checked by
    the API's own query rules; the 400 answer for a bad one."""
    given = {key: request.GET[key] for key in ReportQuery.OPTIONS if request.GET.get(key, "") != ""}
    query = ReportQuery(data={"benchmark": "page", **given})
    if not query.is_valid():
        return HttpResponseBadRequest(f"invalid_query: {dict(query.errors)}", content_type="text/plain; charset=utf-8")
    return {key: value for key, value in query.validated_data.items() if key in ReportQuery.OPTIONS}


def report_request(request, slug):
    """(benchmark, campaign, choices) of a report page's request, or the answer refusing it."""
    campaign, choices = campaign_parameter(request), report_choices(request)
    for refusal in (campaign, choices):
        if isinstance(refusal, HttpResponse):
            return refusal
    return report_benchmark(request, slug, campaign), campaign, choices


def stored_for_page(request, benchmark, campaign, choices, served=True):
    """The stored report as the reader may read it (reports.access.Served), or the answer saying why not; `served`: the
    report itself is sent, which the report limits count (reports.limits)."""
    try:
        with report_slot(request) if served else nullcontext():
            return stored_report_for(request.user, benchmark.slug, campaign, options=ReportOptions(**choices))
    except ReportBusy as busy:
        response = HttpResponse(busy.detail, status=http_status(busy), content_type="text/plain; charset=utf-8")
        response["Retry-After"] = str(busy.retry_after)
        return response
    except ActionError as error:
        return HttpResponse(str(error), status=http_status(error), content_type="text/plain")


@login_required
def report(request, slug):
    asked = report_request(request, slug)
    if isinstance(asked, HttpResponse):
        return asked
    benchmark, campaign, choices = asked
    query = urlencode({"benchmark": benchmark.slug, **({"campaign": campaign} if campaign is not None else {}),
                       **choices})
    downloads = [(fmt, name, f"{reverse('report-download', args=[benchmark.slug, fmt])}?{query}")
                 for fmt, name in REPORT_DOWNLOADS.items()]
    downloads.append(("hf", gettext("Hugging Face dataset (zip)"),
                      f"{reverse('report-dataset', args=[benchmark.slug])}?{query}"))
    defaults = ReportOptions()
    rules = [(rule, RUN_RULE_TEXT if rule == "run" else RULES[rule]) for rule in GAP_RULES]
    stored = stored_for_page(request, benchmark, campaign, choices, served=False)
    if isinstance(stored, HttpResponse):
        return stored
    return render(request, "frontend/report.html", {
        "benchmark": benchmark, "query": query, "downloads": downloads, "campaign": campaign, "rules": rules,
        "chosen": {key: choices.get(key, getattr(defaults, key)) for key in ReportQuery.OPTIONS},
        "status": status_of(stored.stored)})


@login_required
def report_status(request, slug):
    """How far the page's report has got (polled by the page while one is computed or after it went stale)."""
    asked = report_request(request, slug)
    if isinstance(asked, HttpResponse):
        return asked
    stored = stored_for_page(request, *asked, served=False)
    if isinstance(stored, HttpResponse):
        return stored
    return JsonResponse(status_of(stored.stored))


def _pending_download(request, asked, pending, fmt, fmt_name):
    """The page a download answers while its report is computed or stale (409): the reader downloads again when it
    is ready."""
    benchmark, campaign, choices = asked
    query = urlencode({**({"campaign": campaign} if campaign is not None else {}), **choices})
    return render(request, "frontend/report_pending.html", {
        "benchmark": benchmark, "fmt": fmt, "fmt_name": fmt_name, "status": pending.as_dict(),
        "report_url": f"{reverse('report-page', args=[benchmark.slug])}?{query}"}, status=409)


@login_required
def report_download(request, slug, fmt):
    """The page's report as a file in `fmt` once a fresh one is stored. While it is computed (or stale) the answer
    is a page saying so (409), never a file holding the progress: the reader downloads again when it is ready."""
    if fmt not in REPORT_DOWNLOADS:
        raise Http404("no such format")
    asked = report_request(request, slug)
    if isinstance(asked, HttpResponse):
        return asked
    benchmark = asked[0]
    served = stored_for_page(request, *asked)
    if isinstance(served, HttpResponse):
        return served
    try:
        text = served.fresh_text(fmt)
    except ReportPending as pending:
        return _pending_download(request, asked, pending, fmt, REPORT_DOWNLOADS[fmt])
    _, media_type, extension = FORMATS[fmt]
    response = HttpResponse(text, content_type=f"{media_type}; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="report-{benchmark.slug}.{extension}"'
    return response


@login_required
def report_dataset(request, slug):
    """The page's benchmark as a Hugging Face dataset, zipped (reports.hf_dataset): the card states the stored report's
    agreement, so it is a file only once a fresh report is stored, as the other downloads; the labels are those of
    the campaigns whose people the reader may see."""
    asked = report_request(request, slug)
    if isinstance(asked, HttpResponse):
        return asked
    benchmark, campaign, _ = asked
    served = stored_for_page(request, *asked)
    if isinstance(served, HttpResponse):
        return served
    try:
        report = json.loads(served.fresh_text("json"))
    except ReportPending as pending:
        return _pending_download(request, asked, pending, "hf", gettext("Hugging Face dataset (zip)"))
    campaigns = {c["campaign_id"] for c in report["campaigns"]} - set(served.hidden)
    if campaign is not None:
        campaigns &= {int(campaign)}
    archive = io.BytesIO()
    with tempfile.TemporaryDirectory(prefix="hb-dataset-") as folder:
        export_dataset(benchmark.slug, Path(folder), report=report, campaign_ids=campaigns,
                       gold_version=served.stored.query.get("gold_version"))
        zip_folder(folder, archive)
    response = HttpResponse(archive.getvalue(), content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="{benchmark.slug}-hf-dataset.zip"'
    return response


@login_required
@xframe_options_sameorigin
def report_embed(request, slug):
    """The HTML report in a frame of the report page (the API's own responses may not be framed); a stale
    report is shown while its successor is computed (the page says so)."""
    asked = report_request(request, slug)
    if isinstance(asked, HttpResponse):
        return asked
    stored = stored_for_page(request, *asked)
    if isinstance(stored, HttpResponse):
        return stored
    if not stored.has_report:
        return HttpResponse("The report is being computed.", status=202, content_type="text/plain; charset=utf-8")
    response = HttpResponse(stored.text("html"), content_type="text/html; charset=utf-8")
    response["Content-Security-Policy"] = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
    return response


def set_language(request):
    """The language switcher on every page: Django's set_language (the cookie, back to the page), and for a
    signed-in person their choice kept on the account."""
    from django.views.i18n import set_language as django_set_language

    from .preferences import choose_language

    response = django_set_language(request)
    if request.method == "POST" and request.user.is_authenticated:
        choose_language(request, request.POST.get("language", ""))
    return response
