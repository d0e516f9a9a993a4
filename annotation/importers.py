"""Ratings made outside the platform, imported as annotations of anonymous external raters.

FED: five ratings per quality per item, stored as the annotations of raters fed-rater-1..5 (position i
in the file; the file has no worker ids, so rater i is not known to be one person across items) in a
human_baseline campaign of their own. Text ratings such as "N/A (...)" are missing: the key is absent
from the answers, never 0. JUDGE-BENCH's unified format: every individual human score of each metric, rater i
being position i of `individual_human_scores` (judgebench-rater-1..N), as the study reads them; a position with no
score has no annotation. All or nothing; a second import adds nothing.
"""
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from benchmarks.formschema import question
from benchmarks.importers import ImportFailure, fed, judgebench
from benchmarks.models import Benchmark, Item

from . import actions
from .models import FINAL_STATUSES, Annotation, Batch, BatchItem, BatchState, Campaign, EventKind, Protocol

# Imported campaigns whose "raters" are positions in a file, not people: rater i is whoever gave the
# i-th rating of each item (FED has no worker ids). Reports mark them and keep them out of per-person tables.
FED_SOURCE = "import:fed"
JUDGEBENCH_SOURCE = "import:judgebench"
RATERS_ARE_POSITIONS = frozenset({FED_SOURCE, JUDGEBENCH_SOURCE})


@dataclass
class RatingsImportSummary:
    benchmark: str
    campaign: int
    raters: int
    annotations_created: int
    annotations_unchanged: int
    missing_ratings: int

    def __str__(self):
        return (f"{self.benchmark}: {self.annotations_created} annotations of {self.raters} external raters created in "
                f"campaign {self.campaign}, {self.annotations_unchanged} already there unchanged; "
                f"{self.missing_ratings} ratings missing (text notes such as FED's 'N/A', or no score), kept as "
                "missing values")


def external_raters(prefix, count, names=None):
    """Inactive users with unusable passwords: they stand for people, they never sign in. Named `prefix`-rater-i, or
    `prefix`-each of `names` (a file's own names of its raters)."""
    users = []
    for username in names and [f"{prefix}-{name}" for name in names] or [
            f"{prefix}-rater-{number}" for number in range(1, count + 1)]:
        user, created = get_user_model().objects.get_or_create(username=username, defaults={"is_active": False})
        if created:
            user.set_unusable_password()
            user.save(update_fields=["password"])
        users.append(user)
    return users


def parse_fed_ratings(path, items):
    """(item, [answers of rater 1, 2, ...], missing count) per record, checked against each item's form."""
    rows, missing = [], 0
    for index, record in enumerate(fed.load_records(path)):
        where = f"item {index}"
        item = items.get(fed.external_id(index))
        if item is None:
            raise ImportFailure(path, where, "external_id", f"no item {fed.external_id(index)!r} in the benchmark; "
                                                            "import the items first with import_items --format fed")
        form = item.task.form
        per_rater = [dict() for _ in range(max(len(r) for r in record["annotations"].values()))]
        for quality, ratings in record["annotations"].items():
            key = fed.quality_key(quality)
            try:
                scale = question(form, key)["scale"]
            except StopIteration:
                raise ImportFailure(path, where, f"annotations.{quality}",
                                    f"no question {key!r} in task {item.task.slug}") from None
            for rater, rating in enumerate(ratings):
                value = fed.numeric_rating(rating)
                if value is None:
                    missing += 1
                    continue
                if not scale["min"] <= value <= scale["max"]:
                    raise ImportFailure(path, where, f"annotations.{quality}[{rater}]",
                                        f"expected a rating from {scale['min']} to {scale['max']}, got {value}")
                per_rater[rater][key] = value
        rows.append((item, per_rater))
    return rows, missing


def benchmark_items(path, benchmark_slug, format_name):
    benchmark = Benchmark.objects.filter(slug=benchmark_slug).first()
    if benchmark is None:
        raise ImportFailure(path, None, "--benchmark", f"no benchmark {benchmark_slug!r}; import the items first with "
                                                       f"import_items --format {format_name}")
    items = {item.external_id: item for item in Item.objects.filter(task__benchmark=benchmark).select_related("task")}
    return benchmark, items


def parse_judgebench_ratings(path, items):
    """(item, [answers of position 1, 2, ...]) per instance; a position without a score of any metric is None."""
    _, _, records = judgebench.records(path)
    rows, missing = [], 0
    for record, scores in records:
        item = items.get(record.external_id)
        if item is None:
            raise ImportFailure(path, record.location, "id", f"no item {record.external_id!r} in the benchmark; "
                                                             "import the items first with import_items")
        per_position = [dict() for _ in range(max(len(values) for values in scores.values()))]
        for key, values in scores.items():
            for position, value in enumerate(values):
                if value is None:
                    missing += 1
                else:
                    per_position[position][key] = value
        rows.append((item, [answers or None for answers in per_position]))
    return rows, missing


def store_position_ratings(path, benchmark, rows, missing, *, format_name, source, prefix, name, description,
                           rater_names=None):
    """Rows of (item, [answers of rater position 1, 2, ...; None: no rating]) as the annotations of external raters
    in the benchmark's campaign of that source (made on first import), each item's final value by the campaign's
    rule. Unchanged ratings are counted, changed ones refused. `rater_names`: the file's names of positions 1, 2, ...
    when its raters are people known across items (external_raters)."""
    n_raters = max(len(answers) for _, answers in rows)
    with transaction.atomic():
        raters = external_raters(prefix, n_raters, rater_names)
        campaign = Campaign.objects.filter(benchmark=benchmark, source=source).first()
        if campaign is None:
            campaign = actions.create_campaign(
                actor=None, name=name, benchmark=benchmark, protocol=Protocol.HUMAN_BASELINE, source=source,
                description=description,
                settings={"overlap": n_raters, "items_per_task": None, "batch_size": max(2000, len(rows))})
        settings = campaign.settings
        batch_items = {bi.item_id: bi for bi in BatchItem.objects.filter(campaign=campaign)}
        new_items = [item for item, _ in rows if item.pk not in batch_items]
        if new_items:
            batch = Batch.objects.create(campaign=campaign, number=actions.next_batch_number(campaign),
                                         state=BatchState.ANNOTATING, settings=settings)
            created = BatchItem.objects.bulk_create([
                BatchItem(campaign=campaign, batch=batch, item=item, position=i, needed=n_raters, taken=n_raters)
                for i, item in enumerate(new_items, start=1)])
            batch_items.update({bi.item_id: bi for bi in created})
            actions.record_event(campaign, EventKind.BATCH_STARTED, batch=batch, to_state=BatchState.ANNOTATING,
                                 reason=actions.RATINGS_IMPORTED, figures={"items": len(created)})
        earlier = Annotation.objects.filter(campaign=campaign, round=1)
        existing = {(bi_id, rater_id): answers
                    for bi_id, rater_id, answers in earlier.values_list("batch_item_id", "annotator_id", "answers")}
        now, new, unchanged, finals = timezone.now(), [], 0, []
        for item, answers_by_rater in rows:
            bi = batch_items[item.pk]
            primary = item.task.form["primary"]
            given = [(slot, rater, answers) for slot, (rater, answers)
                     in enumerate(zip(raters, answers_by_rater, strict=False), start=1) if answers is not None]
            for slot, rater, answers in given:
                before = existing.get((bi.pk, rater.pk))
                if before is not None:
                    if before != answers:
                        raise ImportFailure(path, f"item {item.meta.get('source_index', item.external_id)}",
                                            "annotations", f"{rater.username}'s ratings differ from those imported "
                                                           "before; refusing to overwrite them")
                    unchanged += 1
                    continue
                new.append(Annotation(campaign=campaign, batch_item=bi, item=item, annotator=rater, round=1, slot=slot,
                                      settings=settings, answers=answers, value=answers.get(primary), submitted_at=now))
            if bi.status not in FINAL_STATUSES:
                outcome = actions.round_outcome(bi, campaign, settings, 1, [a.get(primary) for _, _, a in given],
                                                [False] * len(given))
                bi.status, bi.final_value, bi.final_method = outcome.status, outcome.value, outcome.method
                finals.append(bi)
        Annotation.objects.bulk_create(new, batch_size=2000)
        BatchItem.objects.bulk_update(finals, ["status", "final_value", "final_method"], batch_size=2000)
        if new:
            actions.record_event(campaign, EventKind.RATINGS_IMPORTED, reason=str(path),
                                 figures={"format": format_name, "annotations": len(new), "unchanged": unchanged,
                                          "missing_ratings": missing, "raters": n_raters,
                                          "items": dict(Counter(item.task.slug for item, _ in rows))})
    return RatingsImportSummary(benchmark.slug, campaign.pk, n_raters, len(new), unchanged, missing)


@dataclass(frozen=True)
class RatingsFormat:
    title: str
    parse: Callable  # (path, {external id: item}) -> ([(item, [answers per rater position or None])], missing)
    source: str
    description: str


RATING_FORMATS = {
    "fed": RatingsFormat("FED", parse_fed_ratings, FED_SOURCE,
                         "FED crowd ratings, five per item; rater i is position i in the file, not known to be the "
                         "same person across items."),
    "judgebench": RatingsFormat("JUDGE-BENCH", parse_judgebench_ratings, JUDGEBENCH_SOURCE,
                                "Every individual human score of the JUDGE-BENCH file; rater i is position i of each "
                                "instance's scores (the study's reading), not known to be the same person across "
                                "items."),
}


def import_ratings(path, format_name, benchmark_slug):
    if format_name not in RATING_FORMATS:
        raise ImportFailure(path, None, "--format",
                            f"unknown ratings format {format_name!r}; expected one of {sorted(RATING_FORMATS)}")
    ratings = RATING_FORMATS[format_name]
    benchmark, items = benchmark_items(path, benchmark_slug, format_name)
    rows, missing = ratings.parse(path, items)
    return store_position_ratings(path, benchmark, rows, missing, format_name=format_name, source=ratings.source,
                                  prefix=format_name, name=f"{ratings.title} ratings ({benchmark_slug})",
                                  description=ratings.description)
