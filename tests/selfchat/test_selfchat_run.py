import json
import time

import pytest
from django.core.management import call_command

from benchmarks.actions import import_items
from benchmarks.models import Benchmark, Item
from modeleval import inference
from modeleval.actions import RunError, start_run
from modeleval.models import EvalRun, Mode
from modeleval.scorers import selfchat_generation as selfchat
from modeleval.scorers.prompts import template_hash
from modeleval.selfchat_runs import run_selfchat

# N=8, not the protocol's 16: every step re-reads the whole prompt, and 20 seeds x 14 steps took
# over 10 minutes on a shared 2-core CPU (about 45 s a step at 20 x 200 prompt tokens).
SEEDS, UTTERANCES, CAP = 20, 8, 24


@pytest.fixture
def run(packaged, mutual_path):
    start = time.perf_counter()
    run = run_selfchat(model=packaged, seeds_path=mutual_path, limit=SEEDS, utterances=UTTERANCES,
                       max_new_tokens=CAP)
    print(f"self-chat: {SEEDS} seeds, {UTTERANCES - 2} generated utterances each, in {time.perf_counter() - start:.0f} "
          "s")
    return run


def test_selfchat_run_stores_dialogues_and_prompts(run, mutual_path):
    run = EvalRun.objects.get(pk=run.pk)
    assert run.mode == Mode.SELFCHAT and run.state == "finished" and run.items_total == SEEDS
    assert run.benchmark.slug == f"selfchat-{run.model.name}-{run.pk}"
    assert run.settings["system_prompt_sha256"] == template_hash(run.settings["system_prompt"]) == run.prompt_sha256
    assert run.settings["utterances"] == UTTERANCES and run.settings["loop_similarity"] == "char_ratio"
    seeds = [json.loads(line) for line in mutual_path.read_text().splitlines()[:SEEDS]]
    items = {item.external_id: item for item in Item.objects.filter(task__benchmark=run.benchmark)}
    assert sorted(items) == sorted(seed["id"] for seed in seeds)
    assert {item.task.slug for item in items.values()} == {"selfchat"}

    loaded = inference.load(run.model)
    for seed in seeds:
        item = items[seed["id"]]
        prediction = run.predictions.get(item=item)
        dialogue = json.loads(prediction.raw_output)
        utterances = dialogue["utterances"]
        assert len(utterances) == UTTERANCES and utterances[:2] == seed["utterances"][:2]
        assert [turn["text"] for turn in item.dialogue] == utterances
        assert item.meta["loop_start"] == dialogue["loop_start"] and item.meta["run"] == run.pk
        assert prediction.answer == ("no_loop" if dialogue["loop_start"] is None else "loop")
        assert item.source_gold == {"is_ai": True, "first_ai_turn": 2}
        assert [step["index"] for step in prediction.options] == list(range(2, UTTERANCES))
        for step in prediction.options:
            assert "\n" not in step["text"] and step["text"] == utterances[step["index"]]
            # Every prompt is rebuilt from the stored dialogue and the run's settings alone.
            prompt, dropped = selfchat.render_prompt(
                loaded.tokenizer, utterances[:step["index"]], system=run.settings["system_prompt"],
                max_prompt_tokens=run.settings["max_length"] - run.settings["max_new_tokens"],
                chat_template=run.settings["chat_template"] or None, use_chat=run.settings["use_chat"])
            assert (prompt, dropped) == (step["prompt"], step["dropped"])
        last = prediction.options[-1]["prompt"]
        assert run.settings["system_prompt"] in last and utterances[-2] in last
    assert run.events.filter(kind="finished").exists()


def test_each_side_sees_its_own_turns_as_assistant():
    dialogue = ["a0", "b1", "a2", "b3", "a4"]
    roles = [m["role"] for m in selfchat.messages(dialogue, "sys")]
    assert roles == ["system", "user", "assistant", "user", "assistant", "user"]  # B speaks next
    assert [m["role"] for m in selfchat.messages(dialogue[:4])] == ["assistant", "user", "assistant", "user"]
    assert [m["content"] for m in selfchat.messages(dialogue, dropped=3)] == ["b3", "a4"]


def test_oldest_turns_dropped_on_overflow(packaged):
    tokenizer = inference.load(packaged).tokenizer
    dialogue = [f"utterance number {i} " + "word " * 30 for i in range(8)]
    full, dropped = selfchat.render_prompt(tokenizer, dialogue, system="sys")
    assert dropped == 0
    short, dropped = selfchat.render_prompt(tokenizer, dialogue, system="sys", max_prompt_tokens=150)
    assert 0 < dropped < len(dialogue) and len(tokenizer.encode(short, add_special_tokens=False)) <= 150
    assert "sys" in short and dialogue[-1] in short and dialogue[dropped - 1] not in short
    assert selfchat.render_prompt(tokenizer, dialogue, system="sys", max_prompt_tokens=1)[1] == len(dialogue) - 1


def test_selfchat_mode_refused_by_start_run(packaged, mutual_path):
    import_items(mutual_path, "mutual", "mutual")
    with pytest.raises(RunError) as error:
        start_run(model=packaged, benchmark=Benchmark.objects.get(slug="mutual"), mode=Mode.SELFCHAT,
                  enqueue=False)
    assert error.value.code == "bad_mode"
    with pytest.raises(RunError) as error:
        run_selfchat(model=packaged, seeds_path=mutual_path, limit=2, utterances=2)  # nothing left to generate
    assert error.value.code == "bad_settings"


def test_command_runs_a_small_selfchat(packaged, mutual_path, capsys):
    call_command("selfchat", "--model", packaged.name, "--seeds", str(mutual_path), "--limit", "2",
                 "--utterances", "4", "--max-new-tokens", "8", "--system-prompt", "Be brief.")
    run = EvalRun.objects.get(mode=Mode.SELFCHAT)
    assert run.prompt_version == "custom" and run.prompt_template == "Be brief."
    assert "2 dialogues of up to 4 utterances" in capsys.readouterr().out
    assert Item.objects.filter(task__benchmark=run.benchmark).count() == 2
