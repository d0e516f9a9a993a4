from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import serializers

from .formschema import validate_form
from .models import Benchmark, Item, Task


class BenchmarkSerializer(serializers.ModelSerializer):
    class Meta:
        model = Benchmark
        fields = ["id", "slug", "name", "language", "version", "source", "licence", "description", "created_at"]


class TaskSerializer(serializers.ModelSerializer):
    benchmark = serializers.SlugRelatedField(slug_field="slug", queryset=Benchmark.objects.all())

    class Meta:
        model = Task
        fields = ["id", "benchmark", "slug", "name", "dimension", "form", "instructions"]

    def validate_form(self, value):
        try:
            return validate_form(value)
        except DjangoValidationError as error:
            raise serializers.ValidationError(error.messages) from None


class ItemSerializer(serializers.ModelSerializer):
    task = serializers.PrimaryKeyRelatedField(queryset=Task.objects.all())

    class Meta:
        model = Item
        fields = ["id", "task", "external_id", "dialogue", "fields", "meta", "source_gold", "content_hash", "created_at"]
        read_only_fields = ["content_hash", "created_at"]

    def validate_dialogue(self, value):
        if not isinstance(value, list) or not all(
            isinstance(t, dict) and isinstance(t.get("speaker"), str) and isinstance(t.get("text"), str) for t in value
        ):
            raise serializers.ValidationError("expected a list of {speaker: string, text: string} turns")
        return value


class ItemWithoutGoldSerializer(ItemSerializer):
    # The content hash covers the gold too: with the other fields known, it would give the gold away.
    class Meta(ItemSerializer.Meta):
        fields = [f for f in ItemSerializer.Meta.fields if f not in ("source_gold", "content_hash")]
