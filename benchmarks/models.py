import hashlib

import orjson
from django.core.exceptions import ValidationError
from django.db import models

from .formschema import validate_form


def canonical_json(value):
    """Sorted keys, no spaces, UTF-8 text: the same bytes for the same content, whatever the key order."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def hash_of_encoded(dialogue_json, fields_json, meta_json, source_gold_json):
    """The content hash from the canonical JSON of each part: equal to hashing the canonical JSON of
    {"dialogue", "fields", "meta", "source_gold"}, and lets an importer encode each part only once."""
    payload = (f'{{"dialogue":{dialogue_json},"fields":{fields_json},"meta":{meta_json},'
               f'"source_gold":{source_gold_json}}}')
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def content_hash(dialogue, fields, meta, source_gold):
    return hash_of_encoded(*map(canonical_json, (dialogue, fields, meta, source_gold)))


def referred_to_by(model, rows):
    """Names of the kinds of rows (labels, gold, predictions, batches, campaigns, runs) that point at any of
    `rows`, a queryset of `model`: one EXISTS query per relation, whichever app the relation comes from."""
    kinds = set()
    for relation in model._meta.get_fields(include_hidden=True):
        other = relation.related_model
        if (relation.auto_created and not relation.concrete and not other._meta.auto_created
                and other._base_manager.filter(**{f"{relation.field.name}__in": rows}).exists()):
            kinds.add(str(other._meta.verbose_name_plural))
    return kinds


class Benchmark(models.Model):
    slug = models.SlugField(max_length=100, unique=True)
    name = models.CharField(max_length=200)
    language = models.CharField(max_length=20, blank=True, help_text="BCP 47 code, e.g. en, zh, ko")
    version = models.CharField(max_length=50, blank=True)
    source = models.TextField(blank=True, help_text="Where the data comes from (paper, URL, file)")
    licence = models.CharField(max_length=200, blank=True)
    description = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["slug"]

    def __str__(self):
        return self.slug


class Task(models.Model):
    benchmark = models.ForeignKey(Benchmark, on_delete=models.PROTECT, related_name="tasks")
    slug = models.SlugField(max_length=100)
    name = models.CharField(max_length=200)
    dimension = models.CharField(max_length=100, blank=True, help_text="e.g. correctness, coherence, safety")
    form = models.JSONField(help_text="The answer form: questions and the primary question's key")
    instructions = models.TextField(blank=True)
    source_names = models.JSONField(default=list, blank=True,
                                    help_text="The task's names in the source data where they differ from ours "
                                              "(a released file named Conversational_QA holds Intent classification)")

    class Meta:
        ordering = ["benchmark__slug", "slug"]
        constraints = [models.UniqueConstraint(fields=["benchmark", "slug"], name="task_unique_slug_per_benchmark")]

    def __str__(self):
        return f"{self.benchmark.slug}/{self.slug}"

    def used_by(self):
        """What refers to the task or to one of its items: a task in use is not changed (its items' labels
        were given under its form)."""
        own = referred_to_by(Task, Task.objects.filter(pk=self.pk)) - {str(Item._meta.verbose_name_plural)}
        return own | referred_to_by(Item, self.items.all())

    @property
    def names(self):
        """Our name, with the source data's names where they differ, for the people who set studies up."""
        if not self.source_names:
            return self.name
        return f"{self.name} (in the source data: {', '.join(self.source_names)})"

    @property
    def primary_key(self):
        return self.form["primary"]

    def clean(self):
        validate_form(self.form)

    def save(self, *args, **kwargs):
        # The form is validated on every save, whichever door (admin, API, importer) it came through.
        validate_form(self.form)
        super().save(*args, **kwargs)


class Item(models.Model):
    task = models.ForeignKey(Task, on_delete=models.PROTECT, related_name="items")
    external_id = models.CharField(max_length=200)
    dialogue = models.JSONField(default=list, help_text="[{speaker, text}, ...]")
    fields = models.JSONField(default=dict, blank=True, help_text="question, options keyed A.., knowledge, ...")
    meta = models.JSONField(default=dict, blank=True, help_text="domain, language, style, source id")
    source_gold = models.JSONField(null=True, blank=True, help_text="The label published with the data, if any")
    content_hash = models.CharField(max_length=64, db_index=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["task_id", "external_id"]
        constraints = [models.UniqueConstraint(fields=["task", "external_id"], name="item_unique_external_id_per_task")]

    def __str__(self):
        return f"{self.task_id}:{self.external_id}"

    def used_by(self):
        """What refers to the item (labels, gold, predictions, batches): an item in use is not changed, as
        the importer refuses changing a stored item."""
        return referred_to_by(Item, Item.objects.filter(pk=self.pk))

    def compute_hash(self):
        return content_hash(self.dialogue, self.fields, self.meta, self.source_gold)

    def save(self, *args, **kwargs):
        self.content_hash = self.compute_hash()
        super().save(*args, **kwargs)

    def clean(self):
        if not isinstance(self.dialogue, list):
            raise ValidationError({"dialogue": "expected a list of {speaker, text} turns"})


# Item fields written for models, not for people: DialogBench's released files carry each item's prompts ready made
# (kwai/DialogBench, src/baseEval.py: prompt_SFT is what a chat model is asked, prompt_pretrain what the options are
# scored after). They hold the task's instruction in the model's wording and can cue the answer, so they stay with
# the item for model runs and out of every page, API answer and export that people read (shown_fields).
MODEL_FIELDS = ("prompt_SFT", "prompt_pretrain")


def shown_fields(item):
    """The item's fields a person may read: all but MODEL_FIELDS."""
    return {key: value for key, value in (item.fields or {}).items() if key not in MODEL_FIELDS}


# Item metadata anyone who reads the item may see; the rest (source system, source ids) could give the
# answer away.
SHOWN_META = ("domain", "language", "personality")


def shown_meta(item):
    """The shown metadata the item has: a key it holds empty ("domain": "") is left out, so no empty heading shows."""
    meta = item.meta or {}
    return {key: meta[key] for key in SHOWN_META if meta.get(key) not in (None, "", [], {})}
