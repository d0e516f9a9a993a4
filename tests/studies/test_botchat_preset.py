"""The `botchat` preset against BotChat's own repository (open-compass/BotChat at 70e1e63): its arena prompt
character for character (README.md line 185), its reading of the judge's answer (botchat/analyze.py
match_answer, lines 7-18) and its arena statistics (analyze.py simple_count, lines 20-33, and the table of
`analyze`, lines 97-110)."""
import hashlib
from types import SimpleNamespace

import pytest

import studies
from metrics import botchat_outcomes
from modeleval import arena, inference, runner
from modeleval.actions import start_run
from modeleval.models import Mode, Prediction
from studies.botchat import recipe as botchat
from studies.vocabulary import BOTH, NEITHER, ONE, TWO
from tests.selfchat.test_arena import two_runs  # noqa: F401  (fixture)

# sha256 and length of README.md's `arena_prompt` literal as Python evaluates it (line 185), and of
# `unieval_prompt` (line 149).
ARENA_SHA256, ARENA_CHARS = "4ed17801d4161fe9cf0f4241e0905c346ae7c5adab4d66c8b6e6c15832063da0", 951
UNIEVAL_SHA256, UNIEVAL_CHARS = "77324a0b1af25ee78143049368f6f5c454a466b1a872a5c97fe1bf82a4c9e502", 1144


def test_the_prompts_are_the_repositorys_character_for_character():
    assert (hashlib.sha256(botchat.ARENA_PROMPT.encode()).hexdigest(), len(botchat.ARENA_PROMPT)) == \
        (ARENA_SHA256, ARENA_CHARS)
    assert (hashlib.sha256(botchat.UNIEVAL_PROMPT.encode()).hexdigest(), len(botchat.UNIEVAL_PROMPT)) == \
        (UNIEVAL_SHA256, UNIEVAL_CHARS)
    assert botchat.ARENA_PROMPT.startswith("\nYou are an AI assistant who helps human do the Turing test more "
                                           "easily. \nYou will be provided with two conversations")
    assert "include `Choice: Neither` in your response. \n\n" in botchat.ARENA_PROMPT


@pytest.mark.parametrize("answer, label", [
    ("Choice: Conversation 1; Reason: both are short", ONE),  # the first needle found decides, not "both"
    ("Choice: Conversation 2\nReason: Conversation 1 is natural", TWO),
    ("Choice: Conversation 2 and Conversation 1", ONE),  # "Conversation 1" is looked for first
    ("Choice: Both\nReason: BlahBlah", BOTH),
    ("Choice: Both or Neither", BOTH),
    ("Reason: long replies.\nChoice: Neither", NEITHER),  # any line, not only the first
    ("Choice: unsure\nChoice: Conversation 2", TWO),  # a Choice line without a needle: the next one
    ("choice: Conversation 1", None),  # case-sensitive
    (" Choice: Conversation 1", None),  # the line must start with it
    ("I think Conversation 1 is AI.", None),  # no Choice line: "unknown"
    ("Choice: both", None),  # "Both" is case-sensitive too
])
def test_the_judges_answer_is_read_as_analyze_py_reads_it(answer, label):
    assert botchat.parse_choice(answer) == label


def test_arena_statistics_as_analyze_py_computes_them():
    # Outcomes for the model shown first; the second gets the mirror (win <-> lose, both and neither stay).
    judgements = [("x", "y", "win"), ("y", "x", "win"), ("x", "y", "both"), ("x", "z", "neither"),
                  ("z", "x", "lose"), ("y", "z", "lose")]
    stats = {r.model: r for r in botchat_outcomes(judgements)}
    x = stats["x"]  # win, lose, both, neither, win
    assert (x.n, x.win, x.both, x.neither, x.lose) == (5, 2, 1, 1, 1)
    assert x.score == pytest.approx((3 * 2 + 1 - 1 - 3 * 1) / 5)
    assert (x.win_rate, x.tie_rate, x.lose_rate, x.not_bad_rate) == pytest.approx((2 / 5, 2 / 5, 1 / 5, 3 / 5))
    y = stats["y"]  # lose, win, both, lose
    assert (y.n, y.win, y.both, y.neither, y.lose) == (4, 1, 1, 0, 2)
    assert y.score == pytest.approx((3 + 1 - 6) / 4)
    z = stats["z"]  # neither, lose, win
    assert (z.n, z.win, z.both, z.neither, z.lose) == (3, 1, 0, 1, 1)
    assert [r.model for r in botchat_outcomes(judgements)] == ["x", "z", "y"]  # best score first
    assert {botchat.study_choice(label) for label in (ONE, TWO, BOTH, NEITHER)} == {"lose", "win", "neither", "both"}
    assert x.win_tie_rate == pytest.approx(4 / 5)
    with pytest.raises(ValueError):
        botchat_outcomes([("x", "y", "tie")])
    # analyze.py keeps an unread answer ("unknown") in the denominator of every rate and the score.
    unread = {r.model: r for r in botchat_outcomes([("x", "y", "win"), ("x", "y", "unknown")])}
    assert (unread["x"].n, unread["x"].unknown, unread["x"].win_rate, unread["x"].score) == (2, 1, 0.5, 1.5)
    assert (unread["y"].lose, unread["y"].unknown, unread["y"].score) == (1, 1, -1.5)


def test_a_judge_run_with_the_preset_sends_the_study_prompt_and_reads_its_choice_line(two_runs, monkeypatch):  # noqa: F811
    alpha, beta = two_runs
    benchmark = arena.make_pairs(runs=[alpha, beta], seed=2, benchmark_slug="botchat-judged")
    sent = []

    def judge(model, tokenizer, prompts, **kwargs):
        sent.extend(prompts)
        # A reason that names the other conversation and "both": only the Choice line counts.
        return [("Choice: Conversation 2" if "robot" in p.split("Conversation 2:\n")[1] else "Choice: Conversation 1")
                + "\nReason: Both are short; Conversation 1 reads as human" for p in prompts]

    monkeypatch.setattr(inference, "load", lambda spec: SimpleNamespace(model=None, tokenizer=None))
    monkeypatch.setattr(inference, "chat_text", lambda tokenizer, spec, user, system="": user)
    monkeypatch.setattr(inference.generation, "generate", judge)
    run = start_run(model=alpha.model, benchmark=benchmark, mode=Mode.PAIRWISE, settings={"preset": "botchat"},
                    enqueue=False)
    assert run.prompt_version == "botchat-arena-en/1" and run.settings["max_new_tokens"] == 256
    assert run.prompt_template == botchat.ARENA_TEMPLATE
    listed = studies.protocol(run.mode, run.settings)
    assert listed["preset"] == "botchat" and {d["setting"] for d in listed["differences"]} >= {
        "layout of the two conversations", "both orders"}
    run = runner.run_sync(run)
    assert run.state == "finished", run.reason
    judged = [p for p in Prediction.objects.filter(run=run).select_related("item") if p.options[0].get("order")]
    assert judged
    for p in judged:
        first = botchat.render_conversation(p.item.dialogue)
        second = botchat.render_conversation(p.item.fields["conversation_2"])
        assert p.options[0]["prompt"] == (botchat.ARENA_PROMPT
                                          + f"Conversation 1:\n{first}\n\nConversation 2:\n{second}\n")
        assert first.startswith("A: ") and first.endswith("<chat_end>") and "\nB: " in first
        robot_first = p.item.meta["model_a"] == "alpha"
        assert [s["label"] for s in p.options] == ([ONE, TWO] if robot_first else [TWO, ONE])
        assert p.answer == ("lose" if robot_first else "win")
    assert all(prompt.startswith(botchat.ARENA_PROMPT) for prompt in sent)


def test_a_loop_decided_pair_counts_in_the_botchat_elo_and_bradley_terry_tables(two_runs, monkeypatch):  # noqa: F811
    """BotChat's paper (section 3.2, DupDetect): "Should one dialogue fall into an infinite loop while the other
    maintains a non-repetitive structure, the latter is deemed to Win", in PairEval "we conduct bi-directional
    comparisons and include both results": a pair the loop detector decides counts in both orders, as analyze.py
    counts its rows, in the BotChat table, Win+Tie, Elo and Bradley-Terry."""
    from metrics import bradley_terry, elo
    from reports.contract import ReportOptions
    from reports.service import make_report

    alpha, beta = two_runs  # alpha's dialogue on s1 loops: its two pairs are decided without the judge
    benchmark = arena.make_pairs(runs=[alpha, beta], seed=2, benchmark_slug="botchat-loops")
    monkeypatch.setattr(inference, "load", lambda spec: SimpleNamespace(model=None, tokenizer=None))
    monkeypatch.setattr(inference, "chat_text", lambda tokenizer, spec, user, system="": user)
    # The judge always finds the conversation shown first machine-made: on s2 and s3 each system wins one
    # order and loses the other.
    monkeypatch.setattr(inference.generation, "generate",
                        lambda model, tokenizer, prompts, **kw: ["Choice: Conversation 1\nReason: x"] * len(prompts))
    run = runner.run_sync(start_run(model=alpha.model, benchmark=benchmark, mode=Mode.PAIRWISE,
                                    settings={"preset": "botchat"}, enqueue=False))
    assert run.state == "finished", run.reason
    decided = Prediction.objects.filter(run=run, parse_status="decided").select_related("item")
    assert sorted(p.item.meta["seed_id"] for p in decided) == ["s1", "s1"]

    task = make_report("botchat-loops", options=ReportOptions(n_resamples=10))["pairwise"]["tasks"][0]
    table = task["botchat"][alpha.model.name]
    # analyze.py's rows: s2 and s3 in both orders (the first shown loses) and s1 in both orders (alpha loops).
    assert (table["n_comparisons"], table["n_decided_by_loop"], table["n_unread"]) == (6, 2, 0)
    systems = {r["model"]: r for r in table["systems"]}
    assert (systems["alpha"]["win"], systems["alpha"]["lose"], systems["alpha"]["n"]) == (2, 4, 6)
    assert (systems["beta"]["win"], systems["beta"]["lose"], systems["beta"]["n"]) == (4, 2, 6)
    assert systems["beta"]["score"] == pytest.approx((3 * 4 - 3 * 2) / 6)
    versus = {(r["model"], r["opponent"]): r for r in table["versus"]}
    assert versus["beta", "alpha"]["win_tie_rate"] == pytest.approx(4 / 6)
    entry = task["judges"][alpha.model.name]
    assert entry["n_matches"] == 6
    # The matches in the stated order (the items' ids), each comparison once, the loop's as the judge's would be.
    matches, seen = [], set()
    for item in sorted(benchmark.tasks.get().items.all(), key=lambda i: i.pk):
        a, b = item.meta["model_a"], item.meta["model_b"]
        for first, second in ((a, b), (b, a)):
            key = (item.meta["seed_id"], first, second)
            if key not in seen:
                seen.add(key)
                alpha_loops = item.meta["seed_id"] == "s1"
                matches.append((first, second, ("lose" if first == "alpha" else "win") if alpha_loops else "lose"))
    assert entry["elo"]["ratings"] == pytest.approx(elo(matches).ratings)
    assert entry["elo"]["ratings"]["beta"] > entry["elo"]["ratings"]["alpha"]
    fit = bradley_terry(matches)
    scores = {row["model"]: row["score"] for row in entry["bradley_terry"]["intervals"]}
    assert scores == pytest.approx(fit.scores)
    # Order-free: beta won 4 of the 6, so its score is 400 log10(4 / 2) above alpha's.
    import math
    assert fit.scores["beta"] - fit.scores["alpha"] == pytest.approx(400 * math.log10(2), abs=1e-6)


def test_the_protocol_lists_every_remaining_difference_with_its_reason():
    """The judge's arena: what the study publishes no text or code for, and where its counting is not described;
    self-chat by where the model ran; released dialogues by what reading them differs in."""
    pairwise = {d["setting"]: d for d in studies.protocol("pairwise", {"preset": "botchat"})["differences"]}
    assert set(pairwise) == {"GTEval prompt", "layout of the two conversations", "judge decoding", "both orders",
                             "both dialogues looping", "Win+Tie over the orders of showing", "Elo order"}
    assert "calc_win_rate" in pairwise["Win+Tie over the orders of showing"]["published"]
    local = {d["setting"] for d in studies.protocol("selfchat", {"preset": "botchat", "backend": "local",
                                                                 "max_new_tokens": 512})["differences"]}
    api = studies.protocol("selfchat", {"preset": "botchat", "backend": "api", "max_new_tokens": 1024,
                                        "decoding": "greedy"})["differences"]
    assert local == {d["setting"] for d in api} == {"decoding", "reply limit", "context overflow",
                                                   "duplicate detection", "token counts"}
    released = studies.protocol("selfchat", {"preset": "botchat", "released": "x"})["differences"]
    assert [d["setting"] for d in released] == ["duplicate detection", "token counts"]
    every = [d["why"] for mode in ("pairwise", "selfchat", "single_judge")
             for d in studies.protocol(mode, {"preset": "botchat"})["differences"]]
    assert every and all(why and "could not be read" not in why for why in every)
