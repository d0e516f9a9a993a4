"""Serializers that write their output out by hand give what their declared fields (the API schema) give."""
import uuid

import pytest
from django.utils import timezone
from rest_framework import serializers

from annotation.models import Annotation
from annotation.serializers import AnnotationSerializer
from tests.reports.test_stored import demo_benchmark


@pytest.mark.django_db
def test_an_annotation_is_written_as_its_declared_fields_write_it():
    _, campaign = demo_benchmark("db")
    first, second, third = Annotation.objects.filter(campaign=campaign).order_by("pk")[:3]
    Annotation.objects.filter(pk=first.pk).update(settings=None, dwell_seconds=None, client_submission_id=None)
    Annotation.objects.filter(pk=second.pk).update(superseded_at=timezone.now(), excluded=True,
                                                   excluded_by=["answer"], client_submission_id=uuid.uuid4(),
                                                   value={"nested": [1, "two"]}, dwell_seconds=12.5)
    annotations = list(Annotation.objects.filter(pk__in=[first.pk, second.pk, third.pk])
                       .select_related("item", "annotator", "settings").order_by("pk"))
    assert {a.settings_id is None for a in annotations} == {True, False}
    for annotation in annotations:
        serializer = AnnotationSerializer(annotation)
        by_fields = serializers.ModelSerializer.to_representation(serializer, annotation)
        assert serializer.data == by_fields
        assert list(serializer.data) == list(by_fields)  # the same keys in the same order
    assert AnnotationSerializer(annotations, many=True).data == [
        serializers.ModelSerializer.to_representation(AnnotationSerializer(a), a) for a in annotations]
