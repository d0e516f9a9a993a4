"""Gold: making and freezing gold versions, and choosing the gold a campaign's or a benchmark's reports cite."""
from collections import Counter

from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from benchmarks.models import Benchmark, canonical_json
from benchmarks.permissions import staff_or_holder
from core.errors import ActionError, Code
from metrics import majority_vote

from ..models import (
    Annotation,
    BatchItem,
    BatchState,
    Campaign,
    EventKind,
    GoldLabel,
    GoldMethod,
    GoldVersion,
    ItemStatus,
    Protocol,
    Role,
)
from ._common import record_event, require_role


def create_gold_version(campaign, *, actor, method="campaign", note=""):
    """A new draft gold version for the campaign's benchmark.

    method "campaign": gold panel -> expert majority (adjudicated where a tie was decided); production ->
    the final labels of accepted batches; human baseline -> the raters' majority. method "source": the
    gold published with the data. Items still tied or unfinished are left out and counted.
    """
    require_role(actor, campaign, {Role.MANAGER}, "create gold versions")
    if method not in ("campaign", "source"):
        raise ActionError(Code.INVALID_VALUE, "method: expected 'campaign' or 'source'.")
    with transaction.atomic():
        Benchmark.objects.select_for_update().get(pk=campaign.benchmark_id)
        versions = GoldVersion.objects.filter(benchmark_id=campaign.benchmark_id)
        number = (versions.aggregate(n=Max("number"))["n"] or 0) + 1
        version = GoldVersion.objects.create(benchmark_id=campaign.benchmark_id, campaign=campaign, number=number,
                                             note=note, created_by=actor)
        batch_items = BatchItem.objects.filter(campaign=campaign).select_related("item__task", "batch")
        labels, left_out, left_items = [], Counter(), {}
        if method == "source":
            for bi in batch_items:
                value = (bi.item.source_gold or {}).get(bi.item.task.form["primary"])
                if value is None:
                    left_out["no_source_gold"] += 1
                    left_items.setdefault("no_source_gold", []).append(bi.item_id)
                else:
                    labels.append(GoldLabel(version=version, item=bi.item, value=value, method=GoldMethod.SOURCE))
        else:
            votes = {}
            for bi_id, value in (Annotation.objects.filter(campaign=campaign, superseded_at__isnull=True)
                                 .values_list("batch_item_id", "value")):
                votes.setdefault(bi_id, []).append(value)
            panel = campaign.protocol == Protocol.GOLD_PANEL
            majority = GoldMethod.EXPERT_MAJORITY if panel else GoldMethod.ANNOTATOR_MAJORITY
            for bi in batch_items:
                if bi.status != ItemStatus.LABELLED or bi.final_value is None:
                    why = bi.status if bi.status != ItemStatus.LABELLED else "tie"
                    left_out[why] += 1
                    left_items.setdefault(why, []).append(bi.item_id)
                    continue
                if campaign.protocol == Protocol.PRODUCTION and bi.batch.state != BatchState.ACCEPTED:
                    left_out["batch_not_accepted"] += 1
                    left_items.setdefault("batch_not_accepted", []).append(bi.item_id)
                    continue
                vote = majority_vote(votes.get(bi.pk, []))
                labels.append(GoldLabel(version=version, item=bi.item, value=bi.final_value,
                                        method=GoldMethod.ADJUDICATED if bi.final_method == "adjudicated" else majority,
                                        votes={str(k): n for k, n in vote.votes.items()}, margin=vote.margin))
        GoldLabel.objects.bulk_create(labels)
        if left_items:
            version.left_out = {why: sorted(ids) for why, ids in left_items.items()}
            version.save(update_fields=["left_out"])
        record_event(campaign, EventKind.GOLD_VERSION_CREATED, actor=actor, reason=note,
                     figures={"version": number, "method": method, "labels": len(labels), "left_out": dict(left_out)})
    return version


def freeze_gold_version(version, *, actor):
    """Freeze a gold version so that reports can cite it; from then on it refuses every write."""
    require_role(actor, version.campaign, {Role.MANAGER}, "freeze gold versions")
    with transaction.atomic():
        version = GoldVersion.objects.select_for_update().get(pk=version.pk)
        if version.frozen_at:
            raise ActionError(Code.GOLD_FROZEN, f"{version.citation} is already frozen.")
        version.frozen_at, version.frozen_by = timezone.now(), actor
        version.save()
        record_event(version.campaign, EventKind.GOLD_VERSION_FROZEN, actor=actor,
                     figures={"version": version.number, "citation": version.citation,
                              "labels": version.labels.count()})
    return version


def pin_gold_version(campaign, version, *, actor, reason=""):
    """Choose the gold this campaign's reports cite (None: the gold published with the data).

    Only a manager of the campaign chooses, only a frozen version of its benchmark, and only one made from
    this campaign or chosen as the benchmark's gold: another campaign's gold is never taken over by
    accident. A version derived from this campaign's raters (their own majority) is refused: it would
    score them against themselves.
    """
    from ..models import BenchmarkGold
    from ..selectors import circular_gold

    require_role(actor, campaign, {Role.MANAGER}, "choose its gold")
    with transaction.atomic():
        campaign = Campaign.objects.select_for_update().get(pk=campaign.pk)
        if version is not None:
            if version.benchmark_id != campaign.benchmark_id:
                raise ActionError(Code.INVALID_VALUE, f"{version.citation} is not a gold version of this campaign's "
                                  "benchmark.")
            if version.frozen_at is None:
                raise ActionError(Code.INVALID_VALUE, f"{version.citation} is a draft; freeze it before pinning it.")
            chosen = BenchmarkGold.objects.filter(benchmark_id=campaign.benchmark_id, version=version).exists()
            if version.campaign_id != campaign.pk and not chosen:
                raise ActionError(Code.FORBIDDEN, f"{version.citation} was made from campaign {version.campaign_id}; "
                                  "a campaign pins its own gold or the one chosen for the benchmark.")
            circular = circular_gold(version, [campaign.pk]).get(campaign.pk)
            if circular:
                raise ActionError(Code.INVALID_VALUE, circular + "; pin the source gold or an expert panel's gold.")
        previous = campaign.pinned_gold
        campaign.pinned_gold = version
        campaign.save(update_fields=["pinned_gold"])
        record_event(campaign, EventKind.GOLD_VERSION_PINNED, actor=actor, reason=reason,
                     figures={"version": version.number if version else None,
                              "citation": version.citation if version else "source",
                              "previous": previous.citation if previous else "source"})
    return campaign


def may_choose_benchmark_gold(user):
    return staff_or_holder(user, "annotation.choose_benchmark_gold")


def choose_benchmark_gold(benchmark, version, *, actor, reason=""):
    """Choose the gold a benchmark-level report cites (None: the source gold); staff or holders of
    the `annotation.choose_benchmark_gold` permission only. Recorded as a BenchmarkGold row and, for a
    version, as an event of the campaign it was made from."""
    from ..models import BenchmarkGold

    if not may_choose_benchmark_gold(actor):
        raise ActionError(Code.FORBIDDEN, "Only staff or holders of the benchmark-gold permission may choose a "
                          "benchmark's gold.")
    if version is not None:
        if version.benchmark_id != benchmark.pk:
            raise ActionError(Code.INVALID_VALUE, f"{version.citation} is not a gold version of {benchmark.slug}.")
        if version.frozen_at is None:
            raise ActionError(Code.INVALID_VALUE, f"{version.citation} is a draft; freeze it first.")
    with transaction.atomic():
        Benchmark.objects.select_for_update().get(pk=benchmark.pk)
        choice = BenchmarkGold.objects.create(benchmark=benchmark, version=version, chosen_by=actor, reason=reason)
        if version is not None:
            record_event(version.campaign, EventKind.GOLD_VERSION_CHOSEN_FOR_BENCHMARK, actor=actor, reason=reason,
                         figures={"version": version.number, "citation": version.citation, "benchmark": benchmark.slug})
    return choice


def import_gold_version(campaign, labels, *, note):
    """A gold version published with a data set (a Hugging Face export of ours): `labels` [(item, value, method, votes,
    margin)] as a frozen version of the campaign's benchmark, made from `campaign`, and chosen as the benchmark's
    gold, inside the caller's transaction (the importer checked who imports). A version of the benchmark with the
    same note and the same labels is returned as it is: importing twice adds nothing. (version, created)."""
    from ..models import BenchmarkGold

    Benchmark.objects.select_for_update().get(pk=campaign.benchmark_id)
    wanted = sorted((item.pk, canonical_json(value), method) for item, value, method, _, _ in labels)
    for version in GoldVersion.objects.filter(benchmark_id=campaign.benchmark_id, note=note, frozen_at__isnull=False):
        stored = version.labels.values_list("item_id", "value", "method")
        if sorted((i, canonical_json(v), m) for i, v, m in stored) == wanted:
            return version, False
    number = (GoldVersion.objects.filter(benchmark_id=campaign.benchmark_id).aggregate(n=Max("number"))["n"] or 0) + 1
    version = GoldVersion.objects.create(benchmark_id=campaign.benchmark_id, campaign=campaign, number=number,
                                         note=note)
    GoldLabel.objects.bulk_create([GoldLabel(version=version, item=item, value=value, method=method, votes=votes,
                                             margin=margin) for item, value, method, votes, margin in labels])
    version.frozen_at = timezone.now()
    version.save(update_fields=["frozen_at"])
    BenchmarkGold.objects.create(benchmark_id=campaign.benchmark_id, version=version, reason=note)
    record_event(campaign, EventKind.GOLD_VERSION_CREATED, reason=note,
                 figures={"version": number, "method": "imported", "labels": len(labels), "left_out": {}})
    record_event(campaign, EventKind.GOLD_VERSION_FROZEN, figures={"version": number, "citation": version.citation,
                                                                   "labels": len(labels)})
    return version, True
