"""FED ratings imported as annotations of five anonymous external raters."""
import json

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command

from annotation.importers import import_ratings
from annotation.models import Annotation, BatchItem, Campaign
from benchmarks.actions import import_items
from benchmarks.importers import ImportFailure
from benchmarks.importers.fed import quality_key


@pytest.mark.django_db
def test_fed_ratings_import(fed_path, tmp_path):
    import_items(fed_path, "fed", "fed")
    call_command("import_ratings", str(fed_path), "--format", "fed", "--benchmark", "fed")
    campaign = Campaign.objects.get(benchmark__slug="fed", source="import:fed")
    assert campaign.protocol == "human_baseline" and campaign.settings.overlap == 5
    labels = Annotation.objects.filter(campaign=campaign)
    assert labels.count() == 500 * 5
    assert BatchItem.objects.filter(campaign=campaign).count() == 500
    raters = User.objects.filter(username__startswith="fed-rater-")
    assert sorted(raters.values_list("username", flat=True)) == [f"fed-rater-{i}" for i in range(1, 6)]
    assert not any(r.is_active or r.has_usable_password() for r in raters)

    # Every number in the file is there, every text rating is missing (absent), never 0.
    records = json.loads(fed_path.read_text())
    answers = {(a.item.external_id, a.annotator.username): a.answers
               for a in labels.select_related("item", "annotator")}
    numbers = texts = 0
    for index, record in enumerate(records):
        for quality, ratings in record["annotations"].items():
            for rater, rating in enumerate(ratings, start=1):
                given = answers[(f"fed-{index:03d}", f"fed-rater-{rater}")]
                if isinstance(rating, str):
                    texts += 1
                    assert given.get(quality_key(quality)) is None
                else:
                    numbers += 1
                    assert given[quality_key(quality)] == rating
    assert texts > 0 and numbers + texts == sum(len(a) for r in records for a in r["annotations"].values())
    assert sum(len(a) for a in answers.values()) == numbers

    again = import_ratings(fed_path, "fed", "fed")
    assert (again.annotations_created, again.annotations_unchanged) == (0, 2500)
    assert Annotation.objects.count() == 2500 and Campaign.objects.filter(source="import:fed").count() == 1

    changed = json.loads(fed_path.read_text())
    first_number = next(i for i, r in enumerate(changed[0]["annotations"]["Overall"]) if isinstance(r, int))
    changed[0]["annotations"]["Overall"][first_number] = (changed[0]["annotations"]["Overall"][first_number] + 1) % 5
    tampered = tmp_path / "fed_changed.json"
    tampered.write_text(json.dumps(changed))
    with pytest.raises(ImportFailure, match=r"fed_changed.json:item 0: field 'annotations':"):
        import_ratings(tampered, "fed", "fed")
    assert Annotation.objects.count() == 2500


@pytest.mark.django_db
def test_fed_ratings_errors_name_file_item_and_field(fed_path, tmp_path):
    with pytest.raises(CommandError, match="no benchmark 'fed'"):
        call_command("import_ratings", str(fed_path), "--format", "fed", "--benchmark", "fed")
    import_items(fed_path, "fed", "fed")
    records = json.loads(fed_path.read_text())
    records[3]["annotations"]["Coherent"][2] = 9
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(records))
    expected = r"broken.json:item 3: field 'annotations.Coherent\[2\]': expected a rating from 0 to 2, got 9"
    with pytest.raises(ImportFailure, match=expected):
        import_ratings(broken, "fed", "fed")
    with pytest.raises(ImportFailure, match="unknown ratings format"):
        import_ratings(fed_path, "csv", "fed")
    assert not Annotation.objects.exists() and not Campaign.objects.exists()
