
from django.core.management.base import BaseCommand, CommandError

from core.errors import ActionError
from reports.contract import ReportOptions
from reports.readable import GAP_RULES
from reports.render import FORMATS, render
from reports.service import make_report


class Command(BaseCommand):
    help = "Write the human-versus-model report of a benchmark (or one campaign) as json, csv, html or latex."

    def add_arguments(self, parser):
        parser.add_argument("--benchmark", required=True, help="benchmark slug")
        parser.add_argument("--campaign", type=int, help="only this campaign's items and labels")
        parser.add_argument("--gold-version", type=int,
                            help="frozen gold version number (default: the campaign's pinned gold, the benchmark's "
                                 "chosen gold, else source gold)")
        parser.add_argument("--format", choices=sorted(FORMATS), default="json")
        parser.add_argument("--out", default="-", help="output file, - for standard output")
        parser.add_argument("--resamples", type=int, default=ReportOptions.n_resamples, help="bootstrap resamples")
        parser.add_argument("--seed", type=int, default=ReportOptions.seed)
        parser.add_argument("--rule", choices=GAP_RULES, default=ReportOptions.rule,
                            help="how log-likelihood runs are scored for the gap (run: each run's own rule)")
        parser.add_argument("--min-items", type=int, default=ReportOptions.min_items,
                            help="flag figures from fewer items as small samples")

    def handle(self, benchmark, campaign, gold_version, format, out, resamples, seed, rule, min_items, **options):
        try:
            report = make_report(benchmark, campaign, gold_version,
                                 ReportOptions(n_resamples=resamples, seed=seed, rule=rule, min_items=min_items))
        except ActionError as error:
            raise CommandError(str(error)) from None
        text = render(report, format)
        if out == "-":
            self.stdout.write(text, ending="")
        else:
            with open(out, "w", encoding="utf-8", newline="") as handle:
                handle.write(text)
            self.stderr.write(f"{format} report of {benchmark} written to {out}")
