"""Per campaign and annotator: accuracy against gold and QC, agreement with peers, reading time."""
from __future__ import annotations

from collections import defaultdict

import numpy as np

from benchmarks.models import canonical_json
from metrics import cohen_kappa_by_pair, median_reading_seconds, peer_pairs

from ..contract import ReportOptions
from ..figures import new_row, put
from ..readable import flag
from ..rows import Rows


def label_key(value):
    """A hashable stand-in for a label (multi-choice answers are lists)."""
    return canonical_json(value) if isinstance(value, (list, dict)) else value



def label_codes(values):
    """Each label as a small int (-1 for none), numbered in order of first appearance, and label_key -> code."""
    if set(map(type, values)) <= {str, int, bool, type(None)}:
        # label_key of each is the label itself: the distinct labels found in one pass, then looked up
        codes = {label: n for n, label in enumerate(v for v in dict.fromkeys(values) if v is not None)}
        code = np.fromiter(map({**codes, None: -1}.__getitem__, values), dtype=np.int64, count=len(values))
        return code, codes
    codes = {}
    code = np.array([-1 if v is None else codes.setdefault(label_key(v), len(codes)) for v in values], dtype=np.int64)
    return code, codes


def annotator_section(rows: Rows, options: ReportOptions):
    """Per campaign and annotator: accuracy against gold and QC, agreement with peers, reading time,
    and the QC rejections their labels contributed to."""
    ann = rows.data.annotations
    campaign, annotator, item, rnd, batch = (rows.annotation_array(k) for k in
                                             ("campaign_id", "annotator_id", "item_id", "round", "batch_id"))
    values, current = ann["value"], rows.annotation_array("current")
    code, codes = label_codes(values)  # label -> small int, so that comparisons and kappa run on integers
    gold_of_item = [g if (g := rows.gold.get(i)) is None else label_key(g) for i in rows.data.items["id"]]
    gold = np.fromiter((-2 if g is None else codes.get(g, -3) for g in gold_of_item), dtype=np.int64,
                       count=len(gold_of_item))[rows.annotation_array("item_position")]
    dwell = np.array([np.nan if d is None else d for d in ann["dwell_seconds"]], dtype=float)
    first, second = peer_pairs(campaign, item, rnd, current & (code >= 0))
    qc = defaultdict(lambda: [0, 0, set()])  # (campaign, annotator) -> [right, checked, rejected rounds caused]
    checks = {(b, r, i): (decision, v) for b, r, decision, i, v in rows.data.qc if v is not None}
    rejected = {(b, r) for b, r, decision, _, _ in rows.data.qc if decision == "rejected"}
    rounds = defaultdict(set)
    if checks:
        for n in range(rows.n_annotations):
            key = (campaign[n], annotator[n])
            rounds[key].add((batch[n], rnd[n]))
            checked = checks.get((batch[n], rnd[n], item[n]))
            if checked is not None:
                right = values[n] == checked[1]
                qc[key][0] += right
                qc[key][1] += 1
                if checked[0] == "rejected" and not right:
                    qc[key][2].add((batch[n], rnd[n]))
    # Cohen's kappa is a two-rater statistic: one per pair of annotators on the items both labelled,
    # each pair oriented (lower annotator id first) so that its rows line up.
    once = first < second
    first, second = first[once], second[once]
    swap = annotator[first] > annotator[second]
    first, second = np.where(swap, second, first), np.where(swap, first, second)
    kappas = defaultdict(list)  # (campaign, annotator) -> kappas with each peer
    pair_of = np.stack([campaign[first], annotator[first], annotator[second]], axis=1)
    for (c, a, b), kappa in cohen_kappa_by_pair(pair_of, code[first], code[second]):
        kappas[c, a].append(kappa.value)
        kappas[c, b].append(kappa.value)
    out = []
    no_peer = "no item was labelled by them and a peer in the same round"
    people = sorted({(c, a) for c, a in zip(ann["campaign_id"], ann["annotator_id"], strict=True)},
                    key=lambda ca: (ca[0], rows.data.users.get(ca[1], "")))
    for campaign_id, annotator_id in people:
        if campaign_id in rows.position_campaigns:
            continue  # positions, not people: no per-person row
        mine = (campaign == campaign_id) & (annotator == annotator_id)
        now = mine & current
        row = new_row(campaign_id=campaign_id, rater_group=rows.group[campaign_id], annotator_id=annotator_id,
                      annotator=rows.data.users.get(annotator_id, str(annotator_id)), n_annotations=int(now.sum()))
        graded = now & (code >= 0) & (gold != -2)
        put(row, "accuracy_vs_gold", float(np.mean(code[graded] == gold[graded])) if graded.any() else None,
            "no labelled item has gold")
        row["n_gold"] = int(graded.sum())
        right, checked, caused = qc[campaign_id, annotator_id]
        put(row, "accuracy_vs_qc", right / checked if checked else None, "none of their labels was in a QC sample")
        row["n_qc"] = checked
        pairs = mine[first] | mine[second]
        put(row, "peer_agreement", float(np.mean(code[first[pairs]] == code[second[pairs]])) if pairs.any() else None,
            no_peer)
        row["n_peer_pairs"] = int(pairs.sum())
        defined = [k for k in kappas.get((campaign_id, annotator_id), []) if k is not None]
        put(row, "peer_kappa", float(np.mean(defined)) if defined else None,
            "kappa is undefined with every peer (a single category)" if pairs.any() else no_peer)
        put(row, "median_reading_seconds", median_reading_seconds(dwell[now]),
            "no reading time recorded (imported labels)")
        row["rounds_caused"] = len(caused)
        row["rejected_rounds"] = len(rounds[campaign_id, annotator_id] & rejected)
        flag(row, [(row["n_gold"], options.min_items, "items with gold")] if row["n_gold"] else [])
        out.append(row)
    return out
