# Who labels a campaign becomes the campaign's own setting (its preset's): existing gold panels keep their experts.

from django.conf import settings
from django.db import migrations, models


def experts_label_gold_panels(apps, schema_editor):
    apps.get_model("annotation", "Campaign").objects.filter(protocol="gold_panel").update(worker_role="expert")


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0008_active_selection'),
        ('benchmarks', '0001_initial'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name='campaign',
            name='worker_role',
            field=models.CharField(choices=[('annotator', 'Annotator'), ('expert', 'Expert')], default='annotator', help_text="Who labels the items: annotators, or experts (a gold panel, DialogBench's 3-expert baseline); experts who label vote blind", max_length=20),
        ),
        migrations.RunPython(experts_label_gold_panels, migrations.RunPython.noop),
        migrations.AlterField(
            model_name='event',
            name='kind',
            field=models.CharField(choices=[('campaign_created', 'Campaign Created'), ('settings_changed', 'Settings Changed'), ('member_added', 'Member Added'), ('member_activated', 'Member Activated'), ('member_deactivated', 'Member Deactivated'), ('accounts_created', 'Accounts Created'), ('batch_created', 'Batch Created'), ('batch_started', 'Batch Started'), ('item_skipped', 'Item Skipped'), ('item_flagged', 'Item Flagged'), ('label_changed', 'Label Changed'), ('leases_reclaimed', 'Leases Reclaimed'), ('disagreement_resolved', 'Disagreement Resolved'), ('handed_in', 'Handed In'), ('review_started', 'Review Started'), ('accepted', 'Accepted'), ('rejected', 'Rejected'), ('completed', 'Completed'), ('reopened', 'Reopened'), ('gold_version_created', 'Gold Version Created'), ('gold_version_frozen', 'Gold Version Frozen'), ('gold_version_pinned', 'Gold Version Pinned'), ('gold_version_chosen_for_benchmark', 'Gold Version Chosen For Benchmark'), ('ratings_imported', 'Ratings Imported')], max_length=40),
        ),
        migrations.AddConstraint(
            model_name='campaign',
            constraint=models.CheckConstraint(condition=models.Q(('worker_role__in', ('annotator', 'expert'))), name='campaign_worker_role_valid'),
        ),
    ]
