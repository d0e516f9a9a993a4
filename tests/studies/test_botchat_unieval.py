"""UniEval with the `botchat` preset against BotChat's repository (open-compass/BotChat at 70e1e63):
unieval_prompt (README.md line 149) with the in-context examples appended (README.md line 146;
data/UniEval_examples.py lines 1-78), the reply read as annotations/BrowseAnnotation.ipynb cell 10 reads it
(`parse_output`) and pass@N from the index alone (`calc_acc` there: index >= N, index 16 when none is given)."""
import hashlib
import json
from types import SimpleNamespace

import pytest

import studies
from metrics import pass_at_n
from modeleval import inference, runner
from modeleval.actions import start_run
from modeleval.models import Mode, ParseStatus, Prediction
from modeleval.modes.single_judge import TEMPLATE_FIELDS
from modeleval.prompting import check_template
from reports.contract import ReportOptions
from reports.service import make_report
from studies.botchat import recipe as botchat
from studies.botchat.examples import EXAMPLES
from tests.selfchat.test_arena import two_runs  # noqa: F401  (fixture)

# sha256 of json.dumps(examples, ensure_ascii=False, sort_keys=True) for data/UniEval_examples.py's `examples`
# as Python evaluates the file.
EXAMPLES_SHA256 = "783814e54485b50cc75887faa2bd1f80f1f0db3b3b38275494a6e88291c7dac8"


def test_the_examples_are_the_repositorys():
    """data/UniEval_examples.py lines 1-78: four conversations, two clean ("No") and two AI-involved (index 11, 9)."""
    dumped = json.dumps(EXAMPLES, ensure_ascii=False, sort_keys=True)
    assert hashlib.sha256(dumped.encode()).hexdigest() == EXAMPLES_SHA256
    assert [(e["choice"], e["index"]) for e in EXAMPLES] == [("No", "None"), ("Yes", 11), ("Yes", 9), ("No", "None")]
    assert "\\<chat_end>n" in EXAMPLES[0]["conv"]  # the source's typo kept


def test_the_template_is_the_prompt_then_the_examples_then_the_dialogue():
    """README.md line 146: the examples are appended to unieval_prompt."""
    template = botchat.UNIEVAL_TEMPLATE
    check_template(template, TEMPLATE_FIELDS)
    assert template.startswith(botchat.UNIEVAL_PROMPT) and template.endswith("Conversation:\n{dialogue}\n")
    filled = template.format(dialogue="A: Hi.<chat_end>")
    body = filled[len(botchat.UNIEVAL_PROMPT):]
    positions = [body.index(e["conv"].strip()) for e in EXAMPLES]
    assert positions == sorted(positions)
    assert body.count("Choice: Yes\nIndex: 11\nReason: The conversation is definitely AI involved. In the 11th") == 1
    assert body.endswith("Choice: No\nIndex: None\nReason: The conversation is smooth and I can't find any evidence "
                         "of AI involved. \n\nConversation:\nA: Hi.<chat_end>\n")


@pytest.mark.parametrize("reply, reading, first", [
    ("Choice: No\nIndex: None\nReason: smooth", ("no", None, True), None),
    ("Choice: Yes\nIndex: 5\nReason: too long", ("yes", 4, True), 4),
    ("Choice: Yes\nReason: too long", ("yes", None, True), None),  # parse_output's index stays 16: passes
    ("Choice: Yes\nIndex: 5 (the fifth chat)\nReason: x", ("yes", None, False), 0),  # int() fails: ours fails it
    ("Choice: Yes\nIndex:5", ("yes", None, False), 0),  # no ": " to split on
    ("Choice: Yes\nIndex: 0", ("yes", -1, True), 0),
    ("Choice: No\nIndex: 4", ("no", 3, True), 3),  # calc_acc reads the index, not the choice
    ("choice: yes\nIndex: 3", (None, 2, True), 2),  # "Choice: Yes" is case-sensitive; the index still counts
    ("Reason: hm\nChoice: Yes\nIndex: 2\nIndex: 7", ("yes", 6, True), 6),  # a later line wins
    ("Choice: Yes Index: 3", ("yes", None, True), None),  # a Choice line is never read for an index
    ("Choice: No, Choice: Yes", ("yes", None, True), None),  # "Choice: Yes" is looked for first
    ("", (None, None, True), None),
])
def test_the_reply_is_read_as_the_notebook_reads_it(reply, reading, first):
    read = botchat.parse_unieval(reply)
    assert (read.choice, read.index, read.index_readable) == reading
    assert botchat.first_flagged(read) == first


def test_pass_at_n_from_the_index_as_calc_acc_counts_it():
    """calc_acc: a dialogue passes at N (4, 8, 12, 16) when its 0-based index is N or more, 16 when none is given."""
    replies = ["Choice: No\nIndex: None", "Choice: Yes\nIndex: 5", "Choice: Yes\nIndex: 9", "Choice: Yes",
               "Choice: Yes\nIndex: 16", "Choice: Yes\nIndex: 17"]
    flagged = [botchat.first_flagged(botchat.parse_unieval(r)) for r in replies]
    assert flagged == [None, 4, 8, None, 15, 16]
    assert [p.passed for p in pass_at_n(flagged, [4, 8, 12, 16])] == [6, 5, 4, 3]


class UniEvalJudge:
    """Answers in UniEval's format: chat 3 for a dialogue saying "robot", an index it cannot read for one saying
    "Waiting", a bare "Yes" for "cinema", else "No"."""

    def __init__(self):
        self.prompts = []

    def __call__(self, model, tokenizer, prompts, **kwargs):
        self.prompts += prompts
        dialogues = [p.rsplit("Conversation:\n", 1)[1] for p in prompts]
        return ["Choice: Yes\nIndex: 3\nReason: robotic" if "robot" in d else
                "Choice: Yes\nIndex: the fourth\nReason: odd" if "Waiting" in d else
                "Choice: Yes\nReason: a film" if "cinema" in d else
                "Choice: No\nIndex: None\nReason: fine" for d in dialogues]


def test_a_unieval_run_asks_once_per_dialogue_and_reads_pass_at_n_from_the_index(two_runs, monkeypatch):  # noqa: F811
    alpha, beta = two_runs
    judge = UniEvalJudge()
    monkeypatch.setattr(inference, "load", lambda spec: SimpleNamespace(model=None, tokenizer=None))
    monkeypatch.setattr(inference, "chat_text", lambda tokenizer, spec, user, system="": user)
    monkeypatch.setattr(inference.generation, "generate", judge)
    run = start_run(model=beta.model, benchmark=alpha.benchmark, mode=Mode.SINGLE_JUDGE,
                    settings={"preset": "botchat"}, enqueue=False)
    assert run.prompt_version == "botchat-unieval-en/1" and run.prompt_template == botchat.UNIEVAL_TEMPLATE
    assert (run.settings["judging"], run.settings["max_new_tokens"]) == ("whole", 256)
    listed = {d["setting"] for d in studies.protocol(run.mode, run.settings)["differences"]}
    assert {"layout of the examples and the dialogue", "an index that cannot be read"} <= listed
    run = runner.run_sync(run)
    assert run.state == "finished", run.reason
    assert len(judge.prompts) == 3  # one question per dialogue, the looping one included
    for p in Prediction.objects.filter(run=run).select_related("item"):
        judged = [v for v in p.options if v["decided_by"] == "judge"]
        assert len(judged) == 1 and judged[0]["n"] == len(p.item.dialogue) == 6
        assert judged[0]["prompt"] == botchat.UNIEVAL_TEMPLATE.format(
            dialogue=botchat.render_conversation(p.item.dialogue))
        # Chat 3 named: passes at N = 1, 2 and fails from 3 on, every N read from the one index.
        assert [(v["n"], v["passed"]) for v in p.options] == [(n, n < 3) for n in range(1, 7)]
        assert p.answer == "3" and p.parse_status == ParseStatus.PARSED

    beta_run = runner.run_sync(start_run(model=beta.model, benchmark=beta.benchmark, mode=Mode.SINGLE_JUDGE,
                                         settings={"preset": "botchat"}, enqueue=False))
    by_seed = {p.item.meta["seed_id"]: p for p in Prediction.objects.filter(run=beta_run).select_related("item")}
    assert by_seed["s1"].answer == "pass" and by_seed["s1"].parse_status == ParseStatus.PARSED
    assert by_seed["s2"].answer == "pass"  # "Yes" without an index: passes at every N, as parse_output's 16
    assert by_seed["s3"].answer == "1" and by_seed["s3"].parse_status == ParseStatus.UNPARSABLE  # index unreadable

    from modeleval import arena

    arena.make_pairs(runs=[alpha, beta], seed=2, benchmark_slug="unieval-judged")
    curves = {(c["system"], c["judged_by"]): c for c in
              make_report("unieval-judged", options=ReportOptions(n_resamples=10))["pairwise"]["selfchat"]["pass_at_n"]}
    on_alpha, on_beta = curves["alpha", "judge:beta"], curves["beta", "judge:beta"]
    assert [p["passed"] for p in on_alpha["points"]] == [3, 3, 0, 0, 0, 0]
    assert [p["passed"] for p in on_beta["points"]] == [2] * 6
    assert (on_beta["n_asked"], on_beta["n_unparsable"]) == (3, 1)


def test_per_n_judging_stays_available_with_the_preset(two_runs, monkeypatch):  # noqa: F811
    alpha, _ = two_runs
    judge = UniEvalJudge()
    monkeypatch.setattr(inference, "load", lambda spec: SimpleNamespace(model=None, tokenizer=None))
    monkeypatch.setattr(inference, "chat_text", lambda tokenizer, spec, user, system="": user)
    monkeypatch.setattr(inference.generation, "generate", judge)
    run = runner.run_sync(start_run(model=alpha.model, benchmark=alpha.benchmark, mode=Mode.SINGLE_JUDGE,
                                    settings={"preset": "botchat", "judging": "per_n"}, enqueue=False))
    assert run.state == "finished", run.reason
    changed = [d for d in studies.protocol(run.mode, run.settings)["differences"] if d["why"] == "set for this run"]
    assert [d["setting"] for d in changed] == ["judging"]
    looping = Prediction.objects.get(run=run, item__meta__seed_id="s1")
    # Asked at N = 3 and 4 (the loop starts at utterance 4, 0-based), each prompt showing exactly N chats.
    asked = [v for v in looping.options if v["decided_by"] == "judge"]
    assert [v["n"] for v in asked] == [3, 4]
    assert all(v["prompt"].rsplit("Conversation:\n", 1)[1].count("<chat_end>") == v["n"] for v in asked)
    assert [v["passed"] for v in asked] == [False, False]  # chat 3 named, shown 3 or 4
