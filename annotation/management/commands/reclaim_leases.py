from django.core.management.base import BaseCommand, CommandError

from annotation.actions import reclaim_expired_leases
from annotation.models import Campaign


class Command(BaseCommand):
    help = "Expire leases past their time so their items go to other annotators (beat does this every minute)."

    def add_arguments(self, parser):
        parser.add_argument("--campaign", type=int, help="only this campaign id")

    def handle(self, campaign=None, **options):
        scope = Campaign.objects.filter(pk=campaign).first() if campaign else None
        if campaign and scope is None:
            raise CommandError(f"no campaign {campaign}")
        count = reclaim_expired_leases(campaign=scope)
        self.stdout.write(self.style.SUCCESS(f"{count} expired leases reclaimed"))
