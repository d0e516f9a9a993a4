"""Huynh et al.'s preset on FED: examples rated from the FED ratings in the database (mean of the five
raters, rounded half up), whole dialogues rated as dialogues, no example from the rated item's
conversation, 3 random examples per seed, one variant per seed; the run lists where it differs
from the published protocol.

Cases from the FED file itself (/work/shared/data/fed/fed_data.json, Mehri and Eskenazi 2020): its item 0
is rated Overall [2, 1, 3, 3, 4] (mean 2.6, example rating 3) and Interesting [2, 1, 1, 1, 1] (mean 1.2,
rating 1)."""
import json
import re

import pytest

import studies
from annotation.importers import import_ratings
from benchmarks.actions import import_items
from benchmarks.formschema import question
from benchmarks.importers import fed
from benchmarks.models import Benchmark, Item
from modeleval import actions
from modeleval.models import Prediction
from modeleval.modes import rating as rating_family
from studies.huynh import recipe as huynh
from tests.modeleval.test_scoring import sync_run


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


def fed_rated_items(fed_path, quality):
    """The FED file's items as the preset's rated items (the raters' rounded mean for `quality`), by external id."""
    records = json.loads(fed_path.read_text())
    rated = {}
    for item in fed.parse(fed_path).items:
        ratings = records[item.meta["source_index"]]["annotations"].get(quality, [])
        value = huynh.example_rating([fed.numeric_rating(r) for r in ratings if fed.numeric_rating(r) is not None])
        if value is not None:
            rated[item.external_id] = huynh.Rated(item.external_id, tuple(item.dialogue), item.fields.get("response"),
                                                  value)
    return rated


def test_one_fed_dialog_is_one_example(fed_path):
    """Section 4.1: "FED annotates three different responses for each dialog context; one FED dialog is treated
    as one example": the 375 turn items make 125 examples of three responses, each a dialog of the file."""
    rated = fed_rated_items(fed_path, "Interesting")
    examples = huynh.dialogs(r for r in rated.values() if r.response is not None)
    assert len(examples) == 125 and {len(e.rated) for e in examples} == {3}
    for example in examples:
        first = int(example.ids[0].split("-")[1])
        assert example.ids == tuple(fed.external_id(first + n) for n in range(3))


def table_8(paper):
    """Table 8's lines as printed (the text's markdown emphasis and paragraph breaks removed; the print sets
    apostrophes as ’)."""
    text = paper("huynh2023.txt")
    section = text[text.index("## B Prompt format examples FED"):text.index("**Table 8**")]
    lines = [line.replace("**", "").replace("\u2019", "'").strip() for line in section.split("\n")[1:]]
    return [line for line in lines if line]


def test_table_8_prompt_character_for_character(fed_path, paper):
    """FED's dialog of items 24-26, rated for interestingness (raters' means 1.0, 0.8 and 1.8), laid out as the
    example of Table 8."""
    rated = fed_rated_items(fed_path, "Interesting")
    (example,) = [e for e in huynh.dialogs(r for r in rated.values() if r.response is not None)
                  if e.ids[0] == "fed-024"]
    query = rated["fed-000"]
    prompt = huynh.fed_prompt(huynh.fed_task("interesting", "Interesting", False), [example], query, 2)
    blocks = prompt.split("\n\n")
    assert "\n".join(blocks[:2]).replace("\n\n", "\n").split("\n") == table_8(paper)
    # The rated item follows, laid out as an example is, its rating left for the model.
    assert blocks[2] == "\n".join([*(f"{'A' if t['speaker'] == 'User' else 'B'}: {t['text']}" for t in query.dialogue),
                                   f"Response: {query.response['text']}", "Rating:"])


def table_9(paper):
    """Table 9's prompt as printed: each paragraph a line (its markup removed), the break between the two
    items a blank line."""
    text = paper("huynh2023.txt")
    section = text[text.index("### C Prompt format examples DSTC10"):text.index("**Table 9**")]
    lines = []
    for line in section.split("\n"):
        if line.strip() == "<br/>":
            lines.append("")
        elif line.strip().startswith("<p>"):
            lines.append(re.sub(r"<[^>]+>", "", line.strip()))
    return "\n".join(lines)


def test_table_9_prompt_character_for_character(paper):
    example = huynh.Rated("dz-1", ({"speaker": "waiter", "text": "did your meal meet with your approval ?"},),
                          {"speaker": "guest", "text": "yes , i did . it was a good meal ."}, 2)
    query = huynh.Rated("dz-2", ({"speaker": "p", "text": "i really do hate public transportation."},
                                 {"speaker": "q", "text": "i agree , it 's just never on time."}),
                        {"speaker": "p", "text": "you 're right."})
    assert huynh.dstc10_prompt([(example, "Yes")], query) == table_9(paper)


@pytest.fixture
def fed_rated(db, fed_path):
    import_items(fed_path, "fed", "fed")
    import_ratings(fed_path, "fed", "fed")
    return Benchmark.objects.get(slug="fed")


def test_preset_builds_the_published_prompts(fed_rated, fed_path):
    records = json.loads(fed_path.read_text())
    # Prompts are built before any model loads: no model is needed to hold them.
    turn_items = [Item.objects.get(external_id=f"fed-{n:03d}") for n in (0, 1, 40, 200)]
    dialog_item = Item.objects.filter(task__slug="fed-dialog").order_by("external_id").first()
    run = _run(fed_rated, [*turn_items, dialog_item])
    assert run.settings["fewshot"] == {"strategy": "random", "k": 3, "fixed_ids": []}
    assert run.settings["seeds"] == [0, 1, 2] and run.prompt_version == "huynh-fed-table8-en/2"
    requests = rating_family.requests(run, [*turn_items, dialog_item])
    assert len(requests) == 15 and [r[4] for r in requests[:3]] == ["seed-0", "seed-1", "seed-2"]
    by_id = {item.external_id: item for item in Item.objects.filter(task__benchmark=fed_rated)}
    drawn = {}
    for item, built, _, _, variant in requests:
        blocks = built.text.split("\n\n")
        high = question(item.task.form, "overall")["scale"]["max"]
        dialog_level = item.task.slug == "fed-dialog"
        assert blocks[0] == ("Task: Given a dialog, rate the overall quality of the dialog." if dialog_level else
                             "Task: Given a dialog history and a response, rate the overall quality of the response "
                             "with regards to the dialog history.")
        assert len(blocks) == 5 and [b.split("\n")[0] for b in blocks[1:4]] == [f"== Example {n} ==" for n in (1, 2, 3)]
        # One FED dialog per example at turn level (its three responses rated where they were said), one
        # dialogue at dialog level; never the rated item's own conversation.
        assert len(built.example_ids) == (3 if dialog_level else 9)
        mine = huynh.item_turns(item.dialogue, None)
        for shot_id in built.example_ids:
            example = by_id[shot_id]
            assert not huynh.same_conversation(mine, huynh.item_turns(example.dialogue, example.fields.get("response")))
        ratings = [line for block in blocks[1:4] for line in block.split("\n") if line.startswith("Rating: ")]
        expected = [huynh.example_rating([r for r in records[by_id[i].meta["source_index"]]["annotations"]["Overall"]
                                          if isinstance(r, int)]) for i in built.example_ids]
        assert ratings == [f"Rating: {r}/{high}" for r in expected]
        query = blocks[-1].split("\n")
        assert query[-1] == "Rating:" and query[0] == f"A: {item.dialogue[0]['text']}"
        if dialog_level:  # the whole dialogue is rated, not its last turn as a response
            assert not any(line.startswith("Response: ") for line in query)
        else:
            assert query[-2] == f"Response: {item.fields['response']['text']}"
            drawn.setdefault(variant, set()).add(built.example_ids)
    # Drawn once per seed: every turn item of a seed sees the same examples, each seed others.
    assert all(len(ids) == 1 for ids in drawn.values()) and len({ids.pop() for ids in drawn.values()}) == 3


def test_an_item_of_a_drawn_dialog_sees_the_next_example_instead(fed_rated):
    items = list(Item.objects.filter(task__slug="fed-turn").order_by("external_id"))
    run = _run(fed_rated, items[:1])
    first = rating_family.requests(run, items[:1])[0][1].example_ids
    own = [item for item in items if item.external_id in first[:3]]  # the items of the first drawn dialog
    mine = rating_family.requests(run, own[:1])[0][1].example_ids
    assert set(mine[:6]) == set(first[3:]) and not set(mine) & set(first[:3]) and len(mine) == 9


def test_yes_no_prompts_in_table_9s_layout(fed_rated):
    item = Item.objects.get(external_id="fed-001")
    run = _run(fed_rated, [item], mode="yes_no")
    assert run.prompt_version == "huynh-dstc10-table9-en/2"
    for _, built, _, _, _ in rating_family.requests(run, [item]):
        lines = built.text.split("\n")
        assert lines[:3] == ["Instruction: Given a conversation and a response, choose if the response is a good "
                             "response to the context", "Example", "Background info: none"]
        assert len(built.example_ids) == 4 and built.text.count("\n\nBackground info: none\nConversation:\n") == 4
        assert [line for line in lines if line.startswith("Answer:")][:3] != [] and lines[-1] == "Answer:"
        assert all(line in ("Answer: Yes", "Answer: No") for line in lines if line.startswith("Answer: "))
        assert lines[-3:-1] == [f"Response : {item.fields['response']['text']}",
                                "Question: Is the above response a good response to the conversation?"]
        # The last speaker before the response is Person A.
        assert lines[-4] == f"Person A: {item.dialogue[-1]['text']}"


def _run(benchmark, items, mode="rating", **settings):
    from django.contrib.auth.models import User

    from modeleval.models import ModelSpec

    spec, _ = ModelSpec.objects.get_or_create(name="stand-in", source="stand-in", sha256="0" * 64)
    user, _ = User.objects.get_or_create(username="r", defaults={"is_staff": True})  # staff start runs
    return actions.start_run(model=spec, benchmark=benchmark, mode=mode, enqueue=False,
                             item_ids=[i.pk for i in items], settings={"preset": "huynh", **settings}, user=user)


def test_run_lists_where_it_differs_from_the_study(fed_rated):
    item = Item.objects.get(external_id="fed-000")
    run = _run(fed_rated, [item], fewshot={"k": 8}, seeds=[7])
    protocol = studies.protocol(run.mode, run.settings)
    assert protocol["preset"] == "huynh" and protocol["title"].startswith("LLMs as dialogue raters on FED")
    changed = {d["setting"]: d for d in protocol["differences"]}
    assert changed["fewshot"]["published"] == '{"k": 3, "strategy": "random"}'
    assert changed["fewshot"]["ours"] == '{"k": 8, "strategy": "random"}'
    assert changed["fewshot"]["why"] == "set for this run"
    assert changed["seeds"]["published"] == "[0, 1, 2]" and changed["seeds"]["ours"] == "[7]"
    assert {"the rated item's block", "task line of each quality", "example ratings"} <= set(changed)
    assert "could not be read" not in json.dumps(protocol)
    plain = _run(fed_rated, [item])
    differing = {d.setting for d in studies.STUDIES["huynh"].differences("rating", plain.settings)}
    assert not {"fewshot", "seeds"} & differing
    with pytest.raises(actions.RunError, match="leave instruction empty"):
        _run(fed_rated, [item], instruction="Rate the {quality}.")


@pytest.mark.model
@pytest.mark.slow
def test_preset_run_scores_one_variant_per_seed(packaged, fed_rated):
    items = [Item.objects.filter(task__slug="fed-dialog").order_by("external_id").first(),
             Item.objects.get(external_id="fed-001")]
    run = sync_run(packaged, fed_rated, mode="rating", item_ids=[i.pk for i in items],
                   settings={"preset": "huynh", "seeds": [0, 1]})
    rows = list(Prediction.objects.filter(run=run).select_related("item").order_by("item__external_id", "variant"))
    assert [(r.item.external_id, r.variant) for r in rows] == [
        ("fed-001", "seed-0"), ("fed-001", "seed-1"),
        (items[0].external_id, "seed-0"), (items[0].external_id, "seed-1")]
    for row in rows:
        scale = question(row.item.task.form, "overall")["scale"]
        assert len(row.fewshot_ids) == (9 if row.item.external_id == "fed-001" else 3)
        assert scale["min"] <= row.rating <= scale["max"] and row.prompt.endswith("\nRating:")
        assert set(row.probabilities["raw"]) == {str(v) for v in range(scale["min"], scale["max"] + 1)}
    run = sync_run(packaged, fed_rated, mode="yes_no", item_ids=[items[1].pk], settings={"preset": "huynh"})
    rows = list(Prediction.objects.filter(run=run).order_by("variant"))
    assert [r.variant for r in rows] == ["seed-0", "seed-1", "seed-2"]
    assert all(0 <= r.rating <= 1 and r.answer in ("yes", "no") and r.prompt.endswith("\nAnswer:") for r in rows)


def test_each_mode_publishes_a_number_of_examples_the_paper_ran(paper):
    """FED's ratings with 3 examples (Table 8's prompt shows three); the DSTC10 yes/no runs with 4, 8 or 12 (Table 5,
    appendix F; Table 6 with 4): a yes/no run of the preset never asks with a number of examples the paper never
    used."""
    text = paper("huynh2023.txt")
    assert "over 4, 8, and 12 examples in Table 5" in text and "using 4 in-context examples" in text
    assert studies.STUDIES[huynh.PRESET].published["yes_no"]["fewshot"]["k"] in (4, 8, 12)
    assert studies.STUDIES[huynh.PRESET].published["rating"]["fewshot"]["k"] == 3
    assert rating_family.defaults("yes_no", "en", huynh.PRESET)["fewshot"]["k"] == huynh.K_YES_NO == 4
