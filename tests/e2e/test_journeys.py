"""Whole studies walked in the browser, from an empty site to the report, by pages only: no API call typed
by the test and no admin page. The test sets up only the manager's own account; everything else (data,
campaign, accounts, batches, labels, QC, report) goes through the pages, and the database is checked at
the end. Every page passed through is screenshotted at 1366 and 800 px (conftest.shot)."""
import json
import re

import pytest
from django.contrib.auth.models import Permission, User

from annotation.models import Annotation, Batch, BatchState, Campaign, Event, Membership
from benchmarks.models import Item
from tests.conftest import DEMO_DATA

from .conftest import CHROMIUM, PASSWORD, expect, first_sign_in, shot, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# DiQAD-shaped items (docs/data.md's import table): the score each annotator gives each item in round 1, by id.
ROUND_1 = {"dq-001": 0, "dq-002": 1, "dq-003": 2}
GUIDELINES = "Score 2 only when the answer is complete, informative and proactive."
REASON = "Items dq-001 and dq-002 are better than that: reread the proactivity rule."


def diqad_file(path):
    records = []
    for n, (external_id, label) in enumerate(sorted(ROUND_1.items()), start=1):
        records.append({"id": external_id, "domain": "legal", "needs_verification": n % 2,
                        "label": label, "reasons": {0: ["not_relevant"], 1: ["incomplete"], 2: []}[label],
                        "dialogue": [{"speaker": "user", "text": f"Question {n}: can my landlord keep the deposit?"},
                                     {"speaker": "expert", "text": f"Answer {n}: only for damage beyond wear."}]})
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.fixture
def people(browser, live_server):
    """A browser context per person, each checked for JS errors and CSP refusals at the end."""
    contexts = []

    def open_page():
        context = browser.new_context(base_url=live_server.url, viewport={"width": 1366, "height": 900})
        context.set_default_timeout(15_000)
        page = context.new_page()
        page.errors = []
        page.on("pageerror", lambda error: page.errors.append(str(error)))
        page.on("console", lambda m: "Content Security Policy" in m.text and page.errors.append(m.text))
        page.on("dialog", lambda dialog: dialog.accept())  # a confirmation asked by a page is confirmed
        contexts.append((context, page))
        return page

    yield open_page
    errors = [error for _, page in contexts for error in page.errors]
    for context, _ in contexts:
        context.close()
    assert not errors, errors


def manager_account(staff):
    """The one account set up outside the pages: a manager (staff, or holding the three permissions)."""
    user = User.objects.create_user("lead", password=PASSWORD, is_staff=staff)
    if not staff:
        for app, codename in (("annotation", "add_campaign"), ("auth", "add_user"), ("benchmarks", "add_item")):
            user.user_permissions.add(Permission.objects.get(content_type__app_label=app, codename=codename))
    return user


def upload(page, prefix, path, slug, *, broken=None):
    page.click("#upload-link")
    page.wait_for_url("**/manage/upload/")
    shot(page, f"{prefix}-upload", "Upload data", "#upload-form")
    if broken:  # a malformed file first: the error names file, line and field, and nothing is written
        page.set_input_files("#id_file", str(broken))
        page.fill("#id_new_benchmark", slug)
        page.click("#upload-submit")
        expect(page.locator("#import-error")).to_contain_text(f"{broken.name}:line 2: field 'label'")
        shot(page, f"{prefix}-upload-error", "Upload data", "#import-error")
        assert not Item.objects.filter(task__benchmark__slug=slug).exists()
    page.set_input_files("#id_file", str(path))
    page.fill("#id_new_benchmark", slug)
    page.click("#upload-submit")
    page.wait_for_url(f"**/manage/?benchmark={slug}")
    expect(page.locator(".messages")).to_contain_text(f"Imported {path.name}")
    shot(page, f"{prefix}-manage-imported", "Manage", f"#benchmarks tr[data-slug='{slug}']")


def new_campaign(page, prefix, slug, preset, name, **settings):
    page.click("#new-campaign-link")
    shot(page, f"{prefix}-campaign-choose", "New campaign", "#preset-form")
    page.select_option("#id_benchmark", slug)
    page.select_option("#id_preset", preset)
    page.click("#apply-preset")
    page.wait_for_selector("#campaign-form")
    page.fill("#id_name", name)
    for key, value in settings.items():
        page.fill(f"#id_{key}", str(value))
    shot(page, f"{prefix}-campaign-settings", "New campaign", "#campaign-form .helptext")
    page.click("#create-campaign")
    page.wait_for_url("**/manage/campaigns/*/members/")
    return Campaign.objects.get(name=name)


def create_accounts(page, prefix, names, role):
    page.fill("#id_a-people", "\n".join(f"{n} {n}@example.org" for n in names))
    page.select_option("#id_a-role", role)
    page.click("#create-accounts")
    page.wait_for_selector("#credentials")
    passwords = {name: page.text_content(f"#credentials tr[data-username='{name}'] .password") for name in names}
    shot(page, f"{prefix}-accounts-{role}", "People", "#credentials")
    return passwords


def cut_batches(page, prefix, campaign):
    page.click(f".subnav a[href='/manage/campaigns/{campaign.pk}/']")
    page.click("#cut-batches")
    expect(page.locator(".messages")).to_contain_text("Cut 1 batch")
    shot(page, f"{prefix}-batches-cut", "Manage", "#batches tr[data-state='open']")


def hand_in(page, prefix, campaign, step):
    """The manager's overview: hand the batch in, then see where it stands. Where the campaign hands a batch
    in by itself when its last item gets its final label, the batch is already handed in and the button
    is not offered."""
    page.goto(f"/manage/campaigns/{campaign.pk}/")
    row = page.locator("#batches tr[data-batch='1']")
    if row.get_attribute("data-state") == "annotating":
        row.locator("button.hand-in").click()
        expect(page.locator(".messages")).to_contain_text("handed in")
    expect(page.locator("#batches tr[data-batch='1']")).to_have_attribute("data-state", "handed_in")
    shot(page, f"{prefix}-{step}", "Manage", "#batches tr[data-state='handed_in'] .last-event")


def next_item_or_done(page, item_text, last):
    if last:
        expect(page.locator("#done")).to_be_visible()
    else:
        expect(page.locator("#item-id")).not_to_have_text(item_text)


def label_diqad(page, prefix, scores, round_):
    """Keyboard only: N (no verification needed), the score's own digit, a reason where the score asks for
    one (the first, by its key), Enter; item after item until nothing is left."""
    page.keyboard.press("Tab")
    page.locator("a.action", has_text=re.compile("Label items|Resume labelling")).first.focus()
    page.keyboard.press("Enter")
    page.wait_for_selector("#item:not([hidden]) .turn, #done:not([hidden])")
    done = 0
    while page.locator("#item:not([hidden])").count():
        item_id = page.text_content("#item-id").removeprefix("Item ").strip()
        if done == 0:
            shot(page, f"{prefix}-annotate-round{round_}", "Label", ".turn")
        score = scores[item_id]
        page.keyboard.press("n")
        page.keyboard.press(str(score))
        if score in (0, 1):
            expect(page.locator(f"[data-key='reasons_{score}']")).to_be_visible()
            page.keyboard.press("1")
        page.keyboard.press("Enter")
        done += 1
        next_item_or_done(page, f"Item {item_id}", done == len(scores))
    assert done == len(scores)
    shot(page, f"{prefix}-annotate-done-round{round_}", "Label", "#done")


def qc_review(page, prefix, campaign, value_label, decide, reason, step):
    page.goto("/")
    page.click("a.action:has-text('Review batch 1')")
    page.wait_for_url("**/batches/*/review/")
    page.click("#start")
    page.wait_for_selector("#decide:not([hidden])")
    for item in page.locator(".sample-item").all():
        item.locator("label.choice", has_text=value_label).click()
        expect(item).to_have_class(re.compile(r"agrees|differs"))
    expect(page.locator("#figures p.muted")).to_have_text(re.compile(r"^3 of 3"))
    page.fill("#reason", reason)
    shot(page, f"{prefix}-{step}", "QC", "#figures #overall")
    page.click(f"#{decide}")
    page.click("#ask-confirm")  # accept and reject ask for confirmation first
    page.wait_for_selector("#notice.ok")


def test_diqad_production_journey(people, tmp_path):
    """DiQAD production with QC, k = 2, from upload to the report, by a manager holding the permissions."""
    assert CHROMIUM.exists()
    manager_account(staff=False)
    boss = people()
    sign_in(boss, "lead")
    shot(boss, "diqad-01-home-manager", "My work", "#manage-link")
    boss.click("#manage-link")
    shot(boss, "diqad-02-manage", "Manage", "#upload-link")
    lines = diqad_file(tmp_path / "diqad-broken.jsonl").read_text().splitlines()
    bad = json.loads(lines[1])
    del bad["label"]
    broken = tmp_path / "diqad-broken.jsonl"
    broken.write_text(f"{lines[0]}\n{json.dumps(bad)}\n")
    upload(boss, "diqad-03", diqad_file(tmp_path / "diqad-legal.jsonl"), "diqad-legal", broken=broken)

    campaign = new_campaign(boss, "diqad-04", "diqad-legal", "diqad-production", "DiQAD legal production",
                            overlap=2, batch_size=10, qc_sample_size=3, overall_threshold="0.92",
                            class_threshold="0.9", min_reading_seconds=0)
    settings = campaign.settings
    assert (settings.overlap, settings.batch_size, settings.qc_sample_size) == (2, 10, 3)
    assert (float(settings.overall_threshold), float(settings.class_threshold)) == (0.92, 0.9)
    shot(boss, "diqad-05-people", "People", "#accounts-form")
    passwords = create_accounts(boss, "diqad-06", ["ann1", "ann2"], "annotator")
    passwords |= create_accounts(boss, "diqad-07", ["qc1"], "qc")
    passwords |= create_accounts(boss, "diqad-08", ["expert1"], "expert")
    passwords |= create_accounts(boss, "diqad-09", ["researcher"], "viewer")
    boss.click(f".subnav a[href='/manage/campaigns/{campaign.pk}/settings/']")
    boss.fill("#id_guidelines", GUIDELINES)
    boss.fill("#id_note", "guidelines written")
    boss.click("#save-settings")
    expect(boss.locator(".messages")).to_contain_text("Settings saved as version 1")
    shot(boss, "diqad-09-settings", "Settings", "#settings-form .helptext")
    cut_batches(boss, "diqad-10", campaign)

    annotators = {}
    for name in ("ann1", "ann2"):
        page = annotators[name] = people()
        first_sign_in(page, name, passwords[name])
        shot(page, f"diqad-11-home-{name}", "My work", f"a[href='/campaigns/{campaign.pk}/annotate/']")
        label_diqad(page, f"diqad-12-{name}", ROUND_1, 1)
    # Pressing 0, 1 and 2 stored exactly those scores, for both annotators.
    stored = {(a.annotator.username, a.item.external_id): a.answers["score"]
              for a in Annotation.objects.filter(campaign=campaign).select_related("annotator", "item")}
    assert stored == {(name, item): score for name in ("ann1", "ann2") for item, score in ROUND_1.items()}
    hand_in(boss, "diqad-13", campaign, "handed-in-round1")

    qc = people()
    first_sign_in(qc, "qc1", passwords["qc1"])
    shot(qc, "diqad-14-home-qc", "My work", "a.action:has-text('Review batch 1')")
    qc_review(qc, "diqad-15", campaign, "2: meets all dimensions", "reject", REASON, "qc-round1")
    expect(qc.locator("#batch-state")).to_contain_text("round 2")
    shot(qc, "diqad-16-qc-rejected", "QC", "#history tr")

    for name, page in annotators.items():
        page.goto("/")
        # Round 2: the annotator's page shows why QC sent the batch back.
        page.locator("a.action", has_text=re.compile("Label items|Resume labelling")).first.click()
        expect(page.locator("main")).to_contain_text(REASON)
        shot(page, f"diqad-17-{name}-round2-reason", "Label", "#item:not([hidden]) .turn")
        page.goto("/")
        label_diqad(page, f"diqad-18-{name}", {item: 2 for item in ROUND_1}, 2)
    hand_in(boss, "diqad-19", campaign, "handed-in-round2")
    qc_review(qc, "diqad-20", campaign, "2: meets all dimensions", "accept", "All sampled labels hold.", "qc-round2")
    expect(qc.locator("#batch-state")).to_contain_text("accepted")
    shot(qc, "diqad-21-qc-accepted", "QC", "#history tr")

    expert = people()
    first_sign_in(expert, "expert1", passwords["expert1"])
    expert.click(f"a[href='/campaigns/{campaign.pk}/disagreements/']")
    shot(expert, "diqad-22-expert-disagreements", "Disagreements", "#settled-title")

    boss.goto(f"/manage/campaigns/{campaign.pk}/")
    expect(boss.locator("#batches tr[data-batch='1']")).to_have_attribute("data-state", "accepted")
    shot(boss, "diqad-23-manager-accepted", "Manage", "#batches tr[data-state='accepted']")

    researcher = people()
    first_sign_in(researcher, "researcher", passwords["researcher"])
    researcher.click(f"a[href='/reports/diqad-legal/?campaign={campaign.pk}']")
    researcher.frame_locator("#report-frame").locator("table").first.wait_for()
    shot(researcher, "diqad-24-report", "Report", "#report-frame")
    researcher.goto("/")
    researcher.click(f"a[href='/campaigns/{campaign.pk}/dashboard/']")
    researcher.wait_for_selector("#batches tr")
    shot(researcher, "diqad-25-dashboard", "Dashboard", "#batches tr")

    # The database at the end: two rounds, round 1 superseded with exactly the keys pressed, the reason kept.
    batch = Batch.objects.get(campaign=campaign)
    assert (batch.state, batch.round) == (BatchState.ACCEPTED, 2)
    rounds = {}
    for a in Annotation.objects.filter(campaign=campaign).select_related("annotator", "item"):
        rounds.setdefault(a.round, {})[(a.annotator.username, a.item.external_id)] = (a.value, a.superseded_at is None)
    assert rounds[1] == {(n, i): (s, False) for n in ("ann1", "ann2") for i, s in ROUND_1.items()}
    assert rounds[2] == {(n, i): (2, True) for n in ("ann1", "ann2") for i in ROUND_1}
    kinds = list(Event.objects.filter(batch=batch).values_list("kind", flat=True))
    assert kinds.count("handed_in") == 2 and "rejected" in kinds and kinds[-1] == "accepted"
    assert Event.objects.get(batch=batch, kind="rejected").reason == REASON
    assert campaign.settings_versions.get().guidelines == GUIDELINES
    assert set(Membership.objects.filter(campaign=campaign).values_list("user__username", "role")) == {
        ("lead", "manager"), ("ann1", "annotator"), ("ann2", "annotator"), ("qc1", "qc"), ("expert1", "expert"),
        ("researcher", "viewer")}


def label_dialogbench(page, prefix, letter, total):
    page.locator("a.action", has_text=re.compile("Label items|Resume labelling")).first.click()
    page.wait_for_selector("#item:not([hidden]) .turn, #done:not([hidden])")
    done = 0
    while page.locator("#item:not([hidden])").count():
        item_id = page.text_content("#item-id")
        if done == 0:
            shot(page, f"{prefix}-annotate", "Label", ".turn")
        page.keyboard.press(letter)
        page.keyboard.press("Enter")
        done += 1
        next_item_or_done(page, item_id, done == total)
    shot(page, f"{prefix}-done", "Label", "#done")
    return done


def test_dialogbench_expert_baseline_journey(people):
    """DialogBench 3-expert human baseline, from upload to the report, by a staff manager: the people are added as
    Experts (the preset's labelling role) and label blind; the finished batch completes itself at its last label,
    as the protocol has no QC step, and its majority is what the report scores."""
    manager_account(staff=True)
    boss = people()
    sign_in(boss, "lead")
    boss.click("#manage-link")
    shot(boss, "dialogbench-01-manage", "Manage", "#upload-link")
    upload(boss, "dialogbench-02", DEMO_DATA / "dialogbench_sample.jsonl", "dialogbench-en")
    campaign = new_campaign(boss, "dialogbench-03", "dialogbench-en", "dialogbench-baseline",
                            "DialogBench English baseline", min_reading_seconds=0)
    settings = campaign.settings
    assert (campaign.protocol, settings.overlap, settings.items_per_task) == ("human_baseline", 3, 50)
    assert campaign.worker_role == "expert"
    passwords = create_accounts(boss, "dialogbench-04", ["rater1", "rater2", "rater3"], "expert")
    passwords |= create_accounts(boss, "dialogbench-05", ["researcher"], "viewer")
    cut_batches(boss, "dialogbench-06", campaign)

    n_items = Item.objects.filter(task__benchmark__slug="dialogbench-en").count()
    for n, name in enumerate(("rater1", "rater2", "rater3")):
        page = people()
        first_sign_in(page, name, passwords[name])
        assert label_dialogbench(page, f"dialogbench-07-{name}", "ab"[n % 2], n_items) == n_items
    # The last label completed the batch; the labeller is told so, and nothing mentions a QC.
    expect(page.locator("#done-text")).to_contain_text("Batch 1 is complete.")
    expect(page.locator("#done-text")).not_to_contain_text("QC")
    values = list(Annotation.objects.filter(campaign=campaign).values_list("annotator__username", "value"))
    assert len(values) == 3 * n_items
    assert {v for name, v in values if name == "rater2"} == {"B"}
    assert {v for name, v in values if name != "rater2"} == {"A"}
    boss.goto(f"/manage/campaigns/{campaign.pk}/")
    expect(boss.locator("#batches tr[data-batch='1']")).to_have_attribute("data-state", "accepted")
    shot(boss, "dialogbench-08-complete", "Manage", "#batches tr[data-state='accepted'] .last-event")
    batch = Batch.objects.get(campaign=campaign)
    kinds = list(Event.objects.filter(batch=batch).values_list("kind", flat=True))
    assert kinds[-1] == "completed" and "handed_in" not in kinds and not batch.reviews.exists()

    researcher = people()
    first_sign_in(researcher, "researcher", passwords["researcher"])
    researcher.click(f"a[href='/reports/dialogbench-en/?campaign={campaign.pk}']")
    frame = researcher.frame_locator("#report-frame")
    frame.locator("table").first.wait_for()
    expect(frame.locator("body")).to_contain_text("human")
    shot(researcher, "dialogbench-09-report", "Report", "#report-frame")
