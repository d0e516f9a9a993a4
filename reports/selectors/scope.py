"""Which benchmark, campaign and gold a report covers (the gold chosen and why: reports.gold)."""
from __future__ import annotations

from dataclasses import dataclass

from annotation.models import Campaign, GoldVersion
from benchmarks.models import Benchmark
from core.errors import ActionError, Code

from ..gold import GoldChoice, GoldRefused, resolve_gold


@dataclass(frozen=True)
class Scope:
    benchmark: Benchmark
    campaign: Campaign | None
    gold_version: GoldVersion | None  # None: the gold published with the data (item.source_gold)
    gold: GoldChoice | None = None  # which gold, chosen by whom and why (reports.gold)


def resolve_scope(benchmark_slug, campaign_id=None, gold_version=None) -> Scope:
    """The benchmark, optional campaign and the gold the report cites (see reports.gold.resolve_gold:
    the campaign's pinned gold, the benchmark's chosen gold, or the source gold; never a draft, never
    a gold derived from the labels it would score)."""
    benchmark = Benchmark.objects.filter(slug=benchmark_slug).first()
    if benchmark is None:
        raise ActionError(Code.NOT_FOUND, f"no benchmark {benchmark_slug!r}")
    campaign = None
    if campaign_id not in (None, ""):
        campaign = Campaign.objects.filter(pk=campaign_id, benchmark=benchmark).select_related("pinned_gold").first()
        if campaign is None:
            raise ActionError(Code.NOT_FOUND, f"no campaign {campaign_id} in benchmark {benchmark_slug!r}")
    try:
        choice = resolve_gold(benchmark, campaign, gold_version)
    except LookupError as error:
        raise ActionError(Code.NOT_FOUND, str(error)) from None
    except GoldRefused as error:
        raise ActionError(Code.INVALID_SCOPE, str(error)) from None
    return Scope(benchmark, campaign, choice.version, choice)
