"""The names the model side shows things under, each written once (modeleval.selectors, modeleval.scorers)."""
from modeleval import arena, selectors
from modeleval.scorers import prompts
from studies import vocabulary as pairwise
from studies.botchat import recipe as botchat


def test_a_run_is_shown_under_its_model_name_with_its_id_only_when_the_model_ran_twice_in_that_mode():
    runs = [(1, "gpt2", "loglik"), (2, "gpt2", "loglik"), (3, "gpt2", "generation"), (4, "qwen", "loglik")]
    assert selectors.run_labels(runs) == {1: "gpt2#1", 2: "gpt2#2", 3: "gpt2", 4: "qwen"}


def test_a_self_chat_items_seed_is_what_its_run_kept_else_botchats_two():
    assert botchat.seed_utterances({"seed_utterances": 3}) == 3
    assert botchat.seed_utterances({"loop_start": 5}) == botchat.SEED_UTTERANCES == 2
    assert botchat.seed_utterances(None) == 2


def test_a_pairwise_answer_reads_as_the_outcome_for_the_conversation_shown_first():
    """win / tie / lose as such; a verdict as `outcome` reads it when the picked conversation loses."""
    assert pairwise.OUTCOMES == {"win": "win", "tie": "tie", "lose": "lose", "1": "lose", "2": "win", "both": "tie",
                                 "neither": "tie"}
    assert [o["value"] for o in arena.PAIRWISE_FORM["questions"][0]["options"]] == list(pairwise.LABELS)
    assert botchat.LOOP_OUTCOME == {"win": "win", "lose": "lose", "tie": "neither"}


def test_a_system_prompt_leads_the_chat_only_when_there_is_one():
    user = prompts.chat_messages("hi")
    assert prompts.with_system("Be brief.", user) == [{"role": "system", "content": "Be brief."}, *user]
    assert prompts.with_system("", user) == prompts.with_system(None, user) == user
