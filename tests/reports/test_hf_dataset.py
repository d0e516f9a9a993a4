"""The Hugging Face datasets bridge: a benchmark with its people's labels, gold and predictions out as Parquet and a
dataset card that `datasets` reads, and back in with nothing lost; broken and hostile files refused, nothing written."""
import io
import json
import zipfile

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.models import Annotation, Campaign, GoldLabel, GoldVersion
from benchmarks.importers import ImportFailure
from benchmarks.models import Benchmark, Item, Task
from modeleval.models import EvalRun, Prediction
from reports import hf_dataset
from reports.contract import ReportOptions
from reports.service import make_report
from tests.reports import factories

pytestmark = pytest.mark.django_db

FAST = ReportOptions(n_resamples=50)


def demo(with_runs=True):
    """The DialogBench demo with three raters (one label missing), its source gold frozen and chosen, a model run
    with one unparsable answer."""
    bench, items, answers = factories.demo_three_raters()
    Benchmark.objects.filter(pk=bench.pk).update(licence="MIT")  # as DialogBench publishes it
    answers[items[0].pk][2] = None
    campaign = factories.human_campaign(bench, answers, name="DialogBench demo: human baseline")
    factories.frozen_gold(campaign)
    if with_runs:
        factories.model_run(bench, list(bench.tasks.all()), "demo-model", {
            i.pk: {"answer": "" if n == 1 else factories.wrong_option(i) if n % 2 else i.source_gold["answer"],
                   "parse_status": "unparsable" if n == 1 else "scored"}
            for n, i in enumerate(items)})
    return bench, items


def written(tmp_path, name="out"):
    folder = tmp_path / name
    done = hf_dataset.export_dataset("dialogbench-demo", folder, options=FAST)
    return folder, done


def table_counts():
    return {model.__name__: model.objects.count() for model in (Benchmark, Task, Item, Campaign, Annotation,
                                                                  GoldVersion, GoldLabel, EvalRun, Prediction)}


def test_the_round_trip_keeps_items_labels_gold_and_predictions(tmp_path):
    demo()
    folder, first = written(tmp_path)
    assert first.counts["items"] == 12 and first.counts["labels"] == 35 and first.counts["gold"] == 12
    assert first.counts["predictions"] == 12
    summary = hf_dataset.import_dataset(folder, "demo-copy")
    assert (summary.items_created, summary.labels_created, summary.runs_created) == (12, 35, 5)  # a run per task
    assert summary.gold == "demo-copy@gold-v1"
    again = hf_dataset.export_dataset("demo-copy", tmp_path / "again", options=FAST)
    print({part: n for part, (n, _) in first.hashes.items()})
    assert again.hashes == first.hashes  # counts and sha256 of items, labels per annotator, gold, predictions
    # the copy's report cites the imported gold and reads the same people
    report = make_report("demo-copy", options=FAST)
    assert report["scope"]["gold"] == "demo-copy@gold-v1"
    original = make_report("dialogbench-demo", options=FAST)
    figures = [(r["task"], r["fleiss_kappa"], r["krippendorff_alpha"]) for r in report["agreement"]["campaigns"]]
    assert figures == [(r["task"], r["fleiss_kappa"], r["krippendorff_alpha"])
                       for r in original["agreement"]["campaigns"]]


def test_importing_twice_adds_nothing(tmp_path):
    demo()
    folder, _ = written(tmp_path)
    hf_dataset.import_dataset(folder, "demo-copy")
    before = table_counts()
    summary = hf_dataset.import_dataset(folder, "demo-copy")
    assert table_counts() == before
    assert (summary.items_created, summary.labels_created, summary.runs_created) == (0, 0, 0)
    assert (summary.items_unchanged, summary.labels_unchanged, summary.runs_unchanged) == (12, 35, 5)


def test_datasets_loads_ours(tmp_path):
    from datasets import load_dataset

    demo()
    folder, done = written(tmp_path)
    labels = load_dataset(str(folder), "labels")
    assert list(labels) == ["test"] and labels["test"].num_rows == done.counts["labels"]
    assert set(labels["test"].column_names) == set(hf_dataset.COLUMNS["labels"])
    assert load_dataset(str(folder))["test"].num_rows == 12  # the default config: items
    items = load_dataset("parquet", data_files={"test": str(folder / "items" / "*.parquet")})["test"]
    assert items[0]["dialogue"][0].keys() == {"speaker", "text"}
    for config in hf_dataset.CONFIGS:
        if done.counts[config]:
            assert load_dataset(str(folder), config)["test"].num_rows == done.counts[config]
        else:  # no campaign here has final values: no aggregate, in the card or the files
            assert config == "aggregate" and not (folder / config).exists()


def test_the_card_states_the_protocol_the_agreement_as_the_report_computes_it_and_the_licence(tmp_path):
    demo()
    folder, _ = written(tmp_path)
    text = (folder / "README.md").read_text()
    front = yaml.safe_load(text.split("---")[1])
    assert front["license"] == "mit"  # DialogBench's MIT
    assert "multiple-choice" in front["task_categories"]
    assert [c["config_name"] for c in front["configs"]] == [c for c in hf_dataset.CONFIGS if c != "aggregate"]
    assert next(c for c in front["configs"] if c.get("default"))["config_name"] == "items"
    report = make_report("dialogbench-demo", options=FAST)
    rows = report["agreement"]["campaigns"]
    assert rows
    for row in rows:
        assert hf_dataset._figure(row, "fleiss_kappa") in text
        assert hf_dataset._figure(row, "krippendorff_alpha") in text
    assert "protocol `human_baseline`" in text and "dialogbench-demo@gold-v1" in text


def test_pseudonyms_never_name_accounts(tmp_path):
    demo()
    folder, _ = written(tmp_path)
    names = set(pq.read_table(folder / "labels" / "labels-test.parquet").column("annotator").to_pylist())
    assert names == {"rater-1", "rater-2", "rater-3"}
    accounts = list(Annotation.objects.values_list("annotator__username", flat=True).distinct())
    assert accounts and all(name.startswith("DialogBench demo") for name in accounts)
    written_bytes = b"".join(p.read_bytes() for p in folder.rglob("*") if p.is_file())
    assert not any(name.encode() in written_bytes for name in accounts)


def test_a_zip_and_the_loose_parquet_files_import_alike(tmp_path):
    demo()
    folder, first = written(tmp_path)
    archive = hf_dataset.zip_folder(folder, tmp_path / "demo.zip")
    hf_dataset.import_dataset([(archive, "demo.zip")], "from-zip")
    loose = [(p, p.name) for p in sorted(folder.rglob("*.parquet"))]
    hf_dataset.import_dataset(loose, "from-files")
    for slug in ("from-zip", "from-files"):
        assert hf_dataset.export_dataset(slug, tmp_path / slug, options=FAST).hashes == first.hashes


def rewrite(folder, config, change):
    """The config's file with `change(list of rows)` applied, written back with the same schema."""
    path = folder / config / f"{config}-test.parquet"
    table = pq.read_table(path)
    rows = table.to_pylist()
    change(rows)
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path)


BROKEN = [
    ("items", lambda rows: rows[3].update(dialogue=[{"speaker": "a", "text": None}]), "row 3", "dialogue[0]"),
    ("items", lambda rows: rows[5].update(fields="{not json"), "row 5", "fields"),
    ("items", lambda rows: rows[2].update(meta="[" * 5000 + "]" * 5000), "row 2", "meta"),
    ("labels", lambda rows: rows[7].update(answers=json.dumps({"answer": "Z"})), "row 7", "answers.answer"),
    ("labels", lambda rows: rows[4].update(item="no-such-item"), "row 4", "item"),
    ("labels", lambda rows: rows[1].update(annotator="../../etc/passwd"), "row 1", "annotator"),
    ("gold", lambda rows: rows[0].update(method="oracle"), "row 0", "method"),
    ("predictions", lambda rows: rows[6].update(answer="<script>"), "row 6", "answer"),
    ("tasks", lambda rows: rows[0].update(form=json.dumps({"questions": []})), "row 0", "form"),
]


@pytest.mark.parametrize("config, change, row, field", BROKEN, ids=[f"{c}-{f}" for c, _, _, f in BROKEN])
def test_a_broken_file_writes_nothing_and_names_file_row_and_field(tmp_path, config, change, row, field):
    demo()
    folder, _ = written(tmp_path)
    rewrite(folder, config, change)
    before = table_counts()
    with pytest.raises(ImportFailure) as refused:
        hf_dataset.import_dataset(folder, "demo-copy")
    assert (refused.value.path, refused.value.location, refused.value.field) == (
        f"{config}/{config}-test.parquet", row, field), str(refused.value)
    assert table_counts() == before


def test_a_file_that_is_not_parquet_and_unknown_columns_are_refused(tmp_path):
    demo(with_runs=False)
    folder, _ = written(tmp_path)
    before = table_counts()
    junk = tmp_path / "junk.parquet"
    junk.write_bytes(b"PAR1" + b"\x00" * 100)
    with pytest.raises(ImportFailure, match="not a readable Parquet file"):
        hf_dataset.import_dataset([junk], "demo-copy")
    other = tmp_path / "other.parquet"
    pq.write_table(pa.table({"question": ["?"], "answer": ["!"]}), other)
    with pytest.raises(ImportFailure, match="columns .* are those of no configuration"):
        hf_dataset.import_dataset([folder / "tasks" / "tasks-test.parquet", folder / "items" / "items-test.parquet",
                                   other], "demo-copy")
    typed = folder / "gold" / "gold-test.parquet"
    table = pq.read_table(typed)
    pq.write_table(table.set_column(table.schema.get_field_index("margin"), "margin",
                                    pa.array(["1"] * table.num_rows)), typed)
    with pytest.raises(ImportFailure) as refused:
        hf_dataset.import_dataset(folder, "demo-copy")
    assert refused.value.field == "margin"
    assert table_counts() == before


def hostile_zip(tmp_path, members):
    path = tmp_path / "hostile.zip"
    with zipfile.ZipFile(path, "w") as archive:
        for info, data in members:
            archive.writestr(info, data)
    return path


def test_hostile_zips_are_refused(tmp_path, monkeypatch):
    demo(with_runs=False)
    folder, _ = written(tmp_path)
    items = (folder / "items" / "items-test.parquet").read_bytes()
    before = table_counts()
    outside = hostile_zip(tmp_path, [("../../items.parquet", items)])
    with pytest.raises(ImportFailure, match="outside the dataset's folder"):
        hf_dataset.import_dataset([(outside, "hostile.zip")], "demo-copy")
    link = zipfile.ZipInfo("items/link.parquet")
    link.external_attr = (0o120777 << 16)
    linked = hostile_zip(tmp_path, [(link, "/etc/passwd")])
    with pytest.raises(ImportFailure, match="a link"):
        hf_dataset.import_dataset([(linked, "hostile.zip")], "demo-copy")
    many = hostile_zip(tmp_path, [(f"items/{n}.parquet", b"") for n in range(hf_dataset.MAX_FILES + 1)])
    with pytest.raises(ImportFailure, match="Parquet files; at most"):
        hf_dataset.import_dataset([(many, "hostile.zip")], "demo-copy")
    monkeypatch.setattr(hf_dataset, "MAX_FILE_BYTES", 1_000_000)
    bomb = io.BytesIO()
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("items/items-test.parquet", b"\x00" * (hf_dataset.MAX_FILE_BYTES + 1))
    assert len(bomb.getvalue()) < 10_000
    (tmp_path / "bomb.zip").write_bytes(bomb.getvalue())
    with pytest.raises(ImportFailure, match="bytes unpacked"):
        hf_dataset.import_dataset([(tmp_path / "bomb.zip", "bomb.zip")], "demo-copy")
    (tmp_path / "text.zip").write_text("PK not really")
    with pytest.raises(ImportFailure, match="expected a Parquet file"):
        hf_dataset.import_dataset([(tmp_path / "text.zip", "text.zip")], "demo-copy")
    assert table_counts() == before


def test_a_pseudonym_that_is_a_persons_account_is_refused(tmp_path):
    from django.contrib.auth import get_user_model

    demo(with_runs=False)
    folder, _ = written(tmp_path)
    get_user_model().objects.create_user("hf-rater-2", password="x")
    before = table_counts()
    with pytest.raises(ImportFailure, match="hf-rater-2 is a person's account"):
        hf_dataset.import_dataset(folder, "demo-copy")
    assert table_counts() == before


def test_the_commands_export_import_and_refuse_a_push_without_a_token(tmp_path, monkeypatch, capsys):
    demo(with_runs=False)
    folder = tmp_path / "cmd"
    call_command("export_hf_dataset", str(folder), "--benchmark", "dialogbench-demo", "--resamples", "20")
    out = capsys.readouterr().out
    assert "items: 12 rows, sha256" in out
    call_command("import_hf_dataset", str(folder), "--benchmark", "demo-copy")
    assert "12 items created" in capsys.readouterr().out
    monkeypatch.delenv("HF_TOKEN", raising=False)
    with pytest.raises(CommandError, match="HF_TOKEN"):
        call_command("export_hf_dataset", str(tmp_path / "push"), "--benchmark", "dialogbench-demo",
                     "--push", "someone/demo")
    assert not (tmp_path / "push").exists()
    rewrite(folder, "labels", lambda rows: rows[0].update(answers="null"))
    refusal = r"(?s)labels/labels-test.parquet:row 0: field 'answers'.*Nothing was imported"
    with pytest.raises(CommandError, match=refusal):
        call_command("import_hf_dataset", str(folder), "--benchmark", "demo-other")
    assert not Benchmark.objects.filter(slug="demo-other").exists()


def test_a_parquet_file_that_decompresses_into_a_large_one_is_refused(tmp_path, monkeypatch):
    demo(with_runs=False)
    folder, _ = written(tmp_path)
    monkeypatch.setattr(hf_dataset, "MAX_FILE_BYTES", 1_000_000)
    path = folder / "items" / "items-test.parquet"
    table = pq.read_table(path)
    rows = table.to_pylist()
    rows[0]["fields"] = json.dumps({"x": "a" * 2_000_000})
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path, compression="zstd")
    assert path.stat().st_size < 100_000
    before = table_counts()
    with pytest.raises(ImportFailure, match="bytes once decompressed, over the limit") as refused:
        hf_dataset.import_dataset(folder, "demo-copy")
    assert refused.value.path == "items/items-test.parquet"
    assert table_counts() == before
