"""A paper's table beside ours: the five studies' published tables as data (studies/*/paper.json, checked against
the papers' text in ../shared/papers), laid beside the figures of runs here that follow the study's preset, with the
difference; a model no paper ran (the packaged one) shown alone."""
import json
import re
from io import StringIO

import pytest
from django.core.management import call_command

from benchmarks.actions import import_items
from benchmarks.importers.dialogbench import multiple_choice_form
from benchmarks.models import Benchmark, Item, Task
from modeleval.models import ModelSpec
from reports.contract import ReportOptions
from reports.render import render
from reports.sections import paper as paper_section
from reports.sections.paper import PACKAGED_NOTE
from reports.service import make_report
from studies import STUDIES
from studies.papers import HERE, figure, matches, study_tables
from tests.conftest import DEMO_DATA, SHARED_DATA
from tests.reports.factories import model_run

PAPERS = SHARED_DATA.parent / "papers"
# The studies whose tables were read from their papers' text (JUDGE-BENCH's come from its repository's results files,
# checked in tests/studies/test_judgebench.py).
FROM_PAPER_TEXT = [s for s in STUDIES if (HERE / s / "paper.json").is_file()]
OPTIONS = ReportOptions(n_resamples=10)


def numbers_in(text):
    return {float(n) for n in re.findall(r"\d+\.\d+|\d+", text)}


def test_every_stored_figure_and_model_is_printed_in_its_paper():
    """Each table's rows were read from the paper's text: every figure stored is a number the paper prints, every
    model a name it prints, and the figures the studies are known by are where they belong."""
    if not PAPERS.is_dir():
        print(f"skipping: the papers' text not found at {PAPERS}")
        pytest.skip(f"the papers' text not found at {PAPERS} (set HB_SHARED_DATA)")
    for study in FROM_PAPER_TEXT:
        doc = study_tables(study)
        text = (PAPERS / doc["paper_file"]).read_text(encoding="utf-8")
        printed, flat = numbers_in(text), re.sub(r"\s+", " ", re.sub(r"</?(?:u|b|i)>", "", text))
        for table in doc["tables"]:
            assert f"Table {table['table']}" in text, (study, table["table"])
            for row in table["rows"]:
                name = row["model"].removeprefix("ERNIE ").split(" (")[0]
                assert name.replace("ERNIE", "") in flat or name in flat or study == "huynh", (study, row["model"])
                for column, value in row["values"].items():
                    if figure(value) is not None:
                        assert figure(value) in printed, (study, table["table"], row["model"], column, value)
    values = {(s, t["table"], r["model"]): r["values"] for s in FROM_PAPER_TEXT for t in study_tables(s)["tables"]
              for r in t["rows"]}
    assert values["dialogbench", "2", "GPT-4"]["Overall"] == 86.06
    assert values["dialogbench", "2", "Human"]["Overall"] == 92.5
    assert values["dialogbench", "3", "GPT-4"]["Overall"] == 81.54
    assert values["dialogbench", "3", "Human"]["Overall"] == 93.33
    assert values["botchat", "2", "GPT-4"]["MuTual vs GT"] == 71.0 and values["botchat", "2", "Vicuna-13B"] == {
        "MuTual vs GT": 62.4, "MuTual vs GPT-4": 77.0, "CON vs GT": 8.7, "CON vs GPT-4": 42.5, "UNCON vs GT": 21.3,
        "UNCON vs GPT-4": 36.2}
    assert values["botchat", "3", "GPT-4"]["CwHuman"] == 65.74
    assert values["botchat", "3", "GPT-3.5-Turbo"]["CwHuman"] == 41.06
    assert (values["diqad", "3", "ERNIE"]["Acc"], values["diqad", "3", "ChatGPT"]["Kappa"]) == (69.94, 4.7)
    assert values["kodialogbench", "4", "Human"]["Average"] == 76.3
    assert values["kodialogbench", "5", "Human"]["Average"] == 90.4
    assert values["huynh", "3", "InstructGPT 175B"]["Interesting"] == {"value": 0.551, "significant": True}
    tnlg = {r["config"]: r["values"]["Fluent"]["value"] for r in study_tables("huynh")["tables"][0]["rows"]
            if r["model"] == "TNLGv2 530B"}
    assert tnlg == {"manual": 0.195, "random": 0.112, "BM25C+R": 0.178}


@pytest.mark.parametrize("ours, paper, same", [
    ("meta-llama/Llama-2-7b-chat-hf", "LLaMA2-7B-Chat", True), ("Llama-2-7b-chat-hf", "LLaMA2-Chat-7B", True),
    ("gpt-3.5-turbo-0613", "ChatGPT", True), ("gpt-4-0314", "GPT-4", True), ("gpt-4o", "GPT-4", False),
    ("Qwen/Qwen-7B-Chat", "Qwen-7B", False), ("vicuna-13b-v1.5", "Vicuna-13B", True), ("bloom-7b1", "BLOOM 7B", True),
    ("smollm2-135m-instruct", "Qwen-7B-Chat", False), ("claude-2", "Claude2", True),
])
def test_a_model_is_a_papers_row_by_the_words_of_its_names(ours, paper, same):
    assert matches({"model": paper}, [ours]) is same


@pytest.fixture
def dialogbench_runs(db):
    import_items(DEMO_DATA / "dialogbench_sample.jsonl", "dialogbench", "db-paper")
    benchmark = Benchmark.objects.get(slug="db-paper")
    items = list(Item.objects.filter(task__benchmark=benchmark).select_related("task"))
    gold = {i.pk: i.source_gold["answer"] for i in items}
    # A Qwen chat model asked with the answer at each position (right on every item but one position of one),
    # and the packaged model on the options as given (right on the emotion items only).
    qwen = {}
    for item in items:
        for n, letter in enumerate(item.fields["options"]):
            right = not (item.external_id == "db-en-ed-001" and n == 0)
            qwen[item.pk, letter] = {"answer": letter if right else "Z", "gold": letter, "parse_status": "parsed"}
    model_run(benchmark, list(benchmark.tasks.all()), "qwen-7b-chat", qwen, mode="generate",
              settings={"preset": "dialogbench", "evaluator": "qwen"}, position_policy="gold_at_each_position")
    packaged = {i.pk: {"answer": gold[i.pk] if i.task.slug == "emotion_detection" else "Z", "gold": gold[i.pk],
                       "parse_status": "parsed"} for i in items}
    run = model_run(benchmark, list(benchmark.tasks.all()), "smollm2-135m-instruct", packaged, mode="generate",
                    settings={"preset": "dialogbench", "evaluator": "default"})
    ModelSpec.objects.filter(pk=run.model_id).update(source="packaged")
    return benchmark


def test_dialogbench_table_2_beside_the_runs_of_its_preset(dialogbench_runs):
    report = make_report("db-paper", options=OPTIONS)
    [study] = report["paper"]["studies"]
    [table] = study["tables"]
    assert (study["study"], table["table"], table["unit"]) == ("dialogbench", "2", "percent")
    [qwen] = table["beside"]
    paper = next(r for r in study_tables("dialogbench")["tables"][0]["rows"] if r["model"] == "Qwen-7B-Chat")
    assert qwen["paper_model"] == "Qwen-7B-Chat" and qwen["paper"] == paper["values"]
    # Pooled over every (item, position): 11 of the 12 emotion questions right; every other task all right.
    assert qwen["values"]["ED"] == pytest.approx(100 * 11 / 12) and qwen["values"]["IC"] == 100
    assert qwen["difference"]["ED"] == pytest.approx(100 * 11 / 12 - paper["values"]["ED"])
    assert qwen["values"]["SF"] is None and qwen["undefined"]["SF"] == "not run on this task"
    assert qwen["values"]["Overall"] is None and "5 ran here" in qwen["undefined"]["Overall"]
    assert "pooled" in qwen["figure"]
    [alone] = table["ours_alone"]
    assert (alone["label"], alone["note"], alone["values"]["ED"]) == ("smollm2-135m-instruct", PACKAGED_NOTE, 100)
    assert table["paper_rows_without_ours"] == len(study_tables("dialogbench")["tables"][0]["rows"]) - 1
    html = render(report, "html")
    assert "the paper&#x27;s Table 2 beside ours" in html and "no paper ran it" in html
    assert "paper.dialogbench.table2" in render(report, "csv")
    assert "the paper's Table 2 beside ours" in render(report, "latex")


def test_the_command_lays_them_beside_and_takes_a_readers_pairing(dialogbench_runs):
    out = StringIO()
    call_command("paper_tables", "--benchmark", "db-paper", stdout=out)
    text = out.getvalue()
    assert "Table 2: Accuracy on English DialogBench (percent), read from dialogbench.txt" in text
    assert re.search(r"Qwen-7B-Chat\s+paper\s+84\.48\s+79\.75", text) and "difference" in text and PACKAGED_NOTE in text
    out = StringIO()
    call_command("paper_tables", "--benchmark", "db-paper", "--as", "smollm2-135m-instruct=Vicuna-13B",
                 "--format", "json", stdout=out)
    [study] = json.loads(out.getvalue())
    paired = {e["label"]: e["paper_model"] for e in study["tables"][0]["beside"]}
    assert paired == {"qwen-7b-chat": "Qwen-7B-Chat", "smollm2-135m-instruct": "Vicuna-13B"}
    out = StringIO()
    call_command("paper_tables", "--benchmark", "db-paper", "--study", "botchat", stdout=out)
    assert "nothing to lay beside a paper" in out.getvalue()


def test_diqad_table_3_beside_a_prompted_run(db):
    import_items(DEMO_DATA / "diqad_sample.jsonl", "diqad", "dq-paper")
    benchmark = Benchmark.objects.get(slug="dq-paper")
    items = list(Item.objects.filter(task__benchmark=benchmark))
    gold = {i.pk: i.source_gold["score"] for i in items}
    rated = {i.pk: {"answer": str(gold[i.pk]), "rating": float(gold[i.pk]), "parse_status": "parsed"} for i in items}
    model_run(benchmark, list(benchmark.tasks.all()), "chatgpt", rated, mode="rating",
              settings={"preset": "diqad", "quality": "score"})
    report = make_report("dq-paper", options=OPTIONS)
    [study] = report["paper"]["studies"]
    three = next(t for t in study["tables"] if t["table"] == "3")
    [row] = three["beside"]
    assert row["paper_model"] == "ChatGPT" and row["values"]["Acc"] == 100 and row["paper"]["Acc"] == 39.3
    assert row["difference"]["Acc"] == pytest.approx(60.7)
    four = next(t for t in study["tables"] if t["table"] == "4")
    assert {e["domain"] for e in four["ours_alone"]} == {"legal", "car", "emotion", "finance", "education", "digital"}
    # The paper's w/o rows are tested on the whole held-out domain, its all-domain row on a split: not paired.
    assert "not a paired one" in four["note"]
    from reports.render.tables import paper_tables
    [rendered] = [t for t in paper_tables(report) if t.key == "paper_diqad_4"]
    assert rendered.header[:3] == ["Model", "Domain", "Figure"]
    assert sorted(row[1].value for row in rendered.rows) == sorted(e["domain"] for e in four["ours_alone"])


def test_kodialogbench_tables_4_and_5_beside_a_run_of_its_preset(db):
    bench = Benchmark.objects.create(slug="kdb-paper", name="KoDialogBench sample", language="ko")
    form = multiple_choice_form()
    emotion = Task.objects.create(benchmark=bench, slug="k-ed", name="K-ED emotion", dimension="Emotion", form=form)
    sns = Task.objects.create(benchmark=bench, slug="k-sns", name="K-SNS", dimension="Response selection", form=form)
    turns = [{"speaker": "A", "text": "시험 잘 봤어?"}, {"speaker": "B", "text": "응!"}]
    items = [Item.objects.create(task=task, external_id=f"{task.slug}-{n}", dialogue=turns, source_gold={"answer": "A"},
                                 fields={"options": {"A": "가", "B": "나"}})
             for task in (emotion, sns) for n in range(4)]
    answers = {i.pk: {"answer": "A" if n % 4 else "B", "answer_norm": "A", "answer_per_token": "A"}
               for n, i in enumerate(items)}
    model_run(bench, [emotion, sns], "qwen-14b", answers, settings={"preset": "kodialogbench", "rule": "acc"})
    report = make_report("kdb-paper", options=OPTIONS)
    [study] = report["paper"]["studies"]
    tables = {t["table"]: t for t in study["tables"]}
    [four] = tables["4"]["beside"]
    assert four["paper_model"] == "Qwen 14B" and four["values"]["Emotion"] == 75 and four["paper"]["Emotion"] == 59.8
    assert four["values"]["Topic"] is None and four["values"]["Average"] is None
    [five] = tables["5"]["beside"]
    assert five["values"]["K-SNS"] == 75 and five["difference"]["K-SNS"] == pytest.approx(75 - 25.4)


def test_botchat_tables_beside_the_released_dialogues_judged_here(db, tmp_path, monkeypatch):
    """BotChat's released dialogues of GPT-4 and Vicuna-13B against the real dialogues and each other, judged with
    the preset: Table 2's Win+Tie against the real dialogue and against GPT-4, Table 1's non-loop rate."""
    from types import SimpleNamespace

    from modeleval import arena, botchat_release, inference, runner
    from modeleval.actions import start_run
    from tests.studies.test_botchat_release import REAL, write_release

    path = tmp_path / "real.jsonl"
    path.write_text("".join(json.dumps({"id": k, "utterances": v}) + "\n" for k, v in REAL.items()))
    import_items(path, "mutual", "mutual-paper")
    gpt4, vicuna = botchat_release.import_released(write_release(tmp_path / "convs.tsv"),
                                                   seeds_benchmark="mutual-paper")
    benchmark = arena.make_pairs(runs=[gpt4, vicuna], ground_truth="mutual-paper", seed=0, benchmark_slug="bc-paper")
    monkeypatch.setattr(inference, "load", lambda spec: SimpleNamespace(model=None, tokenizer=None))
    monkeypatch.setattr(inference, "chat_text", lambda tokenizer, spec, user, system="": user)
    monkeypatch.setattr(inference.generation, "generate",  # the conversation shown second is found machine-made
                        lambda model, tokenizer, prompts, **kw: ["Choice: Conversation 2"] * len(prompts))
    judge = ModelSpec.objects.create(name="judge", sha256="j" * 64)
    run = runner.run_sync(start_run(model=judge, benchmark=benchmark, mode="pairwise", settings={"preset": "botchat"},
                                    enqueue=False))
    assert run.state == "finished", run.reason
    report = make_report("bc-paper", options=OPTIONS)
    [study] = report["paper"]["studies"]
    tables = {t["table"]: t for t in study["tables"]}
    versus = {(v["model"], v["opponent"]): v for v in report["pairwise"]["tasks"][0]["botchat"]["judge"]["versus"]}
    vicuna_row = next(e for e in tables["2"]["beside"] if e["paper_model"] == "Vicuna-13B")
    assert vicuna_row["values"]["MuTual vs GT"] == pytest.approx(
        100 * versus["botchat-vicuna-13b", "human"]["win_tie_rate"])
    assert vicuna_row["values"]["MuTual vs GPT-4"] == pytest.approx(
        100 * versus["botchat-vicuna-13b", "botchat-gpt-4"]["win_tie_rate"])
    assert vicuna_row["difference"]["MuTual vs GT"] == pytest.approx(vicuna_row["values"]["MuTual vs GT"] - 62.4)
    assert vicuna_row["undefined"]["CON vs GT"] == "NaturalConv is not here"
    non_loop = {e["paper_model"]: e for e in tables["1"]["beside"]}
    # Vicuna's s2 dialogue (5 utterances) loops at its fifth: all kept; every other dialogue whole.
    assert non_loop["Vicuna-13B"]["values"]["MuTual"] == 100 and non_loop["Vicuna-13B"]["paper"]["MuTual"] == 85.6
    assert "Table 4" not in [t["table"] for t in study["tables"]] and "Table 4" in report["paper"]["note"]
    assert "botchat: the paper&#x27;s Table 2 beside ours" in render(report, "html")


def test_huynh_tables_beside_a_models_runs_of_its_preset(db, fed_path):
    """FED turn level, a BLOOM-7B1 run per quality with manually fixed examples: beside the paper's Table 3 row of
    BLOOM 7B (manually chosen examples), our Spearman per quality and the difference. The same model's runs with
    random examples stand alone: the paper has no BLOOM row of random examples, and a figure is never laid beside
    one made with examples chosen otherwise."""
    from annotation.importers import import_ratings

    import_items(fed_path, "fed", "fed")
    import_ratings(fed_path, "fed", "fed")
    turn = Task.objects.get(benchmark__slug="fed", slug="fed-turn")
    items = list(Item.objects.filter(task=turn).order_by("pk"))
    for name, fewshot in (("bloom-7b1", {"strategy": "fixed", "k": 3, "fixed_ids": [items[0].pk]}),
                          ("bloom-7b1-random", {"strategy": "random", "k": 3, "fixed_ids": []})):
        for key in ("interesting", "fluent"):
            model_run(turn.benchmark, [turn], name, {i.pk: {"rating": float(n % 3), "answer": str(n % 3)}
                                                     for n, i in enumerate(items)},
                      mode="rating", settings={"preset": "huynh", "quality": key, "fewshot": fewshot})
    report = make_report("fed", options=OPTIONS)
    [study] = report["paper"]["studies"]
    tables = {t["table"]: t for t in study["tables"]}
    # Tables 1 and 2 hold TNLGv2 only; 4 is dialog level; 6 is yes/no. A model alone is shown once, in the first
    # table of its columns (1).
    assert set(tables) == {"1", "3"} and tables["1"]["beside"] == []
    [row] = tables["3"]["beside"]
    assert (row["paper_model"], row["config"], row["label"]) == ("BLOOM 7B", "manual", "bloom-7b1 [rating, fixed]")
    ours = {m["quality"]: m["spearman"] for m in report["ratings"]["models"] if m["run_id"] in row["run_ids"]}
    assert row["values"]["Interesting"] == ours["interesting"] and row["paper"]["Interesting"] == 0.291
    assert row["difference"]["Fluent"] == pytest.approx(ours["fluent"] - row["paper"]["Fluent"], abs=1e-6)
    assert row["values"]["Engaging"] is None and row["undefined"]["Engaging"] == "no run rated this quality here"
    [alone] = tables["1"]["ours_alone"]
    assert alone["label"] == "bloom-7b1-random [rating, random]" and alone["config"] == "random"
    assert alone["note"] == paper_section.NO_ROW_NOTE  # Table 1 names no BLOOM; Table 3 only its manual row


@pytest.mark.parametrize("fewshot, config", [
    ({"strategy": "none", "k": 0}, "zero-shot"),
    ({"strategy": "bm25_context", "k": 4}, "4 examples chosen by BM25 on the context"),
    ({"strategy": "random", "k": 4}, None),
])
def test_a_yes_no_run_meets_only_the_table_6_row_of_its_own_examples(db, fed_path, fewshot, config):
    """Table 6 prints Flan-T5-3B twice, zero-shot and with 4 BM25-on-context examples: a run is laid beside the row
    of its own examples, and a run of random examples beside neither."""
    from annotation.importers import import_ratings

    import_items(fed_path, "fed", "fed")
    import_ratings(fed_path, "fed", "fed")
    for slug in ("fed-turn", "fed-dialog"):
        task = Task.objects.get(benchmark__slug="fed", slug=slug)
        items = list(Item.objects.filter(task=task).order_by("pk"))
        model_run(task.benchmark, [task], "flan-t5-3b", {i.pk: {"rating": (n % 7) / 7, "answer": "yes"}
                                                         for n, i in enumerate(items)},
                  mode="yes_no", settings={"preset": "huynh", "quality": "overall", "fewshot": fewshot})
    report = make_report("fed", options=OPTIONS)
    [study] = report["paper"]["studies"]
    [table] = [t for t in study["tables"] if t["table"] == "6"]
    if config is None:
        assert table["beside"] == [] and table["ours_alone"][0]["note"] == paper_section.CONFIG_NOTE
    else:
        [row] = table["beside"]
        assert (row["paper_model"], row["config"]) == ("Flan-T5-3B", config)


# Words of ours a paper table must not show a reader of Chinese or Korean (its notes, row labels, figures' texts and
# reasons); the papers' own words (titles, column and model names) are data.
OUR_ENGLISH = ("no paper ran it", "ours alone", "no row of this table", "chose their examples otherwise",
               "not run on this task", "ran here", "a majority", "(judge ", "judged by", "against gold",
               "accuracy on ", "the options as", "the answer at each position", "replies read", "tokens counted",
               "share of pairs", "NaturalConv is not here", "not paired with", "the mean share", "GPT-4 itself",
               "ours: each run", "Win+Tie over", "the difference is ours", "per domain", "Ours:")


def paper_words(report, document):
    """The words of the paper tables of a rendered report (tests.frontend.test_page_languages.table_words), and what
    of them is data: the papers' columns and models, our runs' names (the row labels that are names alone)."""
    from tests.frontend.test_page_languages import table_words

    tables = [t for s in report["paper"]["studies"] for t in s["tables"]]
    entries = [e for t in tables for e in (*t["beside"], *t["ours_alone"])]
    data = {c for t in tables for c in t["columns"]} | {e.get("paper_model") for e in entries} | {
        e["label"] for e in entries if "(" not in e["label"] and e["label"] != "humans"}
    ids = set(re.findall(r'<table id="(paper_[^"]+)"', document))
    return [w for w in table_words(document, ids) if w not in data], ids


@pytest.fixture
def paper_reports(dialogbench_runs):
    """DialogBench's Table 2 beside two runs of its preset (one alone), and a report with every section: BotChat's
    Tables 1, 2, 3 and 5 and DiQAD's Tables 3 and 4."""
    from reports.build import build_report
    from tests.reports.factories import every_section

    return [make_report("db-paper", options=OPTIONS), build_report(every_section(), OPTIONS)]


@pytest.mark.parametrize(("language", "catalog"), [("zh-hans", "zh_Hans"), ("ko", "ko")])
def test_the_paper_tables_in_the_readers_language(paper_reports, language, catalog):
    """Every note, row label, figure's text and missing figure's reason of ours in the paper tables is the reader's
    catalog's (issue 39); JSON and CSV keep the English texts, byte for byte."""
    from tests.e2e.test_languages import report_leftovers

    stored = [(render(r, "json"), render(r, "csv")) for r in paper_reports]
    studies = set()
    for report in paper_reports:
        document = render(report, "html", language)
        words, ids = paper_words(report, document)
        studies |= {s["study"] for s in report["paper"]["studies"]}
        assert ids and len(words) > 20
        assert report_leftovers(words, catalog) == []
        assert [english for english in OUR_ENGLISH if any(english in w for w in words)] == []
        latex = render(report, "latex", language)
        ours = "".join(t for t in latex.split("\\begin{table}")[1:] if "\\label{tab:paper-" in t)
        assert ours and [english for english in OUR_ENGLISH if english in ours] == []
    assert studies >= {"dialogbench", "botchat", "diqad"}
    assert [(render(r, "json"), render(r, "csv")) for r in paper_reports] == stored
    dialogbench = stored[0][0]
    assert PACKAGED_NOTE in dialogbench and "not run on this task" in dialogbench and "5 ran here" in dialogbench
    assert "x (judge judge-1)" in stored[1][0] and "task arena, judged by judge-1" in stored[1][0]
