"""Lay each study paper's published table beside the figures computed here for the same models and tasks."""
import csv
import json

from django.core.management.base import BaseCommand, CommandError

from benchmarks.spreadsheet import safe_cell
from core.errors import ActionError
from reports.render.tables import Cell
from reports.sections.paper import lay_beside
from reports.service import make_report
from studies import STUDIES
from studies.papers import study_tables


def override(text):
    ours, sep, paper = text.partition("=")
    if not sep or not ours or not paper:
        raise ValueError(f"expected OUR_MODEL=PAPER_MODEL, got {text!r}")
    return ours, paper


class Command(BaseCommand):
    help = ("The papers' tables (DialogBench, BotChat, DiQAD, KoDialogBench, Huynh et al., JUDGE-BENCH) beside the "
            "figures of a benchmark's runs that follow their presets: the paper's figure, ours and the difference per "
            "model.")

    def add_arguments(self, parser):
        parser.add_argument("--benchmark", required=True, help="benchmark slug")
        parser.add_argument("--campaign", type=int, help="one campaign's report (its humans)")
        parser.add_argument("--study", choices=STUDIES, help="one study only")
        parser.add_argument("--as", dest="overrides", action="append", type=override, default=[],
                            metavar="OURS=PAPER",
                            help="lay our model OURS (its label in the report) beside the paper's row PAPER, e.g. "
                                 "--as 'my-gpt=GPT-4'")
        parser.add_argument("--format", choices=("text", "json", "csv"), default="text")

    def handle(self, *, benchmark, campaign, study, overrides, format, **options):
        try:
            report = make_report(benchmark, campaign)
        except ActionError as error:
            raise CommandError(f"{error} [{error.code}]") from None
        overrides = dict(overrides)
        studies = [s for s in (report.get("paper") or {}).get("studies", []) if study in (None, s["study"])]
        if overrides:
            for s in studies:
                s["tables"] = [lay_beside(s["study"], t["table"], t["ours"], t["note"], overrides) for t in s["tables"]]
        if not studies:
            self.stdout.write(f"no run on {benchmark} follows the preset of "
                              f"{study or 'any study (' + ', '.join(STUDIES) + ')'}: nothing to lay beside a paper")
            return
        if format == "json":
            self.stdout.write(json.dumps(studies, ensure_ascii=False, indent=1))
        elif format == "csv":
            self.write_csv(studies)
        else:
            for s in studies:
                for table in s["tables"]:
                    self.write_text(s, table)

    def lines(self, table):
        """(model, figure, values by column) per line: the paper's, ours and the difference, then ours alone."""
        for entry in table["beside"]:
            yield entry["paper_model"] + (f" ({entry['config']})" if entry.get("config") else ""), "paper", \
                entry["paper"]
            yield entry["label"], "ours", entry["values"]
            yield "", "difference", entry["difference"]
        for entry in table["ours_alone"]:
            yield entry["label"], f"ours alone ({entry['note']})", entry["values"]

    def write_text(self, study, table):
        doc = study_tables(study["study"])
        self.stdout.write(f"\n{doc['paper']}\nTable {table['table']}: {table['title']} ({table['unit']}), "
                          f"read from {doc['paper_file']}; {table['note']}")
        header = ["model", "figure", *table["columns"]]
        style = "number" if table["unit"] == "spearman" else "decimal"
        body = [[model, figure, *[Cell(values.get(c), style=style).text() for c in table["columns"]]]
                for model, figure, values in self.lines(table)]
        widths = [max(len(str(row[i])) for row in [header, *body]) for i in range(len(header))]
        for row in [header, *body]:
            cells = (str(cell).ljust(width) for cell, width in zip(row, widths, strict=True))
            self.stdout.write("  ".join(cells).rstrip())
        for entry in [*table["beside"], *table["ours_alone"]]:
            self.stdout.write(f"  {entry['label']}: {entry['figure']}")
        self.stdout.write(f"  {table['paper_rows_without_ours']} row(s) of the paper's table have no run here")

    def write_csv(self, studies):
        writer = csv.writer(self.stdout, lineterminator="\n")
        writer.writerow(["study", "table", "model", "paper_model", "figure", "column", "value"])
        for s in studies:
            for table in s["tables"]:
                for entry in table["beside"]:
                    for figure, values in (("paper", entry["paper"]), ("ours", entry["values"]),
                                           ("difference", entry["difference"])):
                        for column in table["columns"]:
                            writer.writerow(map(safe_cell, [s["study"], table["table"], entry["label"],
                                                            entry["paper_model"], figure, column, values.get(column)]))
                for entry in table["ours_alone"]:
                    for column in table["columns"]:
                        writer.writerow(map(safe_cell, [s["study"], table["table"], entry["label"], "", "ours", column,
                                                        entry["values"].get(column)]))
