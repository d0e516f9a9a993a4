"""The upload page's table of formats lists every format its menu offers, and an imported released DiQAD item
without a domain shows no empty "domain" heading, in the language of its text."""
import json
from pathlib import Path

import pytest

from annotation import actions
from benchmarks.actions import import_items
from benchmarks.importers import FORMATS
from tests.frontend.conftest import make_campaign

from .conftest import expect, make_user, shot, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
LOOK = Path("/work/shots/accounts")


def look(page, name):
    if LOOK.is_dir():
        page.screenshot(path=str(LOOK / f"{name}.png"), full_page=True)


def test_upload_page_lists_every_format_of_its_menu(page):
    boss = make_user("boss")
    boss.is_staff = True
    boss.save()
    sign_in(page, "boss")
    page.goto("/manage/upload/")
    offered = [v for v in page.eval_on_selector_all("#id_format option", "els => els.map(e => e.value)") if v]
    assert sorted(offered) == sorted([*FORMATS, "hf"])  # the item formats and a Hugging Face dataset
    for name in offered:
        expect(page.locator(f"#formats tr[data-format='{name}']")).to_be_visible()
    expect(page.locator("#id_task")).to_be_visible()
    shot(page, "upload-formats", "Upload data", "#formats")
    look(page, "upload-formats")


def test_a_released_diqad_item_without_a_domain_shows_no_domain_heading(page, tmp_path):
    path = tmp_path / "released.json"
    path.write_text(json.dumps({"label": 2, "reason": "", "turns": "My brakes squeak.#!#The pads may be worn."}),
                    encoding="utf-8")
    import_items(path, "diqad_released", "dq-released")
    boss, ann = make_user("boss"), make_user("ann1")
    campaign = make_campaign(boss, {"ann1": ann}, "dq-released", roles={"ann1": "annotator"}, overlap=1,
                             batch_size=5, qc_sample_size=1, min_reading_seconds=0, seed=1)
    actions.cut_batches(campaign, actor=boss)
    sign_in(page, "ann1")
    page.goto(f"/campaigns/{campaign.pk}/annotate/")
    page.wait_for_selector("#item:not([hidden]) .turn")
    expect(page.locator("#item .meta dt", has_text="domain")).to_have_count(0)
    expect(page.locator("#item [lang='en']").first).to_be_attached()
    look(page, "annotate-released-diqad-no-domain")
