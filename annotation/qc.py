"""The QC rule and the QC sample, as pure functions (no database).

DiQAD: a batch passes when overall accuracy >= 92% AND the accuracy of every class >= 90%, where the
class of a sampled item is the QC's label. A class absent from the sample has no accuracy and blocks
nothing. Thresholds compare as exact fractions so that 92/100 against 0.92 is never lost to rounding.
"""
import random
import secrets
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from fractions import Fraction


def _fraction(value):
    return Fraction(str(value))


def _class_key(label):
    # JSON object keys are strings; keep the label itself next to it.
    return str(label)


@dataclass(frozen=True)
class QCDecision:
    passed: bool
    n: int
    correct: int
    overall: float | None
    overall_threshold: float
    class_threshold: float
    overall_passed: bool
    per_class: dict = field(default_factory=dict)  # str(label) -> {label, n, correct, accuracy, passed}
    failing_classes: list = field(default_factory=list)
    rule: str = ""

    def to_dict(self):
        return asdict(self)


def evaluate_sample(pairs, overall_threshold=0.92, class_threshold=0.90):
    """pairs: (qc_label, annotator_label) per sampled item. Returns the decision with its figures.

    An empty sample never passes: acceptance needs evidence.
    """
    pairs = list(pairs)
    overall_t, class_t = _fraction(overall_threshold), _fraction(class_threshold)
    counts = defaultdict(lambda: [0, 0])  # label key -> [n, correct]
    labels = {}
    for qc_label, annotator_label in pairs:
        key = _class_key(qc_label)
        labels.setdefault(key, qc_label)
        counts[key][0] += 1
        counts[key][1] += qc_label == annotator_label
    n = len(pairs)
    correct = sum(c for _, c in counts.values())
    overall_passed = n > 0 and Fraction(correct, n) >= overall_t
    per_class, failing = {}, []
    for key in sorted(counts):
        k_n, k_correct = counts[key]
        passed = Fraction(k_correct, k_n) >= class_t
        per_class[key] = {"label": labels[key], "n": k_n, "correct": k_correct,
                          "accuracy": k_correct / k_n, "passed": passed}
        if not passed:
            failing.append(labels[key])
    return QCDecision(
        passed=overall_passed and not failing, n=n, correct=correct, overall=correct / n if n else None,
        overall_threshold=float(overall_threshold), class_threshold=float(class_threshold),
        overall_passed=overall_passed, per_class=per_class, failing_classes=failing,
        rule=(f"accept when overall accuracy >= {float(overall_threshold):.2%} and every class present in the "
              f"sample (class = the QC's label) >= {float(class_threshold):.2%}"),
    )


def draw_sample(candidates, size, seed, stratify=False):
    """A seeded sample of (id, label) candidates; ids returned in a stable order.

    Stratified: each label gets a share proportional to its size (largest remainders, at least one
    per label while the size allows), so small classes are seen by the QC at all.
    """
    candidates = sorted(candidates, key=lambda c: c[0])
    rng = random.Random(seed)
    if size >= len(candidates):
        return [c[0] for c in candidates]
    if not stratify:
        return sorted(c[0] for c in rng.sample(candidates, size))
    groups = defaultdict(list)
    for item_id, label in candidates:
        groups[_class_key(label)].append(item_id)
    total = len(candidates)
    quotas = {key: size * len(ids) / total for key, ids in groups.items()}
    shares = {key: int(q) for key, q in quotas.items()}
    for key in sorted(groups, key=lambda k: len(groups[k])):
        if shares[key] == 0 and sum(shares.values()) < size:
            shares[key] = 1
    by_remainder = sorted(groups, key=lambda k: (-(quotas[k] - int(quotas[k])), k))
    while sum(shares.values()) < size:
        for key in by_remainder:
            if sum(shares.values()) < size and shares[key] < len(groups[key]):
                shares[key] += 1
    chosen = []
    for key in sorted(groups):
        chosen += rng.sample(groups[key], min(shares[key], len(groups[key])))
    return sorted(chosen)


def new_sample_secret():
    """The secret drawn at hand-in that, with the public seed, decides the QC sample. Annotators see the
    campaign seed, the sample size and the batch ids, so a draw from those alone could be predicted
    before labelling (and the sampled items labelled with care); the secret is stored on the QC review
    and never shown to annotators, so that an audit can draw the same sample again."""
    return secrets.token_hex(32)


def sample_seed(public_seed, secret):
    """The seed of the QC draw: the public part (campaign seed, batch, round) and the hand-in's secret."""
    return f"{public_seed}:{secret}" if secret else public_seed
