"""Campaigns, settings, members, and cutting a campaign's items into batches."""
import random
import statistics

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max
from django.utils.translation import gettext

from benchmarks.models import Benchmark, Item
from core.errors import ActionError, Code
from metrics.prediction_powered import inclusion_probabilities, poisson_draw

from .. import judges
from ..models import (
    WORKER_ROLES,
    Batch,
    BatchItem,
    BatchState,
    Campaign,
    CampaignSettings,
    EventKind,
    Membership,
    Protocol,
    Role,
    Selection,
)
from ..policy import account_reach
from ._common import PROTOCOL_DEFAULTS, current_settings, record_event, require_role


def _clean_settings(settings):
    """The fields' own bounds and rules (CampaignSettings), and an active-selection judge that is a run of the
    campaign's benchmark that can judge (annotation.judges)."""
    errors = {}
    try:
        settings.full_clean(exclude=["campaign"])
    except ValidationError as error:
        errors.update(error.message_dict)
    run, benchmark = settings.active_judge_run, settings.campaign.benchmark
    if run is not None and "active_judge_run" not in errors and not judges.is_judge_of(run, benchmark):
        errors["active_judge_run"] = [gettext("Run %(run)s is not a finished rating, yes/no or log-likelihood run of "
                                              "this campaign's benchmark.") % {"run": run}]
    if errors:
        raise ActionError(Code.INVALID_SETTINGS, "Some settings are not valid.", errors=errors)


def create_campaign(*, actor, name, benchmark, protocol, tasks=None, settings=None, selection=None, description="",
                    source="", worker_role=None):
    """A campaign on some tasks of one benchmark (all of them by default); its creator becomes manager.
    `worker_role`: who labels its items (its preset's; by default the protocol's, Campaign.worker_role_of)."""
    if protocol not in Protocol.values:
        raise ActionError(Code.INVALID_CAMPAIGN, f"Unknown protocol {protocol!r}; expected one of {Protocol.values}.")
    worker_role = worker_role or Campaign.worker_role_of(protocol)
    if worker_role not in WORKER_ROLES:
        raise ActionError(Code.INVALID_CAMPAIGN, f"Unknown labelling role {worker_role!r}; expected one of "
                          f"{[str(role) for role in WORKER_ROLES]}.")
    benchmark = benchmark if isinstance(benchmark, Benchmark) else Benchmark.objects.filter(slug=benchmark).first()
    if benchmark is None:
        raise ActionError(Code.INVALID_CAMPAIGN, "No such benchmark.")
    all_tasks = {task.slug: task for task in benchmark.tasks.all()}
    slugs = [getattr(t, "slug", t) for t in tasks] if tasks else list(all_tasks)
    unknown = [slug for slug in slugs if slug not in all_tasks]
    if unknown or not slugs:
        raise ActionError(Code.INVALID_CAMPAIGN, f"Tasks {unknown or slugs} are not tasks of {benchmark.slug}.")
    values = {**PROTOCOL_DEFAULTS[protocol], **(settings or {})}
    unknown = set(values) - set(CampaignSettings.EDITABLE)
    if unknown:
        raise ActionError(Code.INVALID_SETTINGS, f"Unknown settings {sorted(unknown)}.")
    selection = selection or {}
    if set(selection) - {"external_ids"} or not isinstance(selection.get("external_ids", []), list):
        raise ActionError(Code.INVALID_CAMPAIGN, 'selection: expected {} or {"external_ids": [...]}.')
    with transaction.atomic():
        campaign = Campaign.objects.create(name=name, description=description, benchmark=benchmark, protocol=protocol,
                                           selection=selection, source=source, worker_role=worker_role,
                                           created_by=actor if actor and actor.is_authenticated else None)
        campaign.tasks.set([all_tasks[slug] for slug in slugs])
        first = CampaignSettings(campaign=campaign, version=1, created_by=campaign.created_by, **values)
        _clean_settings(first)
        first.save()
        if campaign.created_by:
            Membership.objects.create(campaign=campaign, user=actor, role=Role.MANAGER)
        record_event(campaign, EventKind.CAMPAIGN_CREATED, actor=actor,
                     figures={"protocol": protocol, "worker_role": worker_role, "tasks": slugs,
                              "settings": first.values()})
    return campaign


def update_settings(campaign, *, actor, changes, note=""):
    """Change settings. A version a batch has started with is frozen: the change makes a new version,
    which later batches and later rounds use; running rounds keep theirs."""
    require_role(actor, campaign, {Role.MANAGER}, "change settings")
    unknown = set(changes) - set(CampaignSettings.EDITABLE)
    if unknown:
        raise ActionError(Code.INVALID_SETTINGS, f"Unknown settings {sorted(unknown)}.")
    with transaction.atomic():
        Campaign.objects.select_for_update().get(pk=campaign.pk)
        current = current_settings(campaign)
        frozen = Batch.objects.filter(settings=current).exists()
        target = current
        if frozen:
            target = CampaignSettings(campaign=campaign, version=current.version + 1, **current.values())
        for key, value in changes.items():
            setattr(target, key, value)
        target.note, target.created_by = note, actor
        _clean_settings(target)
        target.save()
        campaign._current_settings = target
        record_event(campaign, EventKind.SETTINGS_CHANGED, actor=actor, reason=note,
                     figures={"version": target.version, "new_version": frozen, "changes": changes})
    return target


def needs_acceptance(actor, user):
    """An ActionError (acceptance_required) when the actor may not give `user` a role alone (policy.account_reach),
    else None."""
    if (reason := account_reach(actor, user)) is not None:
        return ActionError(Code.ACCEPTANCE_REQUIRED,
                           f"{reason}: invite them instead (they accept or decline on their own pages), or ask an "
                           "administrator.", username=user.get_username())
    return None


def join(campaign, *, actor, user, role, figures=None):
    """The membership written (made, or made active again), with its event; the callers check who may."""
    with transaction.atomic():
        membership, created = Membership.objects.select_for_update().get_or_create(campaign=campaign, user=user,
                                                                                    role=role)
        if not created and membership.active:
            raise ActionError(Code.DUPLICATE, f"{user} is already {role} in this campaign.")
        membership.active = True
        membership.save()
        record_event(campaign, EventKind.MEMBER_ADDED, actor=actor,
                     figures={"user": user.username, "role": role, **(figures or {})})
    return membership


def add_member(campaign, *, actor, user, role):
    """A role given by a manager: only to a person whose account is theirs alone (policy.account_reach); anyone
    else is invited (actions.invite_member) and joins by accepting."""
    require_role(actor, campaign, {Role.MANAGER}, "add members")
    if role not in Role.values:
        raise ActionError(Code.INVALID_CAMPAIGN, f"Unknown role {role!r}; expected one of {Role.values}.")
    if (refusal := needs_acceptance(actor, user)) is not None:
        raise refusal
    return join(campaign, actor=actor, user=user, role=role)


def set_member_active(membership, *, actor, active):
    """Members leave by deactivation: their labels and events keep pointing at them. Giving a role back is giving
    it: the same rule as add_member."""
    require_role(actor, membership.campaign, {Role.MANAGER}, "change members")
    if active and (refusal := needs_acceptance(actor, membership.user)) is not None:
        raise refusal
    with transaction.atomic():
        membership.active = active
        membership.save(update_fields=["active"])
        record_event(membership.campaign, EventKind.MEMBER_ACTIVATED if active else EventKind.MEMBER_DEACTIVATED,
                     actor=actor, figures={"user": membership.user.username, "role": membership.role})
    return membership


def campaign_items(campaign, settings):
    """The campaign's item ids: the selection, or a seeded sample of `items_per_task` per task."""
    ids = []
    for task in campaign.tasks.order_by("slug"):
        items = Item.objects.filter(task=task)
        if campaign.selection.get("external_ids"):
            items = items.filter(external_id__in=campaign.selection["external_ids"])
        task_ids = sorted(items.values_list("pk", flat=True))
        if settings.items_per_task is not None and settings.items_per_task < len(task_ids):
            task_ids = sorted(random.Random(f"{settings.seed}:{task.slug}").sample(task_ids, settings.items_per_task))
        ids += task_ids
    return ids


def next_batch_number(campaign):
    """Batches are numbered 1, 2, ... per campaign, whoever makes them (cut here, or imported with ratings)."""
    return (campaign.batches.aggregate(n=Max("number"))["n"] or 0) + 1


def active_draw(campaign, settings, ids):
    """Active selection: each item drawn independently with a probability from the judge run's uncertainty mixed
    with uniform, `active_budget` items on average (metrics.prediction_powered), seeded. Items the judge has no
    reading for count as of the mean uncertainty. ({item id: inclusion probability} of the items drawn, the same of
    the items left out)."""
    uncertainty = judges.item_uncertainty(settings.active_judge_run, ids)
    if not uncertainty:
        raise ActionError(Code.INVALID_SETTINGS, f"Run {settings.active_judge_run} has no reading of this campaign's "
                          "items to draw them by (a rating, yes/no or log-likelihood run of its tasks is needed).")
    mean = sum(uncertainty.values()) / len(uncertainty)
    pi = inclusion_probabilities([uncertainty.get(pk, mean) for pk in ids], settings.active_budget,
                                 float(settings.active_uniform_share))
    drawn, left_out = {}, {}
    for pk, p, chosen in zip(ids, pi, poisson_draw(pi, f"{settings.seed}:active"), strict=True):
        (drawn if chosen else left_out)[pk] = float(p)
    return drawn, left_out


def probability_spread(probabilities):
    """Lowest, median and highest of some inclusion probabilities (None for none), as the cut's event keeps them."""
    if not probabilities:
        return None
    return {"min": round(min(probabilities), 4), "median": round(statistics.median(probabilities), 4),
            "max": round(max(probabilities), 4)}


def cut_batches(campaign, *, actor):
    """Cut the campaign's items not yet in a batch into batches of `batch_size`, in a seeded order. Under active
    selection the items are drawn once, all of the budget at the first cut, each with its inclusion probability
    kept on its batch item (and later on its leases), so that estimates can be weighted by it."""
    require_role(actor, campaign, {Role.MANAGER}, "cut batches")
    with transaction.atomic():
        Campaign.objects.select_for_update().get(pk=campaign.pk)
        settings = current_settings(campaign)
        done = set(BatchItem.objects.filter(campaign=campaign).values_list("item_id", flat=True))
        ids = [pk for pk in campaign_items(campaign, settings) if pk not in done]
        probability, left_out = {}, {}
        if settings.selection_mode == Selection.ACTIVE and ids:
            if BatchItem.objects.filter(campaign=campaign, inclusion_probability__isnull=False).exists():
                raise ActionError(Code.NOTHING_TO_CUT, "The items of this campaign were drawn by active selection "
                                                       "already; every item drawn is in a batch.")
            probability, left_out = active_draw(campaign, settings, ids)
            ids = [pk for pk in ids if pk in probability]
        if not ids:
            raise ActionError(Code.NOTHING_TO_CUT, "Every item of the campaign is already in a batch.")
        random.Random(f"{settings.seed}:cut").shuffle(ids)
        number = next_batch_number(campaign)
        batches = []
        for start in range(0, len(ids), settings.batch_size):
            chunk = ids[start:start + settings.batch_size]
            batch = Batch.objects.create(campaign=campaign, number=number)
            BatchItem.objects.bulk_create(
                [BatchItem(campaign=campaign, batch=batch, item_id=pk, position=i, needed=settings.overlap,
                           inclusion_probability=probability.get(pk))
                 for i, pk in enumerate(chunk, start=1)], batch_size=2000)
            figures = {"items": len(chunk), "settings_version": settings.version}
            if probability:
                # What the draw took and left: the manager is told both, with the inclusion probabilities.
                figures["active"] = {"judge_run": settings.active_judge_run, "budget": settings.active_budget,
                                     "uniform_share": settings.active_uniform_share, "drawn": len(ids),
                                     "candidates": len(ids) + len(left_out), "left_out": len(left_out),
                                     "probability_drawn": probability_spread(list(probability.values())),
                                     "probability_left_out": probability_spread(list(left_out.values()))}
            record_event(campaign, EventKind.BATCH_CREATED, batch=batch, actor=actor, to_state=BatchState.OPEN,
                         figures=figures)
            batches.append(batch)
            number += 1
    return batches
