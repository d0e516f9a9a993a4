"""Lists that grow are paged by the API; the pages still show them whole or on asking: the dashboard's flags
(the newest page, older ones behind a button) and the QC page's history (every page read)."""
import pytest

from annotation.models import Batch, Event, ItemFlag

from .conftest import expect, shot, sign_in
from .test_review_pages import handed_in_batch

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_dashboard_flags_come_a_page_at_a_time(page, tmp_path):
    batch = handed_in_batch(tmp_path)
    item = batch.items.first()
    author = batch.campaign.memberships.get(role="annotator").user
    ItemFlag.objects.bulk_create(ItemFlag(campaign=batch.campaign, batch_item=item, item=item.item, round=1,
                                          author=author, comment=f"Flag number {n}.") for n in range(1, 61))
    sign_in(page, "boss")
    page.goto(f"/campaigns/{batch.campaign_id}/dashboard/")
    rows = page.locator("#flags tr")
    expect(rows).to_have_count(50)
    expect(rows.first).to_contain_text("Flag number 60.")  # newest first
    expect(page.locator(".flags-more")).to_contain_text("50 of 60 flags shown")
    page.get_by_role("button", name="Show older flags").scroll_into_view_if_needed()
    shot(page, "dashboard-flags-paged", "Dashboard", ".flags-more")
    page.get_by_role("button", name="Show older flags").click()
    expect(rows).to_have_count(60)
    expect(rows.last).to_contain_text("Flag number 1.")
    expect(page.locator(".flags-more")).to_have_text("60 of 60 flags shown")


def test_the_review_history_reads_every_page(page, tmp_path, settings):
    batch = handed_in_batch(tmp_path)
    Event.objects.bulk_create(Event(campaign=batch.campaign, batch=batch, kind="item_flagged", actor=None,
                                    reason=f"note {n}", round=1) for n in range(1, 8))
    settings.MAX_PAGE_SIZE = 3  # the page asks for 500 a page and is given 3: it follows `next`
    total = Event.objects.filter(batch=batch).count()
    sign_in(page, "qc")
    page.goto(f"/batches/{Batch.objects.get(pk=batch.pk).pk}/review/")
    expect(page.locator("#history tr")).to_have_count(total)
    expect(page.locator("#history tr").last).to_contain_text("note 7")
