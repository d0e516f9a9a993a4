import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from modeleval.scorers.rating import STRATEGIES, Example, FewShotSelector, build_prompt

WORDS = ["movie", "puppy", "hiking", "book", "tired", "music", "rain", "pizza", "电影", "小狗"]

ids = st.text(alphabet="abcdef0123456789-", min_size=1, max_size=6)
examples = st.builds(
    Example,
    id=ids,
    context=st.lists(st.sampled_from(WORDS), max_size=6).map(" ".join),
    response=st.lists(st.sampled_from(WORDS), max_size=4).map(" ".join),
    answer=st.sampled_from(["0", "1", "2", "3", "4"]),
)


@settings(max_examples=150, deadline=None)
@given(
    pool=st.lists(examples, max_size=12, unique_by=lambda e: e.id),
    strategy=st.sampled_from(STRATEGIES),
    k=st.integers(0, 14),
    seed=st.integers(0, 3),
    data=st.data(),
)
def test_never_the_test_item(pool, strategy, k, seed, data):
    # The test item is in the pool about half the time, possibly with other text.
    in_pool = bool(pool) and data.draw(st.booleans())
    query_id = data.draw(st.sampled_from([e.id for e in pool])) if in_pool else data.draw(ids)
    query = Example(query_id, data.draw(st.sampled_from(WORDS)), data.draw(st.sampled_from(WORDS)))
    fixed = data.draw(st.permutations([e.id for e in pool])) if pool else []
    selector = FewShotSelector(pool, strategy, k, seed=seed, fixed_ids=fixed)
    chosen = selector.select(query)

    assert query.id not in [e.id for e in chosen]
    assert len({e.id for e in chosen}) == len(chosen)
    available = len([e for e in pool if e.id != query.id])
    assert len(chosen) == (0 if strategy == "none" else min(k, available))
    assert selector.select(query) == chosen  # seeded: the same choice every time
    prompt = build_prompt(query, chosen, instruction="Rate it.", quality="Engaging")
    assert prompt.example_ids == tuple(e.id for e in chosen)


def pool_of(n):
    return [Example(f"e{i}", f"context {WORDS[i % len(WORDS)]}", f"response {i}", str(i % 5)) for i in range(n)]


def test_random_choice_depends_on_seed_and_item_not_on_order():
    pool = pool_of(30)
    a = FewShotSelector(pool, "random", 4, seed=1)
    assert a.select(Example("q1", "", "")) == a.select(Example("q1", "x", "y"))
    assert a.select(Example("q1", "", "")) != FewShotSelector(pool, "random", 4, seed=2).select(Example("q1", "", ""))


def test_bm25_ranks_by_the_chosen_field():
    pool = [
        Example("a", "we watched a movie", "nice weather", "1"),
        Example("b", "rain all day", "a great movie night", "2"),
        Example("c", "pizza for dinner", "pizza again", "3"),
    ]
    query = Example("q", "which movie tonight", "pizza")
    assert [e.id for e in FewShotSelector(pool, "bm25_context", 1).select(query)] == ["a"]
    assert [e.id for e in FewShotSelector(pool, "bm25_response", 1).select(query)] == ["c"]
    zh = [Example("z1", "我喜欢小狗", "", "1"), Example("z2", "今天下雨", "", "2")]
    assert FewShotSelector(zh, "bm25_context", 1).select(Example("q", "小狗很可爱", ""))[0].id == "z1"


def test_fixed_list_keeps_its_order_and_skips_the_item():
    pool = pool_of(5)
    selector = FewShotSelector(pool, "fixed", 3, fixed_ids=["e3", "e1", "e0", "e4"])
    assert [e.id for e in selector.select(Example("e1", "", ""))] == ["e3", "e0", "e4"]
    with pytest.raises(ValueError):
        FewShotSelector(pool, "fixed", 3, fixed_ids=["nope"])


def test_build_prompt_refuses_the_item_among_its_shots():
    pool = pool_of(2)
    with pytest.raises(ValueError):
        build_prompt(pool[0], pool, instruction="Rate it.", quality="Engaging")
