"""Which gold scores whom: gold derived from people's labels, and the campaigns it would score circularly."""
from collections import defaultdict

from ..models import Annotation


def gold_is_derived(version):
    """True when a gold version was made from people's labels (a majority or an adjudication), not
    copied from the gold published with the data."""
    from ..models import GoldMethod

    return version.labels.exclude(method=GoldMethod.SOURCE).exists()


def circular_gold(version, campaign_ids):
    """{campaign id: reason} for each campaign whose people would be scored against their own labels by
    `version`: the campaign the version was derived from, and every campaign sharing a rater with it.
    Empty for a version copied from the source gold."""
    if version is None or not campaign_ids or not gold_is_derived(version):
        return {}
    source = version.campaign_id
    raters = set(Annotation.objects.filter(campaign_id=source).values_list("annotator_id", flat=True).distinct())
    shared = defaultdict(set)
    for campaign_id, rater in (Annotation.objects.filter(campaign_id__in=campaign_ids, annotator_id__in=raters)
                               .exclude(campaign_id=source).values_list("campaign_id", "annotator_id").distinct()):
        shared[campaign_id].add(rater)
    out = {}
    for campaign_id in campaign_ids:
        if campaign_id == source:
            out[campaign_id] = (f"{version.citation} was derived from this campaign's own labels: scoring its raters "
                                "against it would be circular")
        elif shared.get(campaign_id):
            out[campaign_id] = (f"{version.citation} was derived from the labels of campaign {source}, which shares "
                                f"{len(shared[campaign_id])} rater(s) with this campaign: scoring them against it "
                                "would be circular")
    return out
