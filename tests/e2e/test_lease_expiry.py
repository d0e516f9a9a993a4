"""An annotator who submits after their lease ran out is told so and gets the next item (issue 18, finding 10)."""
from datetime import timedelta

import pytest

from annotation.models import Annotation, Assignment

from .conftest import expect, shot, sign_in
from .test_flows import campaign_for, people  # noqa: F401 (fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_late_submit_shows_the_notice_and_loads_the_next_item(page, people):  # noqa: F811
    campaign = campaign_for(people, lease_minutes=1)
    sign_in(page, "ann1")
    page.goto(f"/campaigns/{campaign.pk}/annotate/")
    page.wait_for_selector("#item:not([hidden]) .turn")
    first = page.text_content("#item-id")
    lease = Assignment.objects.get(annotator=people["ann1"], status="leased")
    # The annotator read for 62 s on a 1-minute lease.
    Assignment.objects.filter(pk=lease.pk).update(served_at=lease.served_at - timedelta(seconds=62),
                                                  expires_at=lease.expires_at - timedelta(seconds=62))
    for key in ("2", "n", "Enter"):
        page.keyboard.press(key)
    expect(page.locator("#item-id")).not_to_have_text(first)
    page.wait_for_selector("#notice.warn")
    notice = page.text_content("#notice")
    assert "ran out" in notice and "not saved" in notice and "next item" in notice, notice
    shot(page, "annotate-lease-expired", "Label", "#notice.warn")
    assert not Annotation.objects.filter(annotator=people["ann1"]).exists()
    assert Assignment.objects.filter(annotator=people["ann1"], status="leased",
                                     expires_at__gt=lease.expires_at).count() == 1
