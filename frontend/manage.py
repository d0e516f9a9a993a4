"""The manager's pages: data upload, new campaigns from a protocol preset, settings, people and batches.

Django forms post to these views, which call the apps' actions; a refused action comes back as a message
on the page (nothing written), never as an error page.
"""
import json
import tempfile
from contextlib import ExitStack, contextmanager
from pathlib import Path

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db.models import Count
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.text import get_valid_filename
from django.utils.translation import gettext
from django.views.decorators.http import require_POST

from annotation import accounts, actions, selectors
from annotation.models import Batch, Invitation, Membership, Role
from annotation.permissions import can_create_campaigns
from annotation.presets import PRESETS
from benchmarks.actions import import_upload
from benchmarks.importers import ImportFailure, format_shapes
from benchmarks.models import Benchmark, Task
from benchmarks.permissions import can_import_items
from core.errors import ActionError
from modeleval.lmeval import export_zip
from modeleval.models import Mode
from modeleval.outside_runs import import_outside_run
from modeleval.permissions import can_evaluate_models
from reports.access import check_report_access
from reports.hf_dataset import import_dataset, looks_like_dataset
from reports.labelstudio import campaign_project
from reports.planner import campaign_plan
from reports.planner import judge_runs as planner_judges
from studies import presets_for

from .access import campaign_with_role, managed_campaigns, may_manage
from .forms import (
    HF_FORMAT,
    AccountsForm,
    CampaignForm,
    MembersForm,
    PlannerForm,
    PresetChoiceForm,
    SettingsChangeForm,
    UploadForm,
    VerdictsForm,
)


def managed(request, pk):
    campaign, _ = campaign_with_role(request, pk, {Role.MANAGER}, "manage it")
    return campaign


@login_required
def manage_home(request):
    if not may_manage(request.user):
        raise PermissionDenied("These pages are for managers.")
    benchmarks = Benchmark.objects.annotate(n_tasks=Count("tasks", distinct=True),
                                            n_items=Count("tasks__items")).order_by("slug")
    return render(request, "frontend/manage_home.html", {
        "campaigns": managed_campaigns(request.user).order_by("name"), "benchmarks": benchmarks,
        "can_create": can_create_campaigns(request.user), "can_import": can_import_items(request.user),
        "can_import_verdicts": can_evaluate_models(request.user), "lmeval_presets": presets_for(Mode.LOGLIKELIHOOD)})


@contextmanager
def saved_uploads(uploads, default_name):
    """[(path, name)] of several uploaded files, as saved_upload writes one."""
    with ExitStack() as stack:
        yield [stack.enter_context(saved_upload(upload, default_name)) for upload in uploads]


@contextmanager
def saved_upload(upload, default_name):
    """(path, name) of an uploaded file written to a temporary folder under its own (made safe) name, so that
    an importer's refusal names the file as given; the folder goes when the block ends."""
    name = get_valid_filename(Path(upload.name).name) or default_name
    with tempfile.TemporaryDirectory(prefix="hb-upload-") as folder:
        path = Path(folder) / name
        with open(path, "wb") as out:
            for chunk in upload.chunks():
                out.write(chunk)
        yield path, name


@login_required
def upload(request):
    if not can_import_items(request.user):
        raise PermissionDenied("Only staff or holders of benchmarks.add_item may import data.")
    initial = {"benchmark": request.GET.get("benchmark")} if request.GET.get("benchmark") else {}
    form = UploadForm(request.POST or None, request.FILES or None, initial=initial)
    failure = None
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        with saved_uploads(data["file"], "upload") as saved:
            try:
                if data["format"] == HF_FORMAT or (not data["format"] and all(looks_like_dataset(p) for p, _ in saved)):
                    fmt, summary = HF_FORMAT, import_dataset(saved, data["slug"], actor=request.user)
                else:
                    (path, name), = saved
                    fmt, summary = import_upload(path, actor=request.user, benchmark_slug=data["slug"],
                                                 format_name=data["format"], name=name, task=data["task"])
            except ImportFailure as error:
                failure = error
        if failure is None:
            name = ", ".join(name for _, name in saved)
            renamed = Task.objects.filter(benchmark__slug=summary.benchmark).exclude(source_names=[])
            also = f" Named otherwise in the source data: {'; '.join(t.names for t in renamed)}." if renamed else ""
            messages.success(request, f"Imported {name} as {fmt}: {summary}.{also}")
            where = f"/manage/?benchmark={summary.benchmark}"
            if request.headers.get("x-requested-with") == "XMLHttpRequest":
                return JsonResponse({"location": where})  # the page goes there itself, message unread
            return redirect(where)
    status = 400 if request.method == "POST" else 200
    return render(request, "frontend/manage_upload.html", {"form": form, "failure": failure,
                                                           "formats": format_shapes()}, status=status)


@login_required
def verdicts(request):
    """A judge's verdicts made elsewhere, imported as a finished run (modeleval.verdicts)."""
    if not can_evaluate_models(request.user):
        raise PermissionDenied("A judge's verdicts are imported by staff and researchers.")
    initial = {"benchmark": request.GET.get("benchmark")} if request.GET.get("benchmark") else {}
    form = VerdictsForm(request.POST or None, request.FILES or None, initial=initial)
    failure = None
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        with saved_upload(data["file"], "verdicts.jsonl") as (path, name):
            try:
                done = import_outside_run(data["format"], [path], benchmark=data["benchmark"],
                                          task=data["task"] or None, judge=data["judge"] or None,
                                          settings=data["judge_settings"], names=[name], user=request.user)
            except ImportFailure as error:
                failure = error
            except ActionError as error:
                form.add_error(None, error.detail)
        if failure is None and not form.errors:
            if done.created:
                messages.success(request, gettext("Imported %(n)d verdicts of %(judge)s as run %(run)d.") % {
                    "n": done.n_verdicts, "judge": data["judge"] or done.run.model.name, "run": done.run.pk})
            else:
                messages.info(request, gettext("Run %(run)d holds these verdicts already: nothing was added.") % {
                    "run": done.run.pk})
            return redirect(f"{reverse('manage-verdicts')}?benchmark={data['benchmark'].slug}")
    status = 400 if request.method == "POST" else 200
    return render(request, "frontend/manage_verdicts.html", {"form": form, "failure": failure}, status=status)


@login_required
def lmeval_task(request, slug):
    """The benchmark's multiple-choice tasks as an lm-evaluation-harness task folder (a zip), prompted as a
    log-likelihood run with the preset asked (?preset=...) prompts them (modeleval.lmeval)."""
    if not can_evaluate_models(request.user):
        raise PermissionDenied("lm-eval tasks are exported by staff and researchers.")
    benchmark = get_object_or_404(Benchmark, slug=slug)
    preset = request.GET.get("preset") or None
    try:
        data, exported = export_zip(benchmark, settings={"preset": preset} if preset else None)
    except ActionError as error:
        messages.error(request, error.detail)
        return redirect(f"{reverse('manage')}?benchmark={benchmark.slug}")
    response = HttpResponse(data, content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="{exported.group}.zip"'
    return response


@login_required
def campaign_new(request):
    if not can_create_campaigns(request.user):
        raise PermissionDenied("Only staff or holders of annotation.add_campaign may create campaigns.")
    source = request.POST if request.method == "POST" else request.GET
    # A link may name only the benchmark: the first preset then fills the settings.
    choice = PresetChoiceForm({"preset": next(iter(PRESETS)), **source.dict()} if "benchmark" in source else None,
                              initial={"preset": next(iter(PRESETS))})
    form = None
    if choice.is_valid():
        benchmark, preset = choice.cleaned_data["benchmark"], PRESETS[choice.cleaned_data["preset"]]
        if request.method == "POST":
            form = CampaignForm(request.POST, benchmark=benchmark)
            if form.is_valid():
                data = form.cleaned_data
                try:
                    campaign = actions.create_campaign(
                        actor=request.user, name=data["name"], description=data["description"], benchmark=benchmark,
                        protocol=data["protocol"], tasks=data["tasks"], settings=form.settings(),
                        worker_role=data["worker_role"])
                except ActionError as error:
                    form.add_action_errors(error)
                else:
                    messages.success(request, f"Campaign {campaign.name} created with the {preset.name} preset. "
                                              "Next: add people, then cut batches.")
                    return redirect("manage-members", campaign.pk)
        else:
            form = CampaignForm(benchmark=benchmark, initial={
                **preset.values(), "protocol": preset.protocol, "worker_role": preset.worker_role,
                "benchmark": benchmark.slug, "preset": preset.key,
                "tasks": [t.slug for t in benchmark.tasks.all()], "name": f"{benchmark.name}: {preset.name}"})
    status = 400 if request.method == "POST" else 200
    return render(request, "frontend/manage_campaign_new.html",
                  {"choice": choice, "form": form, "presets": PRESETS.values(),
                   "preset": PRESETS.get(choice.cleaned_data["preset"]) if choice.is_valid() else None},
                  status=status)


@login_required
def campaign_overview(request, pk):
    campaign = managed(request, pk)
    planner = PlannerForm(request.GET or None, judges=planner_judges(campaign))
    plan = None
    if planner.is_bound and planner.is_valid():
        plan = campaign_plan(campaign, planner.cleaned_data["judge"], target_width=planner.cleaned_data["width"],
                             confidence=planner.cleaned_data["confidence"])
    return render(request, "frontend/manage_campaign.html", {
        "campaign": campaign, "batches": selectors.batches_overview(campaign),
        "members": Membership.objects.filter(campaign=campaign, active=True).count(),
        "settings": campaign.settings, "estimates": selectors.annotator_estimates(campaign),
        "draw": (draw := selectors.active_draw_view(campaign)), "draw_message": draw and draw_message(draw),
        "planner": planner, "plan": plan})


LABELSTUDIO_PARTS = {"tasks": ("application/json", "json"), "config": ("application/xml", "xml")}


@login_required
def labelstudio_download(request, pk, part):
    """The campaign as a Label Studio project (reports.labelstudio): its tasks (JSON) or its labeling config (XML),
    for the campaign's managers who read its report (labels, gold and predictions travel in it)."""
    if part not in LABELSTUDIO_PARTS:
        raise Http404("no such part")
    campaign = managed(request, pk)
    try:
        check_report_access(request.user, campaign.benchmark.slug, campaign.pk)
        project = campaign_project(campaign, user=request.user)
    except ActionError as error:
        raise PermissionDenied(error.detail) from None
    media_type, extension = LABELSTUDIO_PARTS[part]
    body = (json.dumps(project["tasks"], ensure_ascii=False, indent=1) if part == "tasks"
            else project["label_config"])
    response = HttpResponse(body, content_type=f"{media_type}; charset=utf-8")
    response["Content-Disposition"] = (f'attachment; filename="labelstudio-campaign-{campaign.pk}-{part}.'
                                       f'{extension}"')
    return response


def _act(request, what, *args, **kwargs):
    """Run an action; its refusal becomes an error message on the page the manager goes back to."""
    try:
        return what(*args, **kwargs)
    except ActionError as error:
        messages.error(request, error.detail)
        return None


@login_required
@require_POST
def cut(request, pk):
    campaign = managed(request, pk)
    batches = _act(request, actions.cut_batches, campaign, actor=request.user)
    if batches:
        sizes = sum(b.items.count() for b in batches)
        draw = selectors.active_draw_view(campaign) if batches[0].items.filter(
            inclusion_probability__isnull=False).exists() else None
        messages.success(request, f"Cut {len(batches)} batch{'es' if len(batches) > 1 else ''} ({sizes} items)."
                         + (f" {draw_message(draw)}" if draw else ""))
    return redirect("manage-campaign", campaign.pk)


def spread_text(spread):
    return "none" if not spread else f"{spread['min']:.3f} to {spread['max']:.3f} (median {spread['median']:.3f})"


def draw_message(draw):
    """What active selection drew and left out, with the inclusion probabilities (selectors.active_draw_view)."""
    if "candidates" not in draw:  # drawn before the cut kept what it left out
        return f"Active selection drew {draw['drawn']} items by judge run {draw['judge_run']}."
    return (f"Active selection drew {draw['drawn']} of {draw['candidates']} items and left {draw['left_out']} out "
            f"(each item drawn on its own with its inclusion probability, {draw['budget']} expected; "
            f"{float(draw['uniform_share']):.0%} of the weight uniform, the rest by judge run {draw['judge_run']}'s "
            f"uncertainty). Inclusion probabilities of the items drawn: {spread_text(draw['probability_drawn'])}; "
            f"of those left out: {spread_text(draw['probability_left_out'])}. Each drawn item's is listed under "
            "Active selection.")


@login_required
@require_POST
def hand_in(request, pk):
    batch = get_object_or_404(Batch.objects.select_related("campaign"), pk=pk)
    managed(request, batch.campaign_id)
    try:
        actions.hand_in_batch(batch, actor=request.user)
    except ActionError as error:
        messages.error(request, error.detail)
    else:
        messages.success(request, f"Batch {batch.number} handed in; its QC sample is drawn." if batch.campaign.has_qc
                         else f"Batch {batch.number} is complete; this protocol has no QC step, so its final labels "
                              "go to the baseline and the gold.")
    return redirect("manage-campaign", batch.campaign_id)


@login_required
def campaign_settings(request, pk):
    campaign = managed(request, pk)
    current = campaign.settings
    form = SettingsChangeForm(request.POST or None, initial=current.values(), benchmark=campaign.benchmark)
    if request.method == "POST" and form.is_valid():
        changes = form.changes()
        if not changes:
            messages.info(request, "Nothing changed.")
            return redirect("manage-settings", campaign.pk)
        try:
            version = actions.update_settings(campaign, actor=request.user, changes=changes,
                                              note=form.cleaned_data["note"])
        except ActionError as error:
            form.add_action_errors(error)
        else:
            made = "a new version" if version.version != current.version else "the same version (no batch used it yet)"
            messages.success(request, f"Settings saved as version {version.version}, {made}: "
                                      + ", ".join(sorted(changes)) + ".")
            return redirect("manage-settings", campaign.pk)
    return render(request, "frontend/manage_settings.html",
                  {"campaign": campaign, "form": form, "current": current,
                   "versions": campaign.settings_versions.order_by("-version")},
                  status=400 if request.method == "POST" else 200)


@login_required
def members(request, pk):
    campaign = managed(request, pk)
    members_form, accounts_form, created = MembersForm(prefix="m"), AccountsForm(prefix="a"), None
    if request.method == "POST":
        if "create" in request.POST:
            accounts_form = AccountsForm(request.POST, prefix="a")
            if accounts_form.is_valid():
                try:
                    created = accounts.create_accounts(campaign, actor=request.user,
                                                       people=accounts_form.cleaned_data["people"],
                                                       role=accounts_form.cleaned_data["role"])
                except ActionError as error:
                    for problem in error.extra.get("errors") or [error.detail]:
                        accounts_form.add_error(None, problem)
                else:
                    accounts_form = AccountsForm(prefix="a")
        else:
            members_form = MembersForm(request.POST, prefix="m")
            remove = "remove" in request.POST
            if members_form.is_valid():
                names, role = members_form.cleaned_data["usernames"], members_form.cleaned_data["role"]
                change = accounts.remove_members if remove else accounts.add_members
                try:
                    done = change(campaign, actor=request.user, usernames=names, role=role)
                except ActionError as error:
                    for problem in error.extra.get("errors") or [error.detail]:
                        members_form.add_error(None, problem)
                else:
                    report_members_change(request, names, role, done)
                    return redirect("manage-members", campaign.pk)
    return members_page(request, campaign, members_form=members_form, accounts_form=accounts_form, created=created,
                        status=400 if request.method == "POST" and created is None else 200)


def report_members_change(request, names, role, done):
    """The message for a members change: who was removed, added, or invited (and waits for their acceptance)."""
    if not isinstance(done, accounts.MembersAdded):
        messages.success(request, f"{', '.join(names)} removed from the campaign as {role}.")
        return
    if done.added:
        messages.success(request, f"{', '.join(m.user.username for m in done.added)} added to the campaign as {role}.")
    if done.invited:
        messages.info(request, f"{', '.join(i.user.username for i in done.invited)} invited as {role}: they work "
                               "elsewhere or hold a site-wide role, so they join when they accept the invitation on "
                               "their own pages (or an administrator adds them).")


def members_page(request, campaign, *, members_form=None, accounts_form=None, created=None, status=200):
    """The people page; `created`: NewAccounts whose one-time passwords it shows, this once."""
    response = render(request, "frontend/manage_members.html", {
        "campaign": campaign, "members_form": members_form or MembersForm(prefix="m"),
        "accounts_form": accounts_form or AccountsForm(prefix="a"), "created": created,
        "may_create_accounts": accounts.may_create_accounts(request.user),
        "invitations": selectors.campaign_invitations(campaign),
        "memberships": Membership.objects.filter(campaign=campaign).select_related("user").order_by(
            "-active", "role", "user__username")}, status=status)
    if created:
        response["Cache-Control"] = "no-store"  # the passwords are shown once and kept nowhere
    return response


@login_required
@require_POST
def reset_password(request, pk, user_pk):
    """A member's password replaced by a new one-time password, shown on the people page this once."""
    campaign = managed(request, pk)
    person = get_object_or_404(get_user_model(), pk=user_pk)
    try:
        new = accounts.reset_password(campaign, actor=request.user, user=person)
    except ActionError as error:
        messages.error(request, error.detail)
        return redirect("manage-members", campaign.pk)
    return members_page(request, campaign, created=[new])


@login_required
@require_POST
def membership_active(request, pk):
    membership = get_object_or_404(Membership.objects.select_related("campaign", "user"), pk=pk)
    managed(request, membership.campaign_id)
    active = request.POST.get("active") == "1"
    if _act(request, actions.set_member_active, membership, actor=request.user, active=active):
        messages.success(request, f"{membership.user.username} {'restored' if active else 'removed'} "
                                  f"as {membership.role}.")
    return redirect("manage-members", membership.campaign_id)



@login_required
@require_POST
def withdraw_invitation(request, pk):
    invitation = get_object_or_404(Invitation.objects.select_related("campaign", "user"), pk=pk)
    managed(request, invitation.campaign_id)
    if _act(request, actions.withdraw_invitation, invitation, actor=request.user):
        messages.success(request, f"The invitation of {invitation.user.username} as {invitation.role} is withdrawn.")
    return redirect("manage-members", invitation.campaign_id)
