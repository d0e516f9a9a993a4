"""lm-evaluation-harness: a benchmark's multiple-choice tasks exported as lm-eval tasks with our prompts, lm-eval's
samples imported as a model run; and, where lm-eval's venv exists (perf/_target_venvs.py lmeval), lm-eval 0.4.13 run
on the packaged model over the exported DialogBench demo items picks what our scorer picks, item by item."""
import io
import json
import os
import subprocess

import pytest
import yaml
from django.conf import settings
from django.core.management import CommandError, call_command

from benchmarks.importers import ImportFailure
from benchmarks.models import Item
from modeleval import actions, runner, selectors
from modeleval.lmeval import build_export, export_folder, import_lmeval_samples
from modeleval.models import EvalRun, ModelSpec, Prediction, RunState
from modeleval.modes import default_template, resolve_settings
from modeleval.modes.multiple_choice import loglikelihood_request, render_mc, variants
from perf._target_venvs import python_of

PRESET = {"preset": "dialogbench"}


def counts():
    return EvalRun.objects.count(), Prediction.objects.count(), ModelSpec.objects.count()


def docs_of(exported):
    return {d["id"]: d for name, text in exported.files.items() if name.endswith(".jsonl")
            for d in map(json.loads, text.splitlines())}


def sample(doc, logprobs, doc_id=0, greedy=None):
    """A samples_*.jsonl line as lm-eval 0.4.13 writes one for a multiple_choice doc (numbers as text)."""
    resps = [[str(lp), str(g)] for lp, g in zip(logprobs, greedy or [False] * len(logprobs), strict=True)]
    return {"doc_id": doc_id, "doc": doc, "target": str(doc["gold"]),
            "arguments": {f"gen_args_{i}": {"arg_0": doc["prompt"], "arg_1": c} for i, c in enumerate(doc["choices"])},
            "resps": [[r] for r in resps], "filtered_resps": resps, "filter": "none",
            "metrics": ["acc", "acc_norm"], "acc": 0.0, "acc_norm": 0.0}


def write_samples(path, lines):
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    return path


def test_export_writes_the_prompt_our_scorer_builds(demo_benchmark):
    exported = build_export(demo_benchmark, settings=PRESET)
    docs = docs_of(exported)
    assert exported.n_items == len(docs) == 12 and exported.group == "hb_db_demo_all"
    run_settings = resolve_settings("loglikelihood", "en", PRESET)
    _, template = default_template("loglikelihood", run_settings)
    for item in Item.objects.filter(task__benchmark=demo_benchmark).select_related("task"):
        variant = variants(item, item.task.primary_key, "as_is")[0]
        (context, continuations, delimiter, special), cap = loglikelihood_request(
            run_settings, item, variant, render_mc(template, item, variant, run_settings, "loglikelihood"))
        doc = docs[item.external_id]
        assert doc["prompt"] == context and doc["choices"] == list(continuations) and doc["task"] == item.task.slug
        assert doc["keys"] == list(item.fields["options"]) and doc["keys"][doc["gold"]] == item.source_gold["answer"]
    config = yaml.safe_load(exported.files["hb_db_demo_emotion_detection.yaml"])
    assert config["output_type"] == "multiple_choice" and config["target_delimiter"] == ""  # DialogBench: none
    assert (config["doc_to_text"], config["doc_to_choice"], config["doc_to_target"]) == ("prompt", "choices", "gold")
    assert config["dataset_kwargs"]["data_files"]["test"] == "hb_db_demo_emotion_detection.jsonl"
    group = yaml.safe_load(exported.files["hb_db_demo_all.yaml"])
    assert len(group["task"]) == 5 and exported.model_args == "max_length=2048"  # the tokenizer's own special tokens
    # Without a preset: the project's template, each option after a space.
    plain = build_export(demo_benchmark)
    assert yaml.safe_load(plain.files["hb_db_demo_emotion_detection.yaml"])["target_delimiter"] == " "
    assert plain.model_args == "add_bos_token=False"  # our scorer adds no special tokens there


def test_samples_import_as_a_run_with_per_option_loglikelihoods_once(tmp_path, demo_benchmark):
    docs = docs_of(build_export(demo_benchmark, tasks=["emotion_detection"], settings=PRESET))
    lines = [sample(doc, [-4.0 - i for i in range(4)][::-1] if n == 0 else [-1.0, -9.0, -9.5, -9.9], doc_id=n)
             for n, doc in enumerate(docs.values())]
    path = write_samples(tmp_path / "samples_hb_db_demo_emotion_detection_2026.jsonl", lines)
    out = io.StringIO()
    call_command("import_verdicts", str(path), "--format", "lm-eval", "--benchmark", "db-demo",
                 "--model", "smollm2-lm-eval", "--judge-settings", '{"model_args": "dtype=float32"}', stdout=out)
    run = EvalRun.objects.get()
    assert run.state == RunState.FINISHED and run.mode == "loglikelihood" and run.settings["rule"] == "acc"
    assert run.settings["imported"]["format"] == "lm-eval" and run.model.name == "smollm2-lm-eval"
    rows = {p.item.external_id: p for p in Prediction.objects.filter(run=run).select_related("item")}
    assert set(rows) == set(docs)
    first, second = (rows[i] for i in list(docs)[:2])
    assert first.answer == "D" and [o["logprob"] for o in first.options] == [-7.0, -6.0, -5.0, -4.0]
    assert second.answer == "A" and second.answer_norm == selectors.mc_picks(second.options)["acc_norm"]
    assert second.correct == (second.gold == "A") and first.options[0]["context"] == docs[first.item.external_id][
        "prompt"]
    summary = selectors.run_summary(run)["tasks"]["emotion_detection"]
    assert "acc" in summary and "per_token" not in summary  # lm-eval logs no token counts
    before = counts()
    call_command("import_verdicts", str(path), "--format", "lm-eval", "--benchmark", "db-demo",
                 "--model", "smollm2-lm-eval", "--judge-settings", '{"model_args": "dtype=float32"}', stdout=out)
    assert counts() == before and "nothing added" in out.getvalue()


@pytest.mark.parametrize("breaking, field", [
    (lambda line: line.update(filtered_resps=line["filtered_resps"][:3]), "filtered_resps"),
    (lambda line: line["filtered_resps"][1].__setitem__(0, "NaN"), "filtered_resps[1][0]"),
    (lambda line: line["filtered_resps"][1].__setitem__(0, "high"), "filtered_resps[1][0]"),
    (lambda line: line["filtered_resps"][2].__setitem__(1, "maybe"), "filtered_resps[2][1]"),
    (lambda line: line["doc"].pop("id"), "doc.id"),
    (lambda line: line.pop("doc"), "doc"),
    (lambda line: line["doc"].update(keys=["A", "B", "C", "Z"]), "doc.keys"),
    (lambda line: line["arguments"].pop("gen_args_3"), "arguments"),
])
def test_a_malformed_samples_file_writes_nothing_and_names_line_and_field(tmp_path, demo_benchmark, breaking,
                                                                          field):
    docs = list(docs_of(build_export(demo_benchmark, tasks=["emotion_detection"])).values())
    lines = [sample(doc, [-1.0, -2.0, -3.0, -4.0]) for doc in docs]
    breaking(lines[1])
    path = write_samples(tmp_path / "samples.jsonl", lines)
    before = counts()
    with pytest.raises(ImportFailure) as refused:
        import_lmeval_samples(path, benchmark="db-demo", judge="lm")
    assert counts() == before
    assert f"samples.jsonl:line 2: field '{field}'" in str(refused.value)


def test_samples_that_match_no_item_are_refused_with_their_ids(tmp_path, demo_benchmark):
    docs = list(docs_of(build_export(demo_benchmark, tasks=["emotion_detection"])).values())
    lines = [sample(doc, [-1.0, -2.0, -3.0, -4.0]) for doc in docs]
    lines.append(sample({**docs[0], "id": "not-ours-1"}, [-1.0, -2.0, -3.0, -4.0]))
    lines.append(sample({**docs[0], "id": "not-ours-2"}, [-1.0, -2.0, -3.0, -4.0]))
    path = write_samples(tmp_path / "samples.jsonl", [*lines, "{not json"][:-1])
    before = counts()
    with pytest.raises(CommandError, match="2 match none: 'not-ours-1', 'not-ours-2'"):
        call_command("import_verdicts", str(path), "--format", "lm-eval", "--benchmark", "db-demo", "--model", "lm")
    assert counts() == before
    write_samples(path, [*lines[:2], "{not json"])
    with pytest.raises(ImportFailure, match="samples.jsonl:line 3"):
        import_lmeval_samples(path, benchmark="db-demo", judge="lm")
    assert counts() == before


def test_export_command_writes_a_folder(tmp_path, demo_benchmark):
    out = io.StringIO()
    call_command("export_lmeval_task", "--benchmark", "db-demo", "--set", "preset=dialogbench",
                 str(tmp_path / "task"), stdout=out)
    names = sorted(p.name for p in (tmp_path / "task").iterdir())
    assert "hb_db_demo_all.yaml" in names and "README.md" in names and len(names) == 12
    assert "12 items" in out.getvalue() and "max_length=2048" in out.getvalue()
    with pytest.raises(CommandError, match="unknown settings"):
        call_command("export_lmeval_task", "--benchmark", "db-demo", "--set", "presett=1",
                     str(tmp_path / "other"), stdout=out)


# --- the real lm-eval ---------------------------------------------------------------------------------------

LM_EVAL = python_of("lmeval")


def require_lm_eval():
    if not LM_EVAL.is_file():
        reason = (f"lm-evaluation-harness venv absent at {LM_EVAL.parent.parent} (build it with "
                  "`python perf/_target_venvs.py lmeval`, or set HB_LMEVAL_VENV)")
        print(reason)
        pytest.skip(reason)


@pytest.mark.slow
@pytest.mark.model
def test_lm_eval_picks_what_our_scorer_picks_on_the_packaged_model(tmp_path, packaged, demo_benchmark):
    require_lm_eval()
    ours = actions.start_run(model=packaged, benchmark=demo_benchmark, settings=PRESET, enqueue=False)
    ours = runner.run_sync(ours)
    assert ours.state == RunState.FINISHED, ours.reason
    from modeleval.scorers.loading import load_model

    folder = load_model(cache_dir=settings.MODEL_CACHE_DIR).info.loaded_from  # the HF-format conversion
    exported = export_folder(demo_benchmark, tmp_path / "task", settings=PRESET)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "HF_HOME": str(tmp_path / "hf"), "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false",
           "PYTHONPATH": ""}
    done = subprocess.run(
        [str(LM_EVAL.parent / "lm_eval"), "--model", "hf", "--model_args",
         f"pretrained={folder},dtype=float32,{exported.model_args}", "--device", "cpu", "--batch_size", "4",
         "--include_path", ".", "--tasks", exported.group, "--log_samples", "--output_path", "out"],
        cwd=tmp_path / "task", env=env, capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stderr[-3000:]
    samples = sorted((tmp_path / "task" / "out").rglob("samples_*.jsonl"))
    assert len(samples) == 5, samples
    theirs = import_lmeval_samples(samples, benchmark=demo_benchmark, judge="smollm2-via-lm-eval").run
    mine = {p.item_id: p for p in Prediction.objects.filter(run=ours)}
    other = {p.item_id: p for p in Prediction.objects.filter(run=theirs)}
    assert set(mine) == set(other) and len(mine) == 12
    agree, largest = 0, 0.0
    for item_id, p in mine.items():
        q = other[item_id]
        assert [o["key"] for o in q.options] == [o["key"] for o in p.options]
        assert [o["context"] for o in q.options] == [o["context"] for o in p.options]  # the same prompt...
        for a, b in zip(p.options, q.options, strict=True):  # ...the same numbers...
            assert b["logprob"] == pytest.approx(a["logprob"], abs=1e-3)
            largest = max(largest, abs(b["logprob"] - a["logprob"]))
        picks = selectors.mc_picks(p.options)
        assert q.answer == picks["acc"] and q.answer_norm == picks["acc_norm"]  # ...the same picks
        # DialogBench's rule (the run's answer) from lm-eval's numbers and our token counts:
        with_tokens = [{**b, "n_tokens": a["n_tokens"]} for a, b in zip(p.options, q.options, strict=True)]
        assert selectors.mc_picks(with_tokens)["per_token"] == p.answer
        agree += 1
    print(f"lm-eval ({LM_EVAL}): {agree} of {len(mine)} items picked alike (acc, acc_norm, per_token); largest "
          f"log-likelihood difference {largest:.2e}")


def test_the_same_samples_in_other_files_or_order_add_nothing(tmp_path, demo_benchmark):
    docs = list(docs_of(build_export(demo_benchmark, tasks=["emotion_detection", "dialogue_nli"])).values())
    lines = [sample(doc, [-1.0 - i for i in range(len(doc["choices"]))], doc_id=n) for n, doc in enumerate(docs)]
    first = write_samples(tmp_path / "samples_a.jsonl", lines[:3])
    second = write_samples(tmp_path / "samples_b.jsonl", lines[3:])
    done = import_lmeval_samples([first, second], benchmark="db-demo", judge="lm")
    assert done.created and done.n_verdicts == 5
    assert sorted(done.run.tasks.values_list("slug", flat=True)) == ["dialogue_nli", "emotion_detection"]
    before = counts()
    again = import_lmeval_samples([second, first], benchmark="db-demo", judge="lm")
    assert not again.created and again.run == done.run and counts() == before
