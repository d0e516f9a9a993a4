"""Huynh et al.'s preset on FED: examples rated from the FED ratings in the database (mean of the five
raters, rounded half up), whole dialogues rated as dialogues, no example from the rated item's
conversation, 3 random examples per seed, one variant per seed; the run lists where it differs
from the published protocol.

Cases from the FED file itself (/work/shared/data/fed/fed_data.json, Mehri and Eskenazi 2020): its item 0
is rated Overall [2, 1, 3, 3, 4] (mean 2.6, example rating 3) and Interesting [2, 1, 1, 1, 1] (mean 1.2,
rating 1)."""
import json

import pytest

from annotation.importers import import_ratings
from benchmarks.actions import import_items
from benchmarks.formschema import question
from benchmarks.models import Benchmark, Item
from modeleval import actions, studies
from modeleval.modes import rating as rating_family
from modeleval.models import Prediction
from modeleval.scorers import huynh

from .test_scoring import sync_run


def test_example_rating_is_the_rounded_mean_of_the_raters():
    assert huynh.example_rating([2, 1, 3, 3, 4]) == 3  # 2.6
    assert huynh.example_rating([2, 1, 1, 1, 1]) == 1  # 1.2
    assert huynh.example_rating([2, 3]) == 3  # 2.5 rounds up; Python's round(2.5) is 2
    assert huynh.example_rating([]) is None


def test_turn_items_nest_in_their_dialogues(fed_path):
    """Each of FED's 375 turn items opens one of its 125 dialogues: the rule that keeps examples out of
    the rated item's conversation finds every one of them (377 turn/dialogue pairs, a short context
    opening two dialogues)."""
    records = json.loads(fed_path.read_text())

    def turns(record):
        return [tuple(part.strip() for part in line.split(":", 1)) for line in record["context"].split("\n")
                if line.strip()]

    turn = [turns(r) for r in records if "response" in r]
    dialog = [turns(r) for r in records if "response" not in r]
    assert (len(turn), len(dialog)) == (375, 125)
    pairs = [(i, j) for i, t in enumerate(turn) for j, d in enumerate(dialog) if huynh.same_conversation(t, d)]
    assert len(pairs) == 377 and {i for i, _ in pairs} == set(range(375))
    assert not huynh.same_conversation(dialog[0], dialog[1])


@pytest.fixture
def fed_rated(db, fed_path):
    import_items(fed_path, "fed", "fed")
    import_ratings(fed_path, "fed", "fed")
    return Benchmark.objects.get(slug="fed")


def test_preset_builds_the_published_prompts(fed_rated, fed_path):
    records = json.loads(fed_path.read_text())
    # Prompts are built before any model loads: no model is needed to hold them.
    items = [Item.objects.get(external_id="fed-000"),
             Item.objects.filter(task__slug="fed-dialog").order_by("external_id").first()]
    run = _run(fed_rated, items)
    assert run.settings["fewshot"] == {"strategy": "random", "k": 3, "fixed_ids": []}
    assert run.settings["seeds"] == [0, 1, 2, 3, 4] and run.prompt_version == "huynh-rating-fewshot-en/1"
    requests = rating_family.requests(run, items)
    assert len(requests) == 10 and [r[4] for r in requests[:5]] == [f"seed-{n}" for n in range(5)]
    by_id = {item.external_id: item for item in Item.objects.filter(task__benchmark=fed_rated)}
    for item, built, _, _, variant in requests:
        blocks = built.text.split("\n\n")
        scale = question(item.task.form, "overall")["scale"]
        scale = f"{scale['min']} to {scale['max']}"
        assert blocks[0] == f"Rate the overall quality on a scale from {scale}."
        assert len(blocks) == 5 and len(built.example_ids) == 3
        mine = huynh.item_turns(item.dialogue, None)
        for shot_id, shot in zip(built.example_ids, blocks[1:-1]):
            example = by_id[shot_id]
            record = records[example.meta["source_index"]]
            assert not huynh.same_conversation(mine, huynh.item_turns(example.dialogue, None))
            # The shot's rating: the five raters' mean, rounded half up.
            expected = huynh.example_rating([r for r in record["annotations"]["Overall"] if isinstance(r, int)])
            assert shot.endswith(f"\nOverall score: {expected}")
        query = blocks[-1]
        assert query.startswith("Dialogue:\n" + "\n".join(f"{t['speaker']}: {t['text']}" for t in item.dialogue))
        assert query.endswith("\nOverall score:")
        if item.task.slug == "fed-dialog":  # the whole dialogue is rated, not its last turn as a response
            assert "\nResponse: " not in query
        else:
            assert f"\nResponse: System: {item.fields['response']['text']}\nOverall score:" in query
    # Seeds draw different examples for the same item.
    assert len({tuple(r[1].example_ids) for r in requests[:5]}) > 1


def _run(benchmark, items, **settings):
    from django.contrib.auth.models import User

    from modeleval.models import ModelSpec

    spec, _ = ModelSpec.objects.get_or_create(name="stand-in", source="stand-in", sha256="0" * 64)
    user, _ = User.objects.get_or_create(username="r")
    return actions.start_run(model=spec, benchmark=benchmark, mode="rating", enqueue=False,
                             item_ids=[i.pk for i in items], settings={"preset": "huynh", **settings}, user=user)


def test_run_lists_where_it_differs_from_the_study(fed_rated):
    item = Item.objects.get(external_id="fed-000")
    run = _run(fed_rated, [item], fewshot={"k": 8}, seeds=[7])
    protocol = studies.protocol(run.mode, run.settings)
    assert protocol["preset"] == "huynh" and protocol["title"].startswith("LLMs as dialogue raters on FED")
    changed = {d["setting"]: d for d in protocol["differences"]}
    assert changed["fewshot"]["published"] == '{"k": 3, "strategy": "random"}'
    assert changed["fewshot"]["ours"] == '{"k": 8, "strategy": "random"}' and changed["fewshot"]["why"] == "set for this run"
    assert {"prompt wording", "repetitions"} <= set(changed)
    plain = _run(fed_rated, [item])
    assert "fewshot" not in {d.setting for d in studies.STUDIES["huynh"].differences("rating", plain.settings)}


@pytest.mark.model
@pytest.mark.slow
def test_preset_run_scores_one_variant_per_seed(packaged, fed_rated):
    items = list(Item.objects.filter(task__slug="fed-dialog").order_by("external_id")[:1])
    run = sync_run(packaged, fed_rated, mode="rating", item_ids=[i.pk for i in items],
                   settings={"preset": "huynh", "seeds": [0, 1]})
    rows = list(Prediction.objects.filter(run=run).order_by("variant"))
    assert [r.variant for r in rows] == ["seed-0", "seed-1"]
    assert all(len(r.fewshot_ids) == 3 and 1 <= r.rating <= 5 for r in rows)
