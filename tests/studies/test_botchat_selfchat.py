"""Self-chat with the `botchat` preset against BotChat's repository (open-compass/BotChat at 70e1e63): its
generation system prompt (README.md lines 76-83), N = 16 chats at temperature 0 or the model's own defaults
(README.md line 86; botchat/chat_api/hf_chat.py lines 123, 127, 181, 198), the whole reply kept (gpt.py line 70
strips it, nothing cuts it), and chat lengths counted in tokens (README.md line 125, data/BrowseData.ipynb
cell 6)."""
import hashlib
import json

import pytest
from django.core.management import call_command

import studies
from modeleval import inference
from modeleval.actions import RunError
from modeleval.models import EvalRun, Mode
from modeleval.scorers import generation
from modeleval.scorers import selfchat_generation as selfchat
from modeleval.selfchat_runs import resolve_settings
from studies.botchat import recipe as botchat

# sha256 and length of README.md's generation system prompt literal (lines 76-83) as Python evaluates it.
SYSTEM_SHA256, SYSTEM_CHARS = "8c955a6cd7810842caea8c71867353b179d1407e4f7f0a13544a750342b89fc1", 685


def test_the_generation_system_prompt_is_the_repositorys_character_for_character():
    """README.md lines 76-83: the triple-quoted literal, its leading and trailing newline and trailing spaces."""
    prompt = botchat.SELFCHAT_SYSTEM_PROMPT
    assert (hashlib.sha256(prompt.encode()).hexdigest(), len(prompt)) == (SYSTEM_SHA256, SYSTEM_CHARS)
    assert prompt.startswith("\nYou are an AI who is having a conversation with human.\n")
    assert "at least 5 rounds" in prompt  # README's, not app.py's demo ("at least 8 rounds")


def test_the_preset_takes_the_studys_settings_and_ours_stay_the_default():
    """README.md line 86 (N = 16, temperature 0 if applicable), hf_chat.py line 181 (512 new tokens)."""
    ours = resolve_settings()
    assert (ours["system_prompt"], ours["max_new_tokens"], ours["decoding"], ours["reply_cut"], ours["preset"]) == \
        (selfchat.DEFAULT_SYSTEM_PROMPT, 24, "greedy", "first_line", "")
    study = resolve_settings(preset="botchat")
    assert (study["utterances"], study["max_new_tokens"], study["decoding"], study["reply_cut"]) == \
        (16, 512, "model_default", "none")
    assert study["system_prompt"] == botchat.SELFCHAT_SYSTEM_PROMPT
    assert studies.protocol(Mode.SELFCHAT, study)["preset"] == "botchat"
    listed = {d["setting"]: d for d in studies.protocol(Mode.SELFCHAT, study)["differences"]}
    assert "token counts" in listed and not any(d["why"] == "set for this run" for d in listed.values())
    # A setting given explicitly wins over the preset, and is listed as changed for this run.
    shorter = resolve_settings(preset="botchat", max_new_tokens=32, utterances=4)
    assert (shorter["max_new_tokens"], shorter["utterances"], shorter["reply_cut"]) == (32, 4, "none")
    changed = [d for d in studies.protocol(Mode.SELFCHAT, shorter)["differences"] if d["why"] == "set for this run"]
    assert {d["setting"] for d in changed} == {"max_new_tokens", "utterances"}
    with pytest.raises(RunError):
        resolve_settings(preset="nope")
    with pytest.raises(RunError):
        resolve_settings(decoding="beam")


@pytest.mark.parametrize("reply, cut, kept", [
    ("  Sure.\nB: and you?", "first_line", "Sure."),
    ("  Sure.\nB: and you?  ", "none", "Sure.\nB: and you?"),  # gpt.py line 70: stripped, never cut
    ("\n\nWell, I guess so.", "none", "Well, I guess so."),
])
def test_reply_cut(reply, cut, kept):
    assert selfchat.cut_reply(reply, cut) == kept


def test_decoding_greedy_or_the_models_own(packaged):
    """hf_chat.py line 198: model.chat() with the model's own generation config; ours forces greedy."""
    loaded = inference.load(packaged)
    seen = []
    real = loaded.model.generate

    def spy(**kwargs):
        seen.append(kwargs)
        return real(**kwargs)

    loaded.model.generate = spy
    try:
        generation.generate(loaded.model, loaded.tokenizer, ["Hi"], max_new_tokens=2, chat=False)
        generation.generate(loaded.model, loaded.tokenizer, ["Hi"], max_new_tokens=2, chat=False,
                            decoding="model_default")
    finally:
        del loaded.model.generate
    assert seen[0]["do_sample"] is False and "do_sample" not in seen[1] and "temperature" not in seen[1]
    with pytest.raises(ValueError):
        generation.generate(loaded.model, loaded.tokenizer, ["Hi"], decoding="sampled")


def test_a_preset_selfchat_keeps_whole_replies_and_counts_tokens(packaged, mutual_path):
    # 2 seeds, 4 chats and 40 new tokens: the study's 16 chats of up to 512 tokens take far too long on a CPU.
    call_command("selfchat", "--model", packaged.name, "--seeds", str(mutual_path), "--limit", "2",
                 "--utterances", "4", "--max-new-tokens", "40", "--set", "preset=botchat", "--batch-size", "2")
    run = EvalRun.objects.get(mode=Mode.SELFCHAT)
    assert run.prompt_template == botchat.SELFCHAT_SYSTEM_PROMPT
    assert run.prompt_version == "botchat-selfchat-system-en/1"
    assert (run.settings["preset"], run.settings["reply_cut"], run.settings["decoding"]) == \
        ("botchat", "none", "model_default")
    assert run.settings["token_counter"] == f"tokenizer of {packaged.name}"
    tokenizer = inference.load(packaged).tokenizer
    for prediction in run.predictions.select_related("item"):
        for step in prediction.options:
            assert step["text"] == step["reply"].strip()  # nothing cut
            assert step["prompt"].count(botchat.SELFCHAT_SYSTEM_PROMPT.strip()) == 1
        utterances = json.loads(prediction.raw_output)["utterances"]
        assert prediction.item.meta["utterance_tokens"] == [
            len(tokenizer.encode(u, add_special_tokens=False)) for u in utterances]
    with pytest.raises(Exception, match="unknown settings"):
        call_command("selfchat", "--model", packaged.name, "--seeds", str(mutual_path), "--set", "temperature=0")


def test_the_report_gives_token_lengths_with_the_tokenizer_that_counted(db):
    """README.md line 125: chat lengths in tokens, after the seed (BrowseData.ipynb cell 6 counts dlg[2:])."""
    from django.utils import timezone

    from metrics import length_stats
    from modeleval import arena
    from modeleval.models import ModelSpec
    from modeleval.scorers.prompts import template_hash
    from modeleval.selfchat_runs.store import _record
    from reports.contract import ReportOptions
    from reports.service import make_report
    from tests.selfchat.test_arena import SEED_PAIRS

    runs = []
    for name, more, counts in (("counted", ["Oh nice.", "Yes."], [9, 9, 3, 2]), ("uncounted", ["Hm.", "Ok."], None)):
        model = ModelSpec.objects.create(name=name, sha256=name[0] * 64)
        chats = [selfchat.SelfChat(list(utterances) + more, 2) for _, utterances in SEED_PAIRS]
        settings = {"system_prompt": "Be brief.", "system_prompt_sha256": template_hash("Be brief."),
                    "token_counter": f"tokenizer of {name}"}
        runs.append(_record(model, "seeds.jsonl", None, settings, SEED_PAIRS, chats, [None] * 3, timezone.now(), 0.0,
                            None, None if counts is None else [counts] * 3))
    arena.make_pairs(runs=runs, seed=1, benchmark_slug="token-lengths")
    report = make_report("token-lengths", options=ReportOptions(n_resamples=10))
    rows = {r["system"]: r for r in report["pairwise"]["selfchat"]["utterance_length"]}
    expected = length_stats([3, 2] * 3)
    assert (rows["counted"]["tokens_mean"], rows["counted"]["tokens_max"]) == (expected.mean, expected.max)
    assert rows["counted"]["token_counter"] == "tokenizer of counted"
    assert rows["uncounted"]["tokens_mean"] is None and rows["uncounted"]["token_counter"] is None
    assert "no token counts" in rows["uncounted"]["undefined"]["tokens_mean"]
