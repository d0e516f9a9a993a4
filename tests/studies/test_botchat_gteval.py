"""GTEval with the `botchat` preset against BotChat's repository (open-compass/BotChat at 70e1e63): pairs
against the real dialogue are judged with the arena prompt changed only to state that "only one of two
conversations includes AI-generated utterances" (README.md line 220; its text is not published), on the
real dialogues with at least 4 chats, 222 of MuTual-Test's 547 (README.md lines 182 and 220, the table at
lines 222-224)."""
import json
from collections import Counter
from types import SimpleNamespace

from benchmarks.actions import import_items
from benchmarks.models import Benchmark, Item
from modeleval import arena, inference, runner
from modeleval.actions import start_run
from modeleval.models import Mode, Prediction
from studies.botchat import recipe as botchat
from tests.selfchat.test_arena import SEED_PAIRS, two_runs  # noqa: F401  (fixture)

# README.md lines 222-224: the ground-truth set's number of chats -> number of dialogues.
GT_ROUNDS = {4: 55, 5: 22, 6: 26, 7: 23, 8: 19, 9: 16, 10: 21, 11: 18, 12: 7, 13: 7, 14: 3, 15: 5}


def test_gteval_prompt_changes_one_sentence_of_the_arena_prompt():
    arena_lines, gt_lines = botchat.ARENA_PROMPT.split("\n"), botchat.GT_ARENA_PROMPT.split("\n")
    changed = [(a, g) for a, g in zip(arena_lines, gt_lines, strict=True) if a != g]
    assert len(arena_lines) == len(gt_lines) and len(changed) == 1
    assert changed[0] == ("You will be provided with two conversations, and there can be AI-generated utterance "
                          "in each conversation. ", "You will be provided with two conversations, and only one of "
                          "two conversations includes AI-generated utterances. ")
    assert botchat.GT_ARENA_PROMPT + botchat.ARENA_TEMPLATE[len(botchat.ARENA_PROMPT):] == botchat.GT_ARENA_TEMPLATE
    assert botchat.arena_template(botchat.ARENA_TEMPLATE, True) == botchat.GT_ARENA_TEMPLATE
    assert botchat.arena_template(botchat.ARENA_TEMPLATE, False) == botchat.ARENA_TEMPLATE
    assert botchat.arena_template("mine {conversation_1} {conversation_2}", True).startswith("mine")


def test_the_ground_truth_set_is_the_222_real_dialogues_of_4_chats_or_more(db, mutual_path):
    import_items(mutual_path, "mutual", "mutual")
    real = arena._real_dialogues(Benchmark.objects.get(slug="mutual"))
    assert len(real) == 222 and Item.objects.filter(task__benchmark__slug="mutual").count() == 547
    assert Counter(len(d.utterances) for d in real.values()) == GT_ROUNDS


def test_pairs_against_the_real_dialogue_get_the_gteval_prompt(two_runs, tmp_path, monkeypatch):  # noqa: F811
    alpha, beta = two_runs
    path = tmp_path / "real.jsonl"
    real = {"s1": SEED_PAIRS[0][1] + ["Not bad at all.", "Glad to hear."],
            "s2": SEED_PAIRS[1][1] + ["Which film?"],  # 3 chats: not in the ground-truth set
            "s3": SEED_PAIRS[2][1] + ["Thanks.", "Waiting for anyone?", "No."]}
    path.write_text("".join(json.dumps({"id": k, "utterances": v}) + "\n" for k, v in real.items()))
    import_items(path, "mutual", "real")
    benchmark = arena.make_pairs(runs=[alpha, beta], ground_truth="real", seed=4, benchmark_slug="gt-and-models")
    items = list(Item.objects.filter(task__benchmark=benchmark))
    assert {i.meta["seed_id"] for i in items} == {"s1", "s3"}  # s2's real dialogue is too short
    for item in items:
        assert item.meta["versus_ground_truth"] == (arena.HUMAN in (item.meta["model_a"], item.meta["model_b"]))

    monkeypatch.setattr(inference, "load", lambda spec: SimpleNamespace(model=None, tokenizer=None))
    monkeypatch.setattr(inference, "chat_text", lambda tokenizer, spec, user, system="": user)
    monkeypatch.setattr(inference.generation, "generate",
                        lambda model, tokenizer, prompts, **kw: ["Choice: Conversation 1"] * len(prompts))
    run = runner.run_sync(start_run(model=alpha.model, benchmark=benchmark, mode=Mode.PAIRWISE,
                                    settings={"preset": "botchat"}, enqueue=False))
    assert run.state == "finished", run.reason
    judged = [p for p in Prediction.objects.filter(run=run).select_related("item") if p.options[0].get("order")]
    kinds = Counter(p.item.meta["versus_ground_truth"] for p in judged)
    assert kinds[True] and kinds[False]
    for p in judged:
        prompt = botchat.GT_ARENA_PROMPT if p.item.meta["versus_ground_truth"] else botchat.ARENA_PROMPT
        assert all(step["prompt"].startswith(prompt) for step in p.options)


def test_against_the_real_dialogue_the_detector_reads_the_cut_dialogue_and_keeps_its_trigger(db, tmp_path):
    """BotChat runs DupDetect on "dialogues designated for pairwise comparison" (paper, section 3.2): against a
    real dialogue the generated one is first cut to the real one's length, so a repeat that falls on the last two
    utterances of the cut dialogue is not compared (2 < i < MaxRound - 1), and the utterance that triggers the
    detector stays in the dialogue shown."""
    from django.utils import timezone

    from modeleval.models import ModelSpec
    from modeleval.scorers import loops
    from modeleval.scorers import selfchat_generation as selfchat
    from modeleval.scorers.prompts import template_hash
    from modeleval.selfchat_runs.store import _record

    seed = ["Hi, how are you?", "Fine, thanks. And you?"]
    generated = seed + ["Any plans today?", "Oh no, not again.", "Oh no, not again.", "Bye then.", "See you."]
    assert loops.loop_start(generated, first=2) == 4  # the whole dialogue loops at its fifth utterance
    settings = {"system_prompt": "Be brief.", "system_prompt_sha256": template_hash("Be brief."),
                "loop_similarity": loops.DEFAULT_SIMILARITY, "loop_threshold": loops.DEFAULT_THRESHOLD}
    model = ModelSpec.objects.create(name="looper", sha256="l" * 64)
    seeds = [("short", seed), ("long", seed)]
    run = _record(model, "seeds.jsonl", None, settings, seeds, [selfchat.SelfChat(list(generated), 2)] * 2,
                  [4, 4], timezone.now(), 0.0, None)
    path = tmp_path / "real.jsonl"
    real = {"short": seed + ["Good.", "Nice.", "Yes."], "long": seed + ["Good.", "Nice.", "Yes.", "Right."]}
    path.write_text("".join(json.dumps({"id": k, "utterances": v}) + "\n" for k, v in real.items()))
    import_items(path, "mutual", "real-lengths")
    benchmark = arena.make_pairs(runs=[run], ground_truth="real-lengths", seed=0, benchmark_slug="gt-loops")
    shown = {}
    for item in Item.objects.filter(task__benchmark=benchmark, meta__model_a="looper"):
        shown[item.meta["seed_id"]] = ([t["text"] for t in item.dialogue], item.meta["loop_a"])
    # Cut to 5 utterances the repeat is the last two: not compared, no loop, the pair goes to the judge.
    assert shown["short"] == (generated[:5], None)
    # Cut to 6 it is compared: a loop at the fifth utterance, kept in what is shown; both sides then at 5.
    assert shown["long"] == (generated[:5], 4)
