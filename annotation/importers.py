"""Ratings made outside the platform, imported as annotations of anonymous external raters.

FED: five ratings per quality per item, stored as the annotations of raters fed-rater-1..5 (position i
in the file; the file has no worker ids, so rater i is not known to be one person across items) in a
human_baseline campaign of their own. Text ratings such as "N/A (...)" are missing: the key is absent
from the answers, never 0. JUDGE-BENCH's unified format: every individual human score of each metric, rater i
being position i of `individual_human_scores` (judgebench-rater-1..N), as the study reads them; a position with no
score has no annotation. A Label Studio export: each annotator apart, known by Label Studio's user id
(labelstudio-<benchmark>-<id>: the same id in another benchmark's file may be another person), every result of an
annotation that is not cancelled. All or nothing; a second import adds nothing.
"""
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from benchmarks.formschema import question
from benchmarks.importers import ImportFailure, fed, judgebench, labelstudio
from benchmarks.models import Benchmark, Item

from . import actions
from .models import FINAL_STATUSES, Annotation, Batch, BatchItem, BatchState, Campaign, EventKind, Protocol

# Imported campaigns whose "raters" are positions in a file, not people: rater i is whoever gave the
# i-th rating of each item (FED has no worker ids). Reports mark them and keep them out of per-person tables.
FED_SOURCE = "import:fed"
JUDGEBENCH_SOURCE = "import:judgebench"
LABELSTUDIO_SOURCE = "import:labelstudio"  # people known by their Label Studio ids: not positions
RATERS_ARE_POSITIONS = frozenset({FED_SOURCE, JUDGEBENCH_SOURCE})


@dataclass
class RatingsImportSummary:
    benchmark: str
    campaign: int
    raters: int
    annotations_created: int
    annotations_unchanged: int
    missing_ratings: int
    missing_are: str = "text notes such as FED's 'N/A', or no score"  # what a missing rating is in the file

    def __str__(self):
        return (f"{self.benchmark}: {self.annotations_created} annotations of {self.raters} external raters created in "
                f"campaign {self.campaign}, {self.annotations_unchanged} already there unchanged; "
                f"{self.missing_ratings} ratings missing ({self.missing_are}), kept as missing values")


def external_raters(prefix, count, names=None):
    """Inactive users with unusable passwords: they stand for people, they never sign in. `names`: the file's
    names of the raters (`<prefix>-<name>`), else their positions (`<prefix>-rater-<n>`)."""
    users = []
    usernames = [f"{prefix}-{n}"[:150] for n in names] if names else [f"{prefix}-rater-{n}"
                                                                          for n in range(1, count + 1)]
    for username in usernames:
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
    return rows, missing, None


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
    return rows, missing, None


def parse_labelstudio_labels(path, items):
    """(item, [answers of each annotator or None]) per task of a Label Studio export, annotators in the order of
    their user ids (then emails); cancelled annotations are counted as missing; and the annotators' ids."""
    _, tasks = labelstudio.records(path)
    # Items of different tasks may share an external id here: looked up by (task, external id).
    benchmarks = {item.task.benchmark_id for item in items.values()}
    by_task = {(item.task.slug, item.external_id): item
               for item in Item.objects.filter(task__benchmark__in=benchmarks).select_related("task")}
    people = sorted({label.annotator for task in tasks for label in task.labels},
                    key=lambda who: (not who.isdigit(), int(who) if who.isdigit() else 0, who))
    position = {who: index for index, who in enumerate(people)}
    rows, missing = [], 0
    for task in tasks:
        record = task.record
        item = by_task.get((record.task, record.external_id))
        if item is None:
            raise ImportFailure(path, record.location, "id", f"no item {record.external_id!r} of task {record.task!r} "
                                                             "in the benchmark; import the items first with "
                                                             "import_items --format labelstudio")
        missing += task.cancelled
        if task.labels:
            answers = [None] * len(people)
            for label in task.labels:
                answers[position[label.annotator]] = label.answers
            rows.append((item, answers))
    return rows, missing, people


def store_position_ratings(path, benchmark, rows, missing, *, format_name, source, prefix, name, description,
                           rater_names=None, missing_are=None):
    """Rows of (item, [answers of rater position 1, 2, ...; None: no rating]) as the annotations of external raters
    in the benchmark's campaign of that source (made on first import), each item's final value by the campaign's
    rule. Unchanged ratings are counted, changed ones refused. `rater_names`: what the file calls the rater of each
    position (users `<prefix>-<name>`), else the positions' numbers (`<prefix>-rater-<n>`). `missing_are`: what a
    missing rating is in this format, for the summary."""
    missing_are = {"missing_are": missing_are} if missing_are else {}
    if not rows:
        return RatingsImportSummary(benchmark.slug, None, 0, 0, 0, missing, **missing_are)
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
    return RatingsImportSummary(benchmark.slug, campaign.pk, n_raters, len(new), unchanged, missing, **missing_are)


@dataclass(frozen=True)
class RatingsFormat:
    title: str
    parse: Callable  # (path, {external id: item}) -> ([(item, [answers per rater position or None])], missing,
    #                  the file's names of the raters or None)
    source: str
    description: str
    missing_are: str | None = None  # what a missing rating is in the file, where not a text note or no score


RATING_FORMATS = {
    "fed": RatingsFormat("FED", parse_fed_ratings, FED_SOURCE,
                         "FED crowd ratings, five per item; rater i is position i in the file, not known to be the "
                         "same person across items."),
    "judgebench": RatingsFormat("JUDGE-BENCH", parse_judgebench_ratings, JUDGEBENCH_SOURCE,
                                "Every individual human score of the JUDGE-BENCH file; rater i is position i of each "
                                "instance's scores (the study's reading), not known to be the same person across "
                                "items."),
    "labelstudio": RatingsFormat("Label Studio", parse_labelstudio_labels, LABELSTUDIO_SOURCE,
                                 "The annotations of a Label Studio project export, each annotator apart (known by "
                                 "Label Studio's user id); cancelled annotations are no labels.",
                                 missing_are="cancelled annotations"),
}


def import_ratings(path, format_name, benchmark_slug):
    if format_name not in RATING_FORMATS:
        raise ImportFailure(path, None, "--format",
                            f"unknown ratings format {format_name!r}; expected one of {sorted(RATING_FORMATS)}")
    ratings = RATING_FORMATS[format_name]
    benchmark, items = benchmark_items(path, benchmark_slug, format_name)
    rows, missing, names = ratings.parse(path, items)
    prefix = f"{format_name}-{benchmark_slug}" if names else format_name
    return store_position_ratings(path, benchmark, rows, missing, format_name=format_name, source=ratings.source,
                                  prefix=prefix, name=f"{ratings.title} ratings ({benchmark_slug})",
                                  description=ratings.description, rater_names=names,
                                  missing_are=ratings.missing_are)
