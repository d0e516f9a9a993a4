"""DiQAD's choice questions scored by a model: the quality (2/1/0) asked as its appendix C chat and read back
from "分数: N", needs_verification by yes/no; the demo campaign's report row."""
import json

import pytest
from django.core.management import call_command

import studies
from annotation.models import Campaign
from benchmarks.actions import import_items
from benchmarks.models import Benchmark
from modeleval import actions, runner
from modeleval.errors import RunError
from modeleval.models import EvalRun, ModelSpec, ParseStatus, Prediction, RunState
from reports.build import public
from reports.render.tables import diqad_tables
from reports.service import make_report
from studies.diqad import recipe as diqad
from tests.conftest import DEMO_DATA
from tests.modeleval.test_scoring import sync_run


@pytest.fixture
def diqad_benchmark(db):
    import_items(DEMO_DATA / "diqad_sample.jsonl", "diqad", "dq")
    return Benchmark.objects.get(slug="dq")


def appendix_c(paper):
    """Appendix C's Chinese prompt as (role, text) messages: the text between one USER / ASSISTANT marker and the
    next, without the print's code-box fences and the blank lines around it."""
    text = paper("diqad.txt")
    section = text[text.index("Chinese prompt"):text.index("English prompt (translated version)")]
    messages = []
    for line in section.split("\n")[1:]:
        if line in ("USER", "ASSISTANT"):
            messages.append([line.lower(), []])
        elif messages and line != "```":
            messages[-1][1].append(line)
    return [(role, "\n".join(lines).strip("\n")) for role, lines in messages]


def test_appendix_c_chat_character_for_character(paper):
    printed = appendix_c(paper)
    turns = [{"speaker": "user", "text": "离婚后孩子抚养费怎么算？"},
             {"speaker": "expert", "text": "一般按月收入的20%到30%计算。"}]
    asked = diqad.chat_messages(turns)
    assert [role for role, _ in printed] == [role for role, _ in asked] == ["user", "assistant"] * 4 + ["user"]
    assert asked[:-1] == tuple(printed[:-1])
    assert printed[-1] == ("user", "{{dialogue}}")
    # The scored dialogue is written as the appendix prints its examples: one of them, scored, reads the same.
    (question, answer), _ = diqad.CHAT_EXAMPLES[1]
    example = [{"speaker": "user", "text": question}, {"speaker": "expert", "text": answer}]
    assert diqad.chat_messages(example)[-1] == printed[4]
    assert asked[-1][1] == "[{'role': 'user', 'content': '离婚后孩子抚养费怎么算？', 'role': 'assistant', " \
                           "'content': '一般按月收入的20%到30%计算。'}"


def test_the_box_the_appendix_draws_around_each_dialogue_is_a_listed_difference(paper):
    """Appendix C prints each user message holding a dialogue inside a code box; what we send is the dialogue alone,
    and every run of the preset lists that, with why."""
    section = paper("diqad.txt").split("Chinese prompt", 1)[1].split("English prompt", 1)[0]
    assert section.count("```") == 8  # a box around each of the three examples and around {{dialogue}}
    asked = diqad.chat_messages([{"speaker": "user", "text": "问"}, {"speaker": "expert", "text": "答"}])
    assert not any("```" in text for _, text in asked)
    standing = {d.setting: d for d in studies.STUDIES["diqad"].differences("rating", {"preset": "diqad"})}
    assert "code box" in standing["the box around each dialogue"].published


def test_the_reply_is_read_as_the_examples_answer():
    assert diqad.extract_score("分数: 2", [0, 1, 2]) == 2
    assert diqad.extract_score("分数：1", [0, 1, 2]) == 1
    assert diqad.extract_score("我认为分数: 0。最终分数: 1", [0, 1, 2]) == 1
    assert diqad.extract_score("这个回答质量一般，1分", [0, 1, 2]) == 1
    assert diqad.extract_score("0到2之间", [0, 1, 2]) is None


def test_preset_refuses_what_the_paper_did_not_do(db, diqad_benchmark):
    spec, _ = ModelSpec.objects.get_or_create(name="stand-in", source="stand-in", sha256="0" * 64)
    for settings, message in (({"read": "probabilities"}, "read must be \"generation\""),
                              ({"fewshot": {"strategy": "random", "k": 2}}, "three of its appendix C"),
                              ({"instruction": "Rate it."}, "leave instruction empty")):
        with pytest.raises(RunError, match=message):
            actions.start_run(model=spec, benchmark=diqad_benchmark, mode="rating", enqueue=False,
                              settings={"preset": "diqad", **settings})
    run = actions.start_run(model=spec, benchmark=diqad_benchmark, mode="rating", enqueue=False,
                            settings={"preset": "diqad", "system": "Be brief."})
    protocol = studies.protocol(run.mode, run.settings)
    assert protocol["preset"] == "diqad" and protocol["title"] == "DiQAD (Zhao et al., 2023)"
    differences = {d["setting"]: d for d in protocol["differences"]}
    assert differences["system"]["why"] == "set for this run"
    assert {"test set", "the scored dialogue", "reading the reply", "decoding", "ChatGPT + CoT"} <= set(differences)
    assert "could not be read" not in json.dumps(protocol)
    assert {"preset": "diqad", "title": "DiQAD (Zhao et al., 2023)"} in studies.presets_for("rating")


@pytest.mark.model
@pytest.mark.slow
def test_quality_by_the_appendix_c_chat_and_verification_by_yes_no(packaged, diqad_benchmark):
    run = sync_run(packaged, diqad_benchmark, mode="rating", settings={"preset": "diqad"})
    assert run.prompt_version == "diqad-appendix-c-zh/1" and run.settings["read"] == "generation"
    rows = list(Prediction.objects.filter(run=run).select_related("item"))
    assert len(rows) == 8 and all(r.raw_output for r in rows)
    for row in rows:
        # The model read the chat through its chat template: every turn of appendix C, the dialogue last.
        assert row.prompt.count("分数: ") == 3 and "好的，请提供对话，我将给出0到2的分数。" in row.prompt
        assert "[{'role': 'user', 'content': " + repr(row.item.dialogue[0]["text"]) in row.prompt
        assert row.prompt.index(diqad.CHAT_INSTRUCTION) < row.prompt.index("分数: 2") < row.prompt.rindex("[{'role'")
        value = diqad.extract_score(row.raw_output, [0, 1, 2])
        if value is None:
            assert row.parse_status == ParseStatus.UNPARSABLE and row.answer == "" and row.rating is None
        else:
            assert row.parse_status == ParseStatus.PARSED and row.answer == str(value) and row.rating == value
    run = sync_run(packaged, diqad_benchmark, mode="yes_no",
                   settings={"preset": "diqad", "quality": "needs_verification"})
    rows = list(Prediction.objects.filter(run=run))
    assert run.prompt_version == "diqad-verification-fewshot-en/1"
    assert {r.answer for r in rows} <= {"yes", "no"} and all(0 <= r.rating <= 1 for r in rows)
    assert all(r.gold in {"yes", "no"} and r.prompt.endswith("\nneeds verification:") for r in rows)


@pytest.mark.model
@pytest.mark.slow
def test_demo_queues_its_run_and_the_campaign_report_has_a_model_row_once_scored(
        packaged, tmp_path, monkeypatch, django_capture_on_commit_callbacks):
    sent = []
    monkeypatch.setattr("modeleval.tasks.score_chunk.apply_async", lambda args, queue: sent.append(args))
    with django_capture_on_commit_callbacks(execute=True):
        call_command("demo", "--fed", str(tmp_path / "absent.json"))
    [run] = EvalRun.objects.filter(benchmark__slug="diqad-demo")
    [chunk_id] = run.chunks.values_list("pk", flat=True)
    assert run.state == RunState.QUEUED and not Prediction.objects.filter(run=run).exists()  # scored by the worker
    assert sent == [(chunk_id,)]
    # A worker took the chunk and was stopped with it (the embedded broker keeps no message it handed out): the
    # next start sends the chunk again and adds no run.
    runner.claim_chunk(chunk_id, "stopped-worker")
    sent.clear()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("demo", "--fed", str(tmp_path / "absent.json"))
    assert list(EvalRun.objects.filter(benchmark__slug="diqad-demo")) == [run] and sent == [(chunk_id,)]
    assert runner.process_chunk(chunk_id, "worker") == "done"  # what the worker does with the message
    run.refresh_from_db()
    assert run.state == RunState.FINISHED
    campaign = Campaign.objects.get(benchmark__slug="diqad-demo")
    report = public(make_report("diqad-demo", campaign.pk))
    rows = [r for r in report["ratings"]["models"] if r["quality"] == "score"]
    assert len(rows) == 1 and rows[0]["model"].startswith(packaged.name) and rows[0]["n_gold"] == 8
    for key in ("gold_accuracy", "gold_uar", "gold_kappa", "gold_spearman", "gold_pearson", "gold_precision",
                "gold_recall", "gold_f1"):
        assert key in rows[0]
    table = diqad_tables(report)[0]
    print("\n" + " | ".join(table.header) + "\n" + " | ".join(c.text() for c in table.rows[0]))
    assert table.rows[0][1].text() == f"{100 * rows[0]['gold_accuracy']:.2f}"


def test_a_chat_needs_the_models_chat_template():
    from modeleval import inference

    plain = ModelSpec(name="plain", use_chat_template=False)
    with pytest.raises(ValueError, match="needs the model's chat template"):
        inference.chat_text(object(), plain, diqad.chat_messages([{"speaker": "u", "text": "你好"}]))
    assert inference.chat_text(object(), plain, "one message") == "one message"
