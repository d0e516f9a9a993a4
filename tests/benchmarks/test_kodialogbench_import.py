"""KoDialogBench as released (one file per test set, the fields its lm-eval utils.py reads): the set becomes a
task whose dimension picks the study's prompting method, speakers keep the data's ids, and appendix B.2's
example comes out of the preset as the study's code writes it."""
import json

import pytest

from benchmarks.actions import import_items
from benchmarks.importers import ImportFailure, detect
from benchmarks.models import Benchmark, Item, Task
from modeleval.modes import multiple_choice
from studies.kodialogbench import recipe as kodialogbench

B2 = {"dialogue": [[2, "잠깐 일시적으로 추워진 거래 키키"], [1, "아 진짜? 다행이다"],
                   [1, "한파라고 해서 진짜 오잉 했잖아!"], [2, "나도 한파 주의보 문자 와서 당황함"]],
      "question": "보기 중 대화의 마지막 발화의 의도로 가장 알맞은 것은?", "options": ["지시", "단언", "언약", "표현"],
      "option_description": [[label, text] for label, text in kodialogbench.DIALOG_ACT_DESCRIPTIONS.items()],
      "answer_idx": 1}
RS = {"dialogue": [["1", "비 온대."], ["2", "우산 챙겨."]],
      "options": ["고마워!", "배고파.", "몰라.", "안녕.", "좋아."],
      "target_speaker": "1", "answer_idx": 0}


def write(path, *records):
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in records), encoding="utf-8")
    return path


@pytest.mark.django_db
def test_each_set_is_a_task_asked_in_the_studys_method(tmp_path):
    acts = write(tmp_path / "kodialogbench_dc_dialog_act_k-tdd.jsonl", B2)
    assert detect(acts) == "kodialogbench"
    import_items(acts, "kodialogbench", "kdb")
    import_items(write(tmp_path / "rs_k-sns.jsonl", RS), "kodialogbench", "kdb")
    bench = Benchmark.objects.get(slug="kdb")
    assert bench.language == "ko"
    assert dict(Task.objects.filter(benchmark=bench).values_list("slug", "dimension")) == {
        "dc_dialog_act_k-tdd": "Dialog Act", "rs_k-sns": "Response Selection"}
    act = Item.objects.get(task__slug="dc_dialog_act_k-tdd")
    assert act.source_gold == {"answer": "B"} and act.dialogue[0] == {"speaker": "2", "text": B2["dialogue"][0][1]}
    settings = {"preset": "kodialogbench", "style": kodialogbench.BY_TASK}
    variant = multiple_choice.variants(act, "answer", "as_is")[0]
    assert multiple_choice.render_mc("", act, variant, settings) == (
        "[대화]\n화자2: 잠깐 일시적으로 추워진 거래 키키\n화자1: 아 진짜? 다행이다\n화자1: 한파라고 해서 진짜 오잉 "
        "했잖아!\n화자2: 나도 한파 주의보 문자 와서 당황함\n\n[보기]\n"
        + "\n".join(f"{label}: {text}" for label, text in kodialogbench.DIALOG_ACT_DESCRIPTIONS.items())
        + "\n\n질문: 보기 중 대화의 마지막 발화의 의도로 가장 알맞은 것은?\n정답:")
    reply = Item.objects.get(task__slug="rs_k-sns")
    variant = multiple_choice.variants(reply, "answer", "as_is")[0]
    assert multiple_choice.render_mc("", reply, variant, settings) == "화자1: 비 온대.\n화자2: 우산 챙겨.\n화자1:"


@pytest.mark.django_db
@pytest.mark.parametrize("name,record,field,words", [
    ("dc_mood_x.jsonl", B2, "task", "names no KoDialogBench test set ('dc_mood_x')"),
    ("dc_topic_k-sns.jsonl", {**B2, "answer_idx": 4}, "answer_idx", "expected 0 to 3, got 4"),
    ("dc_topic_k-sns.jsonl", {**B2, "question": None}, "question", "missing"),
    ("rs_k-sns.jsonl", {**RS, "target_speaker": None}, "target_speaker", "missing"),
    ("dc_topic_k-sns.jsonl", {**B2, "dialogue": [["1"]]}, "dialogue[0]", "expected [speaker_id, utterance]"),
])
def test_a_malformed_record_is_refused_and_writes_nothing(tmp_path, name, record, field, words):
    path = write(tmp_path / name, record)
    with pytest.raises(ImportFailure) as caught:
        import_items(path, "kodialogbench", "kdb")
    assert caught.value.field == field and words in str(caught.value) and "line 1" in str(caught.value)
    assert Item.objects.count() == 0 and not Benchmark.objects.filter(slug="kdb").exists()
