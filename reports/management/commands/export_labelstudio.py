"""A campaign as a Label Studio project: its tasks (JSON) and its labeling config (XML) beside them."""
import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.models import Campaign
from core.errors import ActionError
from reports.labelstudio import campaign_project


class Command(BaseCommand):
    help = ("Export a campaign as a Label Studio project: PATH gets the tasks with each person's labels as "
            "annotations and the model runs' answers as predictions; PATH with .xml for .json gets the labeling "
            "config. In Label Studio: make a project with that config, add the annotators (their emails are "
            "listed), then import PATH.")

    def add_arguments(self, parser):
        parser.add_argument("path", help="the tasks file to write, e.g. project.json")
        parser.add_argument("--campaign", required=True, type=int, help="the campaign's id")

    def handle(self, path, campaign, **options):
        try:
            project = campaign_project(Campaign.objects.select_related("benchmark").get(pk=campaign))
        except Campaign.DoesNotExist:
            raise CommandError(f"no campaign {campaign}") from None
        except ActionError as error:
            raise CommandError(str(error)) from None
        path = Path(path)
        config = path.with_suffix(".xml")
        path.write_text(json.dumps(project["tasks"], ensure_ascii=False, indent=1), encoding="utf-8")
        config.write_text(project["label_config"], encoding="utf-8")
        counts = project["counts"]
        self.stdout.write(self.style.SUCCESS(
            f"{counts['tasks']} tasks, {counts['annotations']} annotations of {counts['annotators']} annotators and "
            f"{counts['predictions']} predictions of {counts['runs']} runs written to {path}; labeling config in "
            f"{config}"))
        for email in project["annotators"]:
            self.stdout.write(f"annotator: {email}")
