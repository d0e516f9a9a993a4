from django.core.management.base import BaseCommand, CommandError

from annotation.audit import NotAuditable, redraw_qc_sample, stored_qc_sample
from annotation.models import QCReview


class Command(BaseCommand):
    help = ("Draw a QC review's sample again from its stored seed, secret and candidates and compare it with the "
            "sample the QC was given (exit status 1 when they differ).")

    def add_arguments(self, parser):
        parser.add_argument("review", type=int, help="QC review id")

    def handle(self, review, **options):
        found = QCReview.objects.filter(pk=review).select_related("batch").first()
        if found is None:
            raise CommandError(f"no QC review {review}")
        try:
            redrawn = redraw_qc_sample(found)
        except NotAuditable as error:
            raise CommandError(str(error)) from None
        stored = stored_qc_sample(found)
        inputs = found.sample_inputs
        self.stdout.write(f"QC review {found.pk}: batch {found.batch.number} round {found.round}, "
                          f"public seed {inputs['public_seed']!r}, secret {found.sample_secret}, "
                          f"size {inputs['size']}, stratified {inputs['stratify']}, "
                          f"{len(inputs['candidates'])} candidates")
        self.stdout.write(f"stored sample:  {stored}")
        self.stdout.write(f"redrawn sample: {redrawn}")
        if redrawn != stored:
            self.stderr.write("the redrawn sample does NOT match the stored one")
            raise SystemExit(1)
        self.stdout.write("the redrawn sample matches the stored one")
