from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import serializers

from .formschema import validate_form
from .models import MODEL_FIELDS, Benchmark, Item, Task, shown_fields, shown_meta


class BenchmarkSerializer(serializers.ModelSerializer):
    class Meta:
        model = Benchmark
        fields = ["id", "slug", "name", "language", "version", "source", "licence", "description", "created_at"]


class TaskSerializer(serializers.ModelSerializer):
    benchmark = serializers.SlugRelatedField(slug_field="slug", queryset=Benchmark.objects.all())

    class Meta:
        model = Task
        fields = ["id", "benchmark", "slug", "name", "dimension", "form", "instructions", "source_names"]
        read_only_fields = ["source_names"]

    def validate_form(self, value):
        try:
            return validate_form(value)
        except DjangoValidationError as error:
            raise serializers.ValidationError(error.messages) from None


class ItemSerializer(serializers.ModelSerializer):
    task = serializers.PrimaryKeyRelatedField(queryset=Task.objects.all())

    class Meta:
        model = Item
        fields = ["id", "task", "external_id", "dialogue", "fields", "meta", "source_gold", "content_hash",
                  "created_at"]
        read_only_fields = ["content_hash", "created_at"]

    def validate_dialogue(self, value):
        if not isinstance(value, list) or not all(
            isinstance(t, dict) and isinstance(t.get("speaker"), str) and isinstance(t.get("text"), str) for t in value
        ):
            raise serializers.ValidationError("expected a list of {speaker: string, text: string} turns")
        return value


    # Shown only where the reader may read the benchmark's gold: meta can name the answer (which system
    # wrote which side), and the content hash covers the gold (with the other fields known, trying each
    # answer against it would give the gold away). Elsewhere meta is cut to SHOWN_META, as on a lease.
    WITH_GOLD = ("source_gold", "content_hash")

    def to_representation(self, item):
        data = super().to_representation(item)
        # People read items here (the disagreements page, the API): never the fields written for models.
        data["fields"] = shown_fields(item)
        gold = self.context.get("gold_benchmarks", set())  # ids, or None for every benchmark
        if gold is not None and item.task.benchmark_id not in gold:
            for key in self.WITH_GOLD:
                data.pop(key, None)
            data["meta"] = shown_meta(item)
        return data

    def validate_fields(self, value):
        # The fields written for models are not shown here, so fields read from here and sent back keep them.
        if not isinstance(value, dict):
            raise serializers.ValidationError("expected an object of named fields")
        stored = self.instance.fields if self.instance is not None else {}
        return {**{key: stored[key] for key in MODEL_FIELDS if key in (stored or {})}, **value}
