"""The QC acceptance rule (DiQAD: overall >= 92% and every class >= 90%, class = the QC's label)."""
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from annotation.qc import draw_sample, evaluate_sample


def pairs_for(per_class):
    """{label: (n, correct)} -> (qc_label, annotator_label) pairs; wrong answers get another label."""
    pairs = []
    for label, (n, correct) in per_class.items():
        pairs += [(label, label)] * correct + [(label, "other")] * (n - correct)
    return pairs


def test_92_of_100_with_every_class_at_90_or_more_is_accepted():
    decision = evaluate_sample(pairs_for({2: (40, 37), 1: (30, 27), 0: (30, 28)}), 0.92, 0.90)
    assert (decision.n, decision.correct, decision.overall) == (100, 92, 0.92)
    assert decision.per_class["1"]["accuracy"] == 0.9
    assert decision.passed and decision.failing_classes == []


def test_93_of_100_with_one_class_at_89_percent_is_rejected():
    decision = evaluate_sample(pairs_for({2: (45, 43), 1: (46, 42), 0: (9, 8)}), 0.92, 0.90)
    assert decision.correct == 93 and decision.overall_passed
    assert round(decision.per_class["0"]["accuracy"], 2) == 0.89
    assert not decision.passed and decision.failing_classes == [0]


def test_a_class_absent_from_the_sample_does_not_block():
    decision = evaluate_sample(pairs_for({2: (60, 56), 1: (40, 37)}), 0.92, 0.90)
    assert "0" not in decision.per_class
    assert decision.passed


def test_91_of_100_is_rejected_even_when_every_class_passes():
    decision = evaluate_sample(pairs_for({2: (50, 46), 1: (50, 45)}), 0.92, 0.90)
    assert not decision.overall_passed and not decision.passed and decision.failing_classes == []


def test_empty_sample_never_passes():
    decision = evaluate_sample([], 0.92, 0.90)
    assert decision.overall is None and not decision.passed


def test_thresholds_compare_exactly_not_in_floating_point():
    # 0.1 + 0.2 style rounding must not matter: 7/10 against 0.7 passes, 69/100 against 0.7 fails.
    assert evaluate_sample(pairs_for({1: (10, 7)}), "0.7", "0.7").passed
    assert not evaluate_sample(pairs_for({1: (100, 69)}), 0.7, 0.7).passed


labels = st.sampled_from([0, 1, 2, -1, "A", True])
pair_lists = st.lists(st.tuples(labels, labels), max_size=60)
thresholds = st.decimals(min_value=0, max_value=1, places=2)


@settings(max_examples=150, deadline=None)
@given(pair_lists, thresholds, thresholds)
def test_figures_add_up_and_the_decision_follows_them(pairs, overall_t, class_t):
    decision = evaluate_sample(pairs, overall_t, class_t)
    assert decision.n == len(pairs) == sum(c["n"] for c in decision.per_class.values())
    assert decision.correct == sum(c["correct"] for c in decision.per_class.values())
    assert decision.passed == (decision.overall_passed and all(c["passed"] for c in decision.per_class.values()))
    assert decision.passed == (len(pairs) > 0 and decision.correct * 100 >= overall_t * 100 * len(pairs) and all(
        c["correct"] * 100 >= class_t * 100 * c["n"] for c in decision.per_class.values()))


@settings(max_examples=150, deadline=None)
@given(pair_lists, thresholds, thresholds, st.randoms(use_true_random=False))
def test_order_does_not_matter(pairs, overall_t, class_t, rng):
    shuffled = list(pairs)
    rng.shuffle(shuffled)
    assert evaluate_sample(pairs, overall_t, class_t) == evaluate_sample(shuffled, overall_t, class_t)


@settings(max_examples=150, deadline=None)
@given(pair_lists.filter(lambda p: any(q != a for q, a in p)), thresholds, thresholds, st.data())
def test_correcting_a_label_never_turns_acceptance_into_rejection(pairs, overall_t, class_t, data):
    wrong = [i for i, (q, a) in enumerate(pairs) if q != a]
    i = data.draw(st.sampled_from(wrong))
    better = list(pairs)
    better[i] = (pairs[i][0], pairs[i][0])
    if evaluate_sample(pairs, overall_t, class_t).passed:
        assert evaluate_sample(better, overall_t, class_t).passed


@settings(max_examples=100, deadline=None)
@given(st.lists(labels, min_size=1, max_size=60), thresholds, thresholds)
def test_a_perfect_sample_always_passes(qc_labels, overall_t, class_t):
    assert evaluate_sample([(x, x) for x in qc_labels], overall_t, class_t).passed


def test_sample_is_seeded_and_stratification_keeps_small_classes():
    candidates = [(i, 2) for i in range(1, 181)] + [(i, 0) for i in range(181, 196)] + [(i, 1) for i in range(196, 201)]
    first = draw_sample(candidates, 100, "7:1:1")
    assert first == draw_sample(list(reversed(candidates)), 100, "7:1:1") and len(first) == 100
    assert first != draw_sample(candidates, 100, "7:1:2")
    stratified = draw_sample(candidates, 20, "7:1:1", stratify=True)
    label = dict(candidates)
    counts = {k: sum(label[i] == k for i in stratified) for k in (0, 1, 2)}
    assert len(stratified) == 20 and counts[1] >= 1 and counts[0] >= 1 and counts[2] >= 17
    assert draw_sample(candidates[:5], 100, 1) == [1, 2, 3, 4, 5]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from([0, 1, 2]), min_size=1, max_size=80), st.integers(1, 100), st.booleans(), st.integers())
def test_sample_size_and_membership(label_list, size, stratify, seed):
    candidates = list(enumerate(label_list))
    chosen = draw_sample(candidates, size, seed, stratify=stratify)
    assert len(chosen) == min(size, len(candidates)) == len(set(chosen))
    assert set(chosen) <= {i for i, _ in candidates}
    assert chosen == draw_sample(random.Random(seed).sample(candidates, len(candidates)), size, seed, stratify=stratify)
