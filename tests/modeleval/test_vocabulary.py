"""The names the model side shows things under, each written once (modeleval.selectors, modeleval.scorers)."""
from modeleval import selectors


def test_a_run_is_shown_under_its_model_name_with_its_id_only_when_the_model_ran_twice_in_that_mode():
    runs = [(1, "gpt2", "loglik"), (2, "gpt2", "loglik"), (3, "gpt2", "generation"), (4, "qwen", "loglik")]
    assert selectors.run_labels(runs) == {1: "gpt2#1", 2: "gpt2#2", 3: "gpt2", 4: "qwen"}
