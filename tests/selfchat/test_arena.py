"""BotChat arena: pairs of self-chat dialogues, labelled by people and a judge run, reported."""
import json
import time
from collections import Counter
from types import SimpleNamespace

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.utils import timezone

from annotation import actions as annotation_actions
from benchmarks.models import Benchmark, Item
from metrics import cohen_kappa, length_stats, pass_at_n
from modeleval import arena, inference, runner
from modeleval.actions import RunError, start_run
from modeleval.models import Mode, ModelSpec, ParseStatus, Prediction
from modeleval.scorers import pairwise
from modeleval.scorers import selfchat_generation as selfchat
from modeleval.scorers.loops import loop_match
from modeleval.scorers.prompts import template_hash
from modeleval.selfchat_runs import run_selfchat
from modeleval.selfchat_runs.store import _record
from reports.contract import ReportOptions
from reports.forms import PAIRWISE_OUTCOMES
from reports.render import render
from reports.service import make_report
from tests.annotation.conftest import api, sid

SEED_PAIRS = [("s1", ["Hi, how are you?", "Fine, thanks. And you?"]),
              ("s2", ["Where were you last night?", "At the cinema with Tom."]),
              ("s3", ["Is this seat taken?", "No, please sit down."])]


def fake_run(name, continuations, loops):
    """A finished self-chat run of model `name` whose dialogues are the seeds plus `continuations`."""
    model = ModelSpec.objects.create(name=name, sha256=name[0] * 64)
    chats = [selfchat.SelfChat(list(utterances) + list(more), 2) for (_, utterances), more in
             zip(SEED_PAIRS, continuations, strict=False)]
    settings = {"system_prompt": "Be brief.", "system_prompt_sha256": template_hash("Be brief.")}
    return _record(model, "seeds.jsonl", None, settings, SEED_PAIRS, chats, loops, timezone.now(), 0.0, None)


@pytest.fixture
def two_runs(db):
    # alpha's first dialogue loops at utterance 4 (it repeats utterance 2); every alpha turn says "robot".
    alpha = fake_run("alpha", [["robot one", "robot two", "robot one", "robot two"],
                               ["robot cinema?", "robot yes", "robot fun", "robot bye"],
                               ["robot thanks", "robot sure", "robot ok", "robot bye"]], [4, None, None])
    beta = fake_run("beta", [["Good, busy week.", "Work again?", "Yes, sadly.", "Hang in there."],
                             ["What film?", "A comedy.", "Was it good?", "Very."],
                             ["Thanks!", "Waiting for someone?", "My sister.", "Nice."]], [None, None, None])
    return alpha, beta


def items_of(benchmark):
    return list(Item.objects.filter(task__benchmark=benchmark).order_by("external_id"))


def texts(turns):
    return [turn["text"] for turn in turns]


def test_pairs_in_both_orders_seeded_and_cut_at_the_loop(two_runs):
    alpha, beta = two_runs
    benchmark = arena.make_pairs(runs=[alpha, beta], seed=7, benchmark_slug="arena-a")
    items = items_of(benchmark)
    assert len(items) == 2 * len(SEED_PAIRS)
    orders = Counter((item.meta["seed_id"], item.meta["model_a"], item.meta["model_b"]) for item in items)
    assert orders == Counter({(seed, a, b): 1 for seed, _ in SEED_PAIRS for a, b in (("alpha", "beta"),
                                                                                      ("beta", "alpha"))})
    by_key = {(i.meta["seed_id"], i.meta["model_a"]): i for i in items}
    for item in items:
        twin = by_key[item.meta["seed_id"], item.meta["model_b"]]
        assert item.dialogue == twin.fields["conversation_2"] and twin.dialogue == item.fields["conversation_2"]
        assert (item.meta["loop_a"], item.meta["loop_b"]) == (twin.meta["loop_b"], twin.meta["loop_a"])
    looping = by_key["s1", "alpha"]
    # Cut after the utterance that triggered the loop detector, which BotChat keeps.
    assert texts(looping.dialogue) == SEED_PAIRS[0][1] + ["robot one", "robot two", "robot one"]
    assert looping.meta["loop_a"] == 4 and looping.meta["loop_b"] is None
    assert len(by_key["s2", "alpha"].dialogue) == 6  # a dialogue that does not loop is whole

    again = arena.make_pairs(runs=[alpha.pk, beta.pk], seed=7, benchmark_slug="arena-b")
    assert [(i.external_id, i.content_hash) for i in items_of(again)] == [(i.external_id, i.content_hash)
                                                                           for i in items]
    other = arena.make_pairs(runs=[alpha, beta], seed=8, benchmark_slug="arena-c")
    assert [i.content_hash for i in items_of(other)] != [i.content_hash for i in items]

    one_order = arena.make_pairs(runs=[alpha, beta], seed=7, both_orders=False, benchmark_slug="arena-d")
    assert sorted(i.meta["seed_id"] for i in items_of(one_order)) == ["s1", "s2", "s3"]
    with pytest.raises(RunError) as refused:
        arena.make_pairs(runs=[alpha, beta], seed=7, benchmark_slug="arena-a")
    assert refused.value.code == "benchmark_exists"
    with pytest.raises(RunError) as refused:
        arena.make_pairs(runs=[alpha], seed=7)
    assert refused.value.code == "bad_settings"


def test_pairs_showing_the_same_conversation_twice_are_left_out(two_runs):
    """BotChat's analyze.py drops comparisons whose two conversations are exactly the same ("EM")."""
    alpha, beta = two_runs
    gamma = fake_run("gamma", [["Good, busy week.", "Work again?", "Yes, sadly.", "Hang in there."],  # beta's words
                               ["What film?", "A comedy.", "Was it good?", "Very."],
                               ["Something else.", "Waiting for someone?", "My sister.", "Nice."]], [None, None, None])
    benchmark = arena.make_pairs(runs=[alpha, beta, gamma], seed=1, benchmark_slug="arena-em")
    items = items_of(benchmark)
    pairs = Counter(frozenset((i.meta["model_a"], i.meta["model_b"])) for i in items)
    # beta and gamma differ on s3 only (2 orders); alpha meets each on the 3 seeds in both orders.
    assert pairs == {frozenset(("alpha", "beta")): 6, frozenset(("alpha", "gamma")): 6, frozenset(("beta", "gamma")): 2}
    assert all(texts(i.dialogue) != texts(i.fields["conversation_2"]) for i in items)
    assert [i.external_id for i in items] == [f"p{n:04d}" for n in range(1, 15)]
    assert "4 pair(s) showing the same conversation twice left out" in benchmark.description
    clone = fake_run("clone", [["Good, busy week.", "Work again?", "Yes, sadly.", "Hang in there."],
                               ["What film?", "A comedy.", "Was it good?", "Very."],
                               ["Thanks!", "Waiting for someone?", "My sister.", "Nice."]], [None, None, None])
    with pytest.raises(RunError) as refused:
        arena.make_pairs(runs=[beta, clone], seed=1, benchmark_slug="arena-all-em")
    assert refused.value.code == "no_items" and not Benchmark.objects.filter(slug="arena-all-em").exists()


def test_botchat_arena_pairs_only_the_seeds_whose_real_dialogue_has_4_utterances(db, two_runs, mutual_path):
    """BotChat's arena and ground-truth comparison use the MuTual-Test seeds with at least 4 chats: 222 of 547
    (open-compass/BotChat README.md line 182). Self-chat runs record each seed's real length."""
    from modeleval.selfchat_runs import read_seeds

    seeds = read_seeds(mutual_path)
    assert len(seeds) == 547
    assert sum(length >= arena.BOTCHAT_ARENA_MIN_UTTERANCES for _, _, length in seeds) == 222

    lengths = {"s1": 3, "s2": 5, "s3": 4}
    with_lengths = [(seed_id, utterances, lengths[seed_id]) for seed_id, utterances in SEED_PAIRS]

    def run_with_lengths(name, words):
        model = ModelSpec.objects.create(name=name, sha256=name[0] * 64)
        chats = [selfchat.SelfChat(list(utterances) + [f"{words} {n}", f"{words} again {n}"], 2)
                 for n, (_, utterances) in enumerate(SEED_PAIRS)]
        settings = {"system_prompt": "Be brief.", "system_prompt_sha256": template_hash("Be brief.")}
        return _record(model, "seeds.jsonl", None, settings, with_lengths, chats, [None] * 3, timezone.now(), 0.0,
                       None)

    one, two = run_with_lengths("one", "hello"), run_with_lengths("two", "goodbye")
    assert sorted(i.meta["source_utterances"] for i in Item.objects.filter(task__benchmark=one.benchmark)) == [3, 4, 5]
    benchmark = arena.make_pairs(runs=[one, two], seed=3, benchmark_slug="arena-222",
                                 min_source_utterances=arena.BOTCHAT_ARENA_MIN_UTTERANCES)
    assert sorted({i.meta["seed_id"] for i in items_of(benchmark)}) == ["s2", "s3"] and len(items_of(benchmark)) == 4
    assert len(items_of(arena.make_pairs(runs=[one, two], seed=3, benchmark_slug="arena-all"))) == 6
    alpha, beta = two_runs  # recorded without the real dialogues' lengths
    with pytest.raises(RunError) as refused:
        arena.make_pairs(runs=[alpha, beta], seed=3, min_source_utterances=4)
    assert refused.value.code == "bad_settings" and "run it again" in str(refused.value)


def test_reference_pairs_and_ground_truth_cut_to_the_same_length(two_runs, tmp_path):
    alpha, beta = two_runs
    path = tmp_path / "real.jsonl"
    real = {"s1": SEED_PAIRS[0][1] + ["Not bad at all.", "Glad to hear."],  # shorter than the self-chats
            "s2": SEED_PAIRS[1][1] + ["Which film?", "The new one.", "Any good?", "Yes.", "Great."],
            "s3": SEED_PAIRS[2][1]}  # nothing after the seed: left out
    path.write_text("".join(json.dumps({"id": k, "utterances": v}) + "\n" for k, v in real.items()))
    call_command("import_items", "--format", "mutual", "--benchmark", "real", str(path))
    call_command("make_pairs", "--runs", str(alpha.pk), str(beta.pk), "--reference", "human", "--ground-truth",
                 "real", "--seed", "3", "--benchmark-slug", "versus-real")
    items = items_of(Benchmark.objects.get(slug="versus-real"))
    pairs = Counter(frozenset((i.meta["model_a"], i.meta["model_b"])) for i in items)
    assert pairs == {frozenset(("human", "alpha")): 4, frozenset(("human", "beta")): 4}  # 2 seeds x 2 orders
    for item in items:
        assert len(item.dialogue) == len(item.fields["conversation_2"])
        assert item.meta["seed_id"] in ("s1", "s2")
    s1 = next(i for i in items if i.meta["seed_id"] == "s1" and i.meta["model_a"] == "alpha")
    # Compared at 4 utterances, alpha's loop (from utterance 4 on) is not shown, so it does not count.
    assert len(s1.dialogue) == 4 and s1.meta["loop_a"] is None
    s2 = next(i for i in items if i.meta["seed_id"] == "s2" and i.meta["model_b"] == "human")
    assert texts(s2.fields["conversation_2"]) == real["s2"][:6]

    call_command("make_pairs", "--runs", str(alpha.pk), str(beta.pk), "--reference", str(beta.pk),
                 "--benchmark-slug", "ref")
    assert {frozenset((i.meta["model_a"], i.meta["model_b"])) for i in items_of(Benchmark.objects.get(slug="ref"))} \
        == {frozenset(("alpha", "beta"))}


def test_annotators_never_receive_who_wrote_what(two_runs):
    alpha, beta = two_runs
    benchmark = arena.make_pairs(runs=[alpha, beta], seed=1, benchmark_slug="blind")
    staff = User.objects.create_user("boss", is_staff=True)
    rater = User.objects.create_user("rater")
    campaign = annotation_actions.create_campaign(actor=staff, name="blind", benchmark=benchmark,
                                                  protocol="human_baseline", settings={"overlap": 1})
    annotation_actions.add_member(campaign, actor=staff, user=rater, role="annotator")
    annotation_actions.cut_batches(campaign, actor=staff)
    client, seen = api(rater), 0
    while (body := client.post(f"/api/v1/campaigns/{campaign.pk}/next/").json())["status"] != "no_work":
        lease = body["assignment"]
        served = json.dumps(lease)
        for secret in ("alpha", "beta", "model_a", "source_a", "loop_a", "seed_id"):
            assert secret not in served
        assert lease["item"]["meta"] == {"language": "en"}
        assert lease["item"]["fields"].keys() == {"conversation_2"} and lease["form"] == arena.PAIRWISE_FORM
        submitted = client.post(f"/api/v1/assignments/{lease['id']}/submit/",
                                {"client_submission_id": sid(), "answers": {"involves_ai": "both"}}, format="json")
        assert submitted.status_code == 201, submitted.content
        seen += 1
    assert seen == 2 * len(SEED_PAIRS)


class FakeJudge:
    """Names the conversation that says "robot" (or conversation 1 when neither does), and keeps the prompts."""

    def __init__(self):
        self.prompts = []

    def __call__(self, model, tokenizer, prompts, **kwargs):
        self.prompts += prompts
        return [("Conversation 2" if "robot" in p.split("Conversation 2:")[1] else "Conversation 1") + "\nbecause"
                for p in prompts]


def test_judge_run_short_circuits_loops_and_reads_both_orders(two_runs, monkeypatch):
    alpha, beta = two_runs
    benchmark = arena.make_pairs(runs=[alpha, beta], seed=2, benchmark_slug="judged")
    judge = FakeJudge()
    # No weights needed.
    monkeypatch.setattr(inference, "load", lambda spec: SimpleNamespace(model=None, tokenizer=None))
    monkeypatch.setattr(inference, "chat_text", lambda tokenizer, spec, user, system="": user)
    monkeypatch.setattr(inference.generation, "generate", judge)
    run = start_run(model=alpha.model, benchmark=benchmark, mode=Mode.PAIRWISE, enqueue=False)
    assert run.prompt_version == "pairwise-ai-judge-en/1" and run.settings["rule"] == "consistent"
    run = runner.run_sync(run)
    assert run.state == "finished", run.reason
    predictions = {p.item.meta["seed_id"] + p.item.meta["model_a"]: p for p in
                   Prediction.objects.filter(run=run).select_related("item")}
    assert len(predictions) == 6
    for key in ("s1alpha", "s1beta"):  # alpha loops on s1: decided without the judge
        p = predictions[key]
        assert p.parse_status == ParseStatus.DECIDED and p.raw_output == "" and p.options[0]["decided_by"] == "loop"
        assert p.answer == loop_match(p.item.meta["loop_a"], p.item.meta["loop_b"]) == \
            ("lose" if key == "s1alpha" else "win")
    assert not any("robot one" in prompt for prompt in judge.prompts)
    # The other 2 seeds, each offered in both orders: 2 distinct prompts per seed, each generated once.
    assert len(judge.prompts) == len(set(judge.prompts)) == 4
    for key in ("s2alpha", "s2beta", "s3alpha", "s3beta"):
        p = predictions[key]
        assert p.parse_status == ParseStatus.PARSED and [s["order"] for s in p.options] == ["ab", "ba"]
        assert p.answer == ("lose" if key.endswith("alpha") else "win")  # "robot" is picked in both orders
        assert [s["label"] for s in p.options] == (["1", "2"] if key.endswith("alpha") else ["2", "1"])
        assert json.loads(p.raw_output) == {s["order"]: s["reply"] for s in p.options}
        ab, ba = pairwise.pairwise_prompts(*("\n".join(f"{t['speaker']}: {t['text']}" for t in turns)
                                             for turns in (p.item.dialogue, p.item.fields["conversation_2"])),
                                           run.prompt_template)
        assert (p.options[0]["prompt"], p.options[1]["prompt"]) == (ab, ba)

    judged = make_report("judged", options=ReportOptions(n_resamples=20))["pairwise"]
    verdicts = judged["tasks"][0]["judges"]["alpha"]
    assert verdicts["n_matches"] == 6
    assert {(p["model_a"], p["model_b"], p["wins"], p["losses"]) for p in verdicts["win_tie_lose"]} == \
        {("alpha", "beta", 0, 6)}
    assert verdicts["agreement_with_humans"] is None and verdicts["undefined"]["agreement_with_humans"]
    # BotChat's table, read from the stored steps: 2 judged seeds, each pair shown in 2 orders (its twin item asks
    # the same two questions), alpha judged the machine every time; the loop-decided seed counts in both orders too,
    # alpha's looping dialogue losing (BotChat's DupDetect).
    botchat = judged["tasks"][0]["botchat"]["alpha"]
    stats = {r["model"]: r for r in botchat["systems"]}
    assert (botchat["n_comparisons"], botchat["n_decided_by_loop"]) == (6, 2)
    assert (stats["alpha"]["lose"], stats["alpha"]["n"], stats["alpha"]["score"]) == (6, 6, -3)
    assert (stats["beta"]["win"], stats["beta"]["not_bad_rate"]) == (6, 1.0)
    lengths = {row["system"]: row for row in judged["selfchat"]["utterance_length"]}
    assert lengths["alpha"]["words_mean"] == pytest.approx(2.0) and lengths["alpha"]["n_utterances"] == 12
    loops = {c["system"]: c for c in judged["selfchat"]["pass_at_n"] if c["judged_by"] == "loop_detector"}
    # alpha's s1 loops at utterance 4: shown 5 or more utterances, it fails.
    assert [p["share"] for p in loops["alpha"]["points"]] == pytest.approx([1, 1, 1, 1, 2 / 3, 2 / 3])
    assert {p["share"] for p in loops["beta"]["points"]} == {1.0}


def test_pass_at_n_from_single_dialogue_labels(two_runs):
    """People's labels on the self-chat items themselves (BotChat (a)) give the humans' pass@N."""
    alpha, beta = two_runs
    arena.make_pairs(runs=[alpha, beta], seed=4, benchmark_slug="labelled")
    staff = User.objects.create_user("boss", is_staff=True)
    rater = User.objects.create_user("rater")
    campaign = annotation_actions.create_campaign(actor=staff, name="single", benchmark=alpha.benchmark,
                                                  protocol="human_baseline", settings={"overlap": 1})
    annotation_actions.add_member(campaign, actor=staff, user=rater, role="annotator")
    annotation_actions.cut_batches(campaign, actor=staff)
    answers = {"s1": {"is_ai": True, "first_ai_turn": 2}, "s2": {"is_ai": True, "first_ai_turn": 4},
               "s3": {"is_ai": False}}
    while lease := annotation_actions.lease_next_item(campaign, annotator=rater):
        annotation_actions.submit_annotation(lease.assignment, annotator=rater, client_submission_id=sid(),
                                             answers=answers[lease.assignment.item.meta["seed_id"]])
    curves = {(c["system"], c["judged_by"]): c for c in
              make_report("labelled", options=ReportOptions(n_resamples=10))["pairwise"]["selfchat"]["pass_at_n"]}
    humans = curves["alpha", "humans"]
    assert humans["n_judgements"] == 3 and humans["n_dialogues"] == 3
    # Shown N utterances, a dialogue flagged from utterance f on passes while f >= N.
    assert [p["passed"] for p in humans["points"]] == [3, 3, 2, 2, 1, 1]
    assert curves["beta", "humans"]["points"] is None and curves["beta", "humans"]["undefined"]["points"]


def test_pass_at_n_and_length_figures():
    points = pass_at_n([None, 0, 3, 5], range(1, 5))
    assert [(p.n, p.passed, p.total) for p in points] == [(1, 3, 4), (2, 3, 4), (3, 3, 4), (4, 2, 4)]
    assert pass_at_n([], [1])[0].share is None
    with pytest.raises(ValueError):
        pass_at_n([-1], [1])
    with pytest.raises(ValueError):
        pass_at_n([None], [0])
    stats = length_stats([1, 2, 3, 10])
    assert (stats.n, stats.mean, stats.median, stats.min, stats.max) == (4, 4.0, 2.5, 1, 10)
    assert length_stats([]).mean is None


def test_pairwise_mode_refuses_items_without_two_conversations(two_runs):
    alpha, _ = two_runs
    with pytest.raises(RunError) as refused:
        start_run(model=alpha.model, benchmark=alpha.benchmark, mode=Mode.PAIRWISE, enqueue=False)
    assert refused.value.code == "mode_unsuited"


# --- the whole arena on the packaged model ------------------------------------------------

ANNOTATORS = ("ann1", "ann2", "ann3")


def human_answer(rater, item, worse, first_seed):
    """ann1 and ann2 name the dialogue of run `worse` as the machine's, except on the first seed; ann3
    always says both."""
    if rater == "ann3":
        return "both"
    picked = worse if item.meta["seed_id"] != first_seed else next(
        m for m in (item.meta["model_a"], item.meta["model_b"]) if m != worse)
    return "1" if item.meta["model_a"] == picked else "2"


def test_arena_end_to_end(packaged, mutual_path):
    start = time.perf_counter()
    runs = [run_selfchat(model=packaged, seeds_path=mutual_path, limit=4, utterances=5, max_new_tokens=cap,
                         system_prompt=prompt, batch_size=4)
            for cap, prompt in ((12, selfchat.DEFAULT_SYSTEM_PROMPT), (20, "Answer like a pirate, in one line."))]
    print(f"two self-chat runs: {time.perf_counter() - start:.0f} s")
    benchmark = arena.make_pairs(runs=runs, seed=5, benchmark_slug="arena-e2e")
    items = {item.pk: item for item in items_of(benchmark)}
    assert len(items) == 8
    labels = arena.run_labels(runs)
    worse, first_seed = labels[runs[0].pk], min(item.meta["seed_id"] for item in items.values())

    staff = User.objects.create_user("boss", is_staff=True)
    campaign = annotation_actions.create_campaign(actor=staff, name="arena", benchmark=benchmark,
                                                  protocol="human_baseline", settings={"seed": 5})
    for name in ANNOTATORS:
        annotation_actions.add_member(campaign, actor=staff, user=User.objects.create_user(name), role="annotator")
    annotation_actions.cut_batches(campaign, actor=staff)
    for name in ANNOTATORS:
        client = api(User.objects.get(username=name))
        while (body := client.post(f"/api/v1/campaigns/{campaign.pk}/next/").json())["status"] != "no_work":
            lease = body["assignment"]
            item = items[lease["item"]["id"]]
            answers = {"involves_ai": human_answer(name, item, worse, first_seed), "reason": "style"}
            submitted = client.post(f"/api/v1/assignments/{lease['id']}/submit/",
                                    {"client_submission_id": sid(), "answers": answers}, format="json")
            assert submitted.status_code == 201, submitted.content

    start = time.perf_counter()
    judge = runner.run_sync(start_run(model=packaged, benchmark=benchmark, mode=Mode.PAIRWISE, enqueue=False))
    print(f"judge run over {len(items)} pairs: {time.perf_counter() - start:.0f} s")
    assert judge.state == "finished"
    verdicts = {}
    for p in Prediction.objects.filter(run=judge):
        item = items[p.item_id]
        decided = loop_match(item.meta["loop_a"], item.meta["loop_b"])
        if decided:
            assert p.parse_status == ParseStatus.DECIDED and p.answer == decided
        else:
            ab, ba = p.options
            assert (ab["label"], ba["label"]) == tuple(pairwise.parse_pairwise(s["reply"]) for s in (ab, ba))
            assert p.answer == (pairwise.combine_orders(ab["label"], ba["label"]) or "")
            assert p.parse_status == (ParseStatus.PARSED if p.answer else ParseStatus.UNPARSABLE)
        verdicts[p.item_id] = p.answer or None
    assert verdicts.keys() == items.keys()

    report = make_report("arena-e2e", options=ReportOptions(n_resamples=50))
    task = report["pairwise"]["tasks"][0]
    humans = task["judges"]["humans"]
    human = {i: PAIRWISE_OUTCOMES[human_answer("ann1", item, worse, first_seed)] for i, item in items.items()}
    assert task["n_human_labelled"] == 8 and humans["n_matches"] == 8
    wtl = {(p["model_a"], p["model_b"]): (p["wins"], p["ties"], p["losses"]) for p in humans["win_tie_lose"]}
    better = labels[runs[1].pk]
    expected = (2, 0, 6) if worse < better else (6, 0, 2)  # the worse system wins only on the first seed
    assert wtl == {tuple(sorted((worse, better))): expected}
    assert humans["elo"]["ratings"][better] > 1000 > humans["elo"]["ratings"][worse]
    intervals = {i["model"]: i for i in humans["bradley_terry"]["intervals"]}
    assert intervals.keys() == {worse, better} and humans["bradley_terry"]["undefined_reason"] is None
    assert all(i["low"] is not None and i["low"] <= i["score"] <= i["high"] for i in intervals.values())

    entry = task["judges"][packaged.name]
    both = [i for i in items if verdicts[i] is not None]
    assert entry["n_compared"] == len(both)
    if both:
        assert entry["agreement_with_humans"] == pytest.approx(sum(verdicts[i] == human[i] for i in both) / len(both))
        kappa = cohen_kappa([verdicts[i] for i in both], [human[i] for i in both])
        assert entry["kappa_with_humans"] == (pytest.approx(kappa.value) if kappa.value is not None else None)
        if kappa.value is None:
            assert entry["undefined"]["kappa_with_humans"] == kappa.undefined_reason
    else:
        assert entry["undefined"]["agreement_with_humans"] == "no item labelled by both"
    print(f"judge: {Counter(verdicts.values())}, agreement with humans {entry.get('agreement_with_humans')}, "
          f"kappa {entry.get('kappa_with_humans')} {entry['undefined']}")

    selfchat_part = report["pairwise"]["selfchat"]
    curves = {(c["system"], c["judged_by"]): c for c in selfchat_part["pass_at_n"]}
    assert {system for system, _ in curves} == {worse, better}
    for run in runs:
        curve = curves[labels[run.pk], "loop_detector"]
        loop_starts = [p.item.meta["loop_start"] for p in run.predictions.select_related("item")]
        assert [p["n"] for p in curve["points"]] == [1, 2, 3, 4, 5]
        assert [p["passed"] for p in curve["points"]] == [sum(s is None or s >= n for s in loop_starts)
                                                          for n in range(1, 6)]
        assert curves[labels[run.pk], "humans"]["points"] is None  # no single-dialogue campaign here
    assert {row["system"] for row in selfchat_part["utterance_length"]} == {worse, better}
    assert all(row["n_utterances"] == 12 and row["words_mean"] > 0 for row in selfchat_part["utterance_length"])

    html = render(report, "html")
    assert "<figcaption>pass@N of generated dialogues</figcaption>" in html
    figure = html.split("<figcaption>pass@N of generated dialogues</figcaption>", 1)[1]
    assert figure.lstrip().startswith("<svg") and "loop detector" in figure.split("</svg>", 1)[0]
    assert 'id="utterance_length"' in html and 'id="pairwise_arena"' in html
    assert "pairwise.pass_at_n" in render(report, "csv")


def test_the_botchat_preset_builds_its_arena_on_the_seeds_of_4_utterances_itself(db):
    """BotChat's arena is the 222 seeds of 4 chats or more (README.md line 182): runs of the botchat preset get it
    without --min-source-utterances; 1 takes every seed, and runs of no preset keep every seed."""
    lengths = {"s1": 3, "s2": 5, "s3": 4}

    def run_of(name, preset):
        model = ModelSpec.objects.create(name=name, sha256=name[0] * 64)
        chats = [selfchat.SelfChat(list(utterances) + [f"{name} {n}", f"{name} again {n}"], 2)
                 for n, (_, utterances) in enumerate(SEED_PAIRS)]
        settings = {"system_prompt": "Be brief.", "system_prompt_sha256": template_hash("Be brief."), "preset": preset}
        return _record(model, "seeds.jsonl", None, settings, [(s, u, lengths[s]) for s, u in SEED_PAIRS], chats,
                       [None] * 3, timezone.now(), 0.0, None)

    one, two, plain = run_of("one", "botchat"), run_of("two", "botchat"), run_of("plain", "")
    preset = arena.make_pairs(runs=[one, two], seed=0, benchmark_slug="preset-arena")
    assert sorted({i.meta["seed_id"] for i in items_of(preset)}) == ["s2", "s3"]
    assert "seeds whose real dialogue has 4 utterances or more" in preset.description
    every = arena.make_pairs(runs=[one, two], seed=0, benchmark_slug="every-seed", min_source_utterances=1)
    assert sorted({i.meta["seed_id"] for i in items_of(every)}) == ["s1", "s2", "s3"]
    mixed = arena.make_pairs(runs=[one, plain], seed=0, benchmark_slug="mixed-arena")
    assert sorted({i.meta["seed_id"] for i in items_of(mixed)}) == ["s1", "s2", "s3"]
    assert "every seed" in mixed.description
