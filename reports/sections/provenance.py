"""What a report was computed from: digests of the items, gold and guidelines, the models and the code."""
from __future__ import annotations

import hashlib
from collections import defaultdict

import studies
from benchmarks.models import canonical_json

from ..rows import Rows


def sha256_lines(lines):
    digest = hashlib.sha256()
    for line in lines:
        digest.update(line.encode("utf-8"))
        digest.update(b"\n")
    return digest.hexdigest()


def provenance(rows: Rows):
    data = rows.data
    gold_lines = sorted(f"{rows.external_id[i]}:{canonical_json(g)}" for i, g in rows.gold.items() if g is not None)
    return {
        "benchmark": data.benchmark,
        # of the items and tasks alone (reports.parts.base_digest covers both)
        "items": rows.by_inputs("provenance_items", lambda: item_digests(rows)),
        "gold": {"source": "gold_version" if data.gold_version else "source_gold", "version": data.gold_version,
                 "n_labels": len(gold_lines), "sha256": sha256_lines(gold_lines)},
        "guidelines": [{"campaign_id": c["id"], "campaign": c["name"], "version": s["version"],
                        "sha256": hashlib.sha256(s["guidelines"].encode()).hexdigest(), "note": s["note"],
                        # the texts a person read in their own language, where the campaign gave them
                        "sha256_by_language": {code: hashlib.sha256(text.encode()).hexdigest() for code, text
                                               in sorted((s.get("guidelines_by_language") or {}).items())},
                        "overlap": s["overlap"], "min_reading_seconds": s["min_reading_seconds"]}
                       for c in data.campaigns for s in c["settings"]],
        "models": [{"model": rows.run_label[r["id"]], "run_id": r["id"], "name": r["model__name"],
                    "source": r["model__source"], "sha256": r["model__sha256"], "revision": r["model__revision"],
                    "dtype": r["model__dtype"], "mode": r["mode"], "prompt_version": r["prompt_version"],
                    "prompt_sha256": r["prompt_sha256"], "position_policy": r["position_policy"], "seed": r["seed"],
                    "settings": r["settings"], "finished_at": r["finished_at"],
                    "protocol": studies.protocol(r["mode"], r["settings"], r["position_policy"]),
                    "tasks": [rows.tasks[t]["slug"] for t in r["task_ids"] if t in rows.tasks]} for r in data.runs],
        "code": data.code,
    }


def item_digests(rows: Rows):
    """Per task: its items' external ids and content hashes, and its form, digested."""
    items = rows.data.items
    per_task = defaultdict(list)
    for task_id, ext, digest in zip(items["task_id"], items["external_id"], items["content_hash"], strict=True):
        per_task[task_id].append(f"{ext}:{digest}")
    return [{"task": rows.tasks[t]["slug"], "n_items": len(lines), "sha256": sha256_lines(sorted(lines)),
             "form_sha256": hashlib.sha256(canonical_json(rows.tasks[t]["form"]).encode()).hexdigest()}
            for t, lines in sorted(per_task.items(), key=lambda kv: rows.tasks[kv[0]]["slug"])]
