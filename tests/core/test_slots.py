"""A slot takes only a provider that fits its protocol (core.slots): the names, kinds and order of the declared
parameters, more only with defaults. Checked with the two protocols the apps declare."""
from functools import partial
from types import SimpleNamespace

import pytest

from benchmarks.permissions import MemberScope
from core.slots import Slot
from modeleval.human_labels import HumanLabels


def labels(tasks):
    return {}


def ratings(task, key, source):
    return []


def has_ratings(task, source):
    return False


def fitting(**changed):
    return SimpleNamespace(**{"accepted_final_labels": labels, "fed_ratings": partial(ratings, source="import:fed"),
                              "has_fed_ratings": partial(has_ratings, source="import:fed"), **changed})


def test_a_provider_that_fits_fills_the_slot():
    slot = Slot(HumanLabels)
    provider = fitting()
    slot.fill(provider)
    assert slot.filled and slot.provider is provider


@pytest.mark.parametrize("changed, named", [
    ({"fed_ratings": partial(ratings, key="score", source="import:fed")}, "fed_ratings"),  # a declared one bound
    ({"fed_ratings": ratings}, "fed_ratings"),  # one more, without a default
    ({"accepted_final_labels": lambda task_ids: {}}, "accepted_final_labels"),  # renamed
    ({"has_fed_ratings": lambda *, task: False}, "has_fed_ratings"),  # keyword-only
    ({"has_fed_ratings": None}, "has_fed_ratings: missing"),
])
def test_a_provider_that_does_not_fit_is_refused_with_the_method_named(changed, named):
    slot = Slot(HumanLabels)
    with pytest.raises(TypeError, match=named):
        slot.fill(fitting(**changed))
    assert not slot.filled


def test_a_protocol_of_one_call_takes_a_function():
    slot = Slot(MemberScope)
    slot.fill(lambda user: {})
    with pytest.raises(TypeError, match="__call__"):
        slot.fill(lambda user, campaign: {})


def test_an_empty_slot_says_who_fills_it():
    with pytest.raises(LookupError, match="humanbaseline.apps"):
        Slot(HumanLabels).provider  # noqa: B018 -- reading it is what raises
