import pytest

from modeleval.scorers.loops import LOSE, TIE, WIN, char_ratio, cut_at_loop, loop_match, loop_start, token_overlap

SEED = ["You look rather pale. Are you feeling well?", "Not very. I was sick most of the night."]
LOOPING = SEED + [
    "What seems to be the matter? Is it the flu?",
    "No, I think it was something I ate at the new restaurant.",
    "That's too bad. I hope you feel better soon.",
    "Thanks, I hope so too.",
    "That's too bad. I hope you feel better soon!",  # repeats utterance 4 (two back)
    "Thanks, I hope so too.",
]
NOT_LOOPING = SEED + [
    "What seems to be the matter? Is it the flu?",
    "No, I think it was something I ate at the new restaurant.",
    "Which restaurant? The one on Main Street?",
    "Yes, the Italian place that opened last week.",
]


@pytest.mark.parametrize("similarity", ["char_ratio", "token_overlap"])
def test_loop_found_at_the_first_repeat(similarity):
    assert loop_start(LOOPING, similarity=similarity, threshold=0.9, first=2) == 6
    # BotChat keeps "all dialogue up to that point (including the utterance that triggered DupDetect)".
    assert cut_at_loop(LOOPING, 6) == LOOPING[:7]
    assert loop_start(NOT_LOOPING, similarity=similarity, threshold=0.9, first=2) is None
    assert cut_at_loop(NOT_LOOPING, None) == NOT_LOOPING


@pytest.mark.parametrize("similarity", ["char_ratio", "token_overlap"])
def test_echo_of_the_previous_generated_turn_loops_and_of_the_seed_does_not(similarity):
    """The duplicate detector of PROTOCOLS.md section 4 (BotChat's DupDetect, of which open-compass/BotChat at
    70e1e63 publishes no code: its README.md lines 335-358 show the repetition it catches) compares generated
    utterances only, never one with the human seed."""
    echo = "Not very. I was sick most of the night."
    assert loop_start(SEED + [echo, "Oh no.", "Oh no.", "Any fever?"], similarity=similarity, first=2) == 4
    # The first reply repeats the seed's last chat, the second the seed's first: neither is a loop.
    assert loop_start(SEED + [echo, SEED[0], "Any fever?", "No."], similarity=similarity, first=2) is None
    assert loop_start(SEED + [echo, "Any fever?"], similarity=similarity, first=0) == 2  # all compared when asked


@pytest.mark.parametrize("similarity", ["char_ratio", "token_overlap"])
def test_the_last_two_utterances_are_not_compared_with_each_other_as_the_paper_bounds_i(similarity):
    """BotChat's paper, section 3.2: the i-th utterance against the i+1-th and i+2-th for 2 < i < MaxRound - 1
    (numbered from 1): the last utterance is compared with the one two before it, never with the one just before."""
    assert loop_start(SEED + ["Any fever?", "Oh no.", "Oh no."], similarity=similarity, first=2) is None
    assert loop_start(SEED + ["Oh no.", "Any fever?", "Oh no."], similarity=similarity, first=2) == 4


def test_threshold_and_first_are_settings():
    near = ["I love hiking in the mountains.", "I love hiking in the hills.", "Me too."]
    assert char_ratio(*near[:2]) < 0.9 < 1.0
    assert loop_start(near, threshold=0.9) is None
    assert loop_start(near, threshold=0.7) == 1
    # The human seed is left alone when only generated turns may loop.
    assert loop_start(["Hi.", "Hi.", "How was your day?"], first=2) is None
    assert loop_start(["Hi.", "Hi.", "How was your day?"]) == 1


def test_similarities():
    assert token_overlap("The cat sat.", "the CAT sat") == 1.0
    assert token_overlap("a b", "c d") == 0.0
    assert token_overlap("...", "!") == 1.0
    assert char_ratio("abc", "abc") == 1.0
    with pytest.raises(ValueError):
        loop_start(LOOPING, similarity="cosine")


def test_match_rules():
    assert loop_match(5, 7) == TIE
    assert loop_match(5, None) == LOSE
    assert loop_match(None, 3) == WIN
    assert loop_match(None, None) is None  # the judge decides


def test_the_report_names_the_loop_detectors_measure_and_threshold(db):
    """The measure and threshold are ours (open-compass/BotChat at 70e1e63 publishes no DupDetect code): the
    report's self-chat section says which, per system."""
    from django.utils import timezone

    from modeleval import arena
    from modeleval.models import ModelSpec
    from modeleval.scorers import selfchat_generation as selfchat
    from modeleval.scorers.prompts import template_hash
    from modeleval.selfchat_runs.store import _record
    from reports.contract import ReportOptions
    from reports.service import make_report
    from tests.selfchat.test_arena import SEED_PAIRS

    runs = []
    for name, measure, threshold in (("one", "char_ratio", 0.9), ("two", "token_overlap", 0.8)):
        model = ModelSpec.objects.create(name=name, sha256=name[0] * 64)
        chats = [selfchat.SelfChat(list(u) + [f"{name} says {k}", "Sure."], 2) for k, (_, u) in enumerate(SEED_PAIRS)]
        settings = {"system_prompt": "Be brief.", "system_prompt_sha256": template_hash("Be brief."),
                    "loop_similarity": measure, "loop_threshold": threshold}
        runs.append(_record(model, "seeds.jsonl", None, settings, SEED_PAIRS, chats, [None] * 3, timezone.now(), 0.0,
                            None))
    arena.make_pairs(runs=runs, seed=1, benchmark_slug="loop-rules")
    section = make_report("loop-rules", options=ReportOptions(n_resamples=10))["pairwise"]["selfchat"]
    rules = {c["system"]: c["loop_rule"] for c in section["pass_at_n"] if c["judged_by"] == "loop_detector"}
    assert rules == {"one": "char_ratio >= 0.9 with either of the two generated utterances before",
                     "two": "token_overlap >= 0.8 with either of the two generated utterances before"}
    assert "char_ratio >= 0.9" in section["note"] and "token_overlap >= 0.8" in section["note"]
