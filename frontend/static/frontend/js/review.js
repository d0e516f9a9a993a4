// QC review of a batch: the sample with the QC's own label per item (by keyboard as in the workspace),
// live accuracy (computed by the server with the acceptance rule itself), the decision, and the batch's
// history. In a blind review the server hides each final label until the QC has given theirs. A label is bound
// to its item when it is given (a key labels the item on screen and the next one comes at once), shown as
// being saved, and sent after the labels given before it: typing faster than the server answers never moves a
// label to another item. While the sample loads the keys are refused, with the rest of their burst (keys.js).
import { api, apiAll, ApiError, composing, el, inOrder, pct, say } from "./api.js";
import { ask, asking } from "./ask.js";
import { renderItem } from "./dialogue.js";
import { choiceIndex, choiceLabel, choicesOf } from "./form.js";
import { dateTime, fill, gettext } from "./i18n.js";
import { keyGate } from "./keys.js";

// Every string the labels on their way show.
const TEXT = {
  saving: gettext("saving…"),
  notSaved: (item, detail) => fill(gettext("Your label on item %(item)s was not saved: %(detail)s"), { item, detail }),
  noAnswer: gettext("the server did not answer."),
  loading: gettext("the sample is loading"),
};
// A QC review's decision by its name.
const DECISIONS = { accepted: gettext("accepted"), rejected: gettext("rejected") };

const root = document.getElementById("review");
const batchId = root.dataset.batch;
const takesQC = Boolean(root.dataset.reviews);  // the server's answer (CampaignAccess.reviews)
const $ = (id) => document.getElementById(id);
const notice = $("notice");
const decideNotice = $("decide-notice");
const keys = keyGate(notice);
let batch = null;
let review = null;
let figures = null;
let editable = false;
let valueLabel = (value) => (value === null || value === undefined ? "—" : JSON.stringify(value));

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const choicesByItem = new Map();
const send = inOrder();
const queuedFor = new Map();  // batch item -> how many of its labels are queued or on their way

function labelsFrom(entries) {
  // Values shown by their option labels ("2: meets all dimensions"), not raw JSON.
  const first = entries[0];
  if (!first) return;
  const primary = first.item.form.questions.find((q) => q.key === first.item.form.primary);
  const known = new Map();
  for (const entry of entries) {
    for (const c of choicesOf(primary, entry.item)) known.set(JSON.stringify(c.value), c.label);
  }
  valueLabel = (value) => (value === null || value === undefined ? "—" : known.get(JSON.stringify(value)) ?? JSON.stringify(value));
}

function finalText(entry) {
  if (review.blind && entry.qc_value === null) return el("em", { class: "muted" }, gettext("hidden until you give your label"));
  return valueLabel(entry.annotator_value);
}

function sampleEntry(entry) {
  const { item } = entry;
  const primary = item.form.questions.find((q) => q.key === item.form.primary);
  const choices = choicesOf(primary, item);
  choicesByItem.set(entry.batch_item, choices);
  const name = `qc-${entry.batch_item}`;
  const list = el("fieldset", { class: "choices" }, el("legend", {}, gettext("Your label"),
    el("span", { class: "entry-status", "aria-live": "polite" })),
    choices.map((choice, i) => {
      const input = el("input", { type: "radio", name, id: `${name}-${i}`, disabled: !editable,
        checked: same(choice.value, entry.qc_value), dataset: { index: i },
        onchange: (event) => label(event.target.closest(".sample-item"), i) });
      return choiceLabel(choice, input, editable);
    }));
  const agree = entry.qc_value === null || entry.annotator_value === null ? "" : same(entry.qc_value, entry.annotator_value) ? "agrees" : "differs";
  return el("li", { class: `sample-item ${agree}`, dataset: { batchItem: entry.batch_item, externalId: item.external_id },
    tabindex: -1 },
    el("h3", {}, fill(gettext("Item %(item)s"), { item: item.external_id })),
    el("details", {}, el("summary", {}, fill(gettext("Dialogue (%(turns)s turns)"), { turns: item.dialogue.length })), renderItem(item)),
    el("p", {}, gettext("Final label:") + " ", el("strong", { class: "final" }, finalText(entry))),
    list);
}

function showFigures(f) {
  figures = f;
  const pass = (ok) => el("span", { class: ok ? "pass" : "fail" }, ok ? gettext("meets") : gettext("below"));
  const rows = Object.values(f.per_class || {}).map((c) => el("tr", {},
    el("th", { scope: "row" }, valueLabel(c.label)), el("td", {}, `${c.correct}/${c.n}`), el("td", {}, pct(c.accuracy)), el("td", {}, pass(c.passed))));
  // Nothing labelled yet: no verdict, no override.
  const verdict = !f.n ? el("p", { class: "muted", id: "verdict" }, gettext("No verdict yet: label the sampled items first."))
    : el("p", { class: f.passed ? "pass" : "fail", id: "verdict" }, f.passed ? gettext("The sample passes the rule.") : gettext("The sample does not pass the rule."));
  $("figures").replaceChildren(
    el("p", { class: "big", id: "overall" }, fill(gettext("Overall %(share)s"), { share: pct(f.overall) }) + " ", f.n ? pass(f.overall_passed) : ""),
    el("p", { class: "muted" }, fill(gettext("%(n)s of %(sample)s labelled"), f) + " · " + fill(gettext("thresholds %(overall)s overall, %(class)s per class"),
      { overall: pct(f.overall_threshold), class: pct(f.class_threshold) })),
    el("table", { class: "table" }, el("thead", {}, el("tr", {}, [gettext("Class (QC label)"), gettext("Right"), gettext("Accuracy"), ""].map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, rows)),
    verdict);
  $("override-box").hidden = !f.n || f.passed;
}

async function refreshFigures() {
  try {
    showFigures(await api(`/api/v1/batches/${batchId}/qc_figures/`));
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    $("figures").replaceChildren(el("p", { class: "muted" }, error.body.detail || gettext("No figures yet.")));
  }
}

const entries = () => [...document.querySelectorAll("#sample .sample-item")];

// The item's entry as the server last answered it: its saved label (or none), and the final label a blind
// review shows once the QC has labelled it.
function showEntry(batchItem) {
  const entry = review.sample.find((e) => e.batch_item === batchItem);
  const old = document.querySelector(`#sample [data-batch-item="${batchItem}"]`);
  if (!entry || !old) return;
  const fresh = sampleEntry(entry);
  fresh.querySelector("details").open = old.querySelector("details").open;
  const focused = old.contains(document.activeElement);
  old.replaceWith(fresh);
  if (focused) focusEntry(fresh);
}

// The QC's label for the item of `li`, bound to it now: shown at once as being saved, sent after the labels
// given before it. A refused label is said and the item shows its saved label again.
function label(li, index) {
  const batchItem = Number(li.dataset.batchItem);
  const choice = choicesByItem.get(batchItem)[index];
  li.querySelectorAll("input[type=radio]")[index].checked = true;
  li.classList.add("pending");
  li.querySelector(".entry-status").textContent = TEXT.saving;
  queuedFor.set(batchItem, (queuedFor.get(batchItem) || 0) + 1);
  const body = { batch_item: batchItem, value: choice.value, round: review.round };
  send(() => api(`/api/v1/batches/${batchId}/qc_label/`, { method: "POST", body }))
    .then((answer) => { review = answer; },
      (error) => say(notice, TEXT.notSaved(li.dataset.externalId, error.body?.detail || TEXT.noAnswer), "error"))
    .finally(() => {
      const left = queuedFor.get(batchItem) - 1;
      queuedFor.set(batchItem, left);
      if (!left) showEntry(batchItem);
      if (send.idle()) refreshFigures();
    });
}

const unlabelled = (li) => !li.querySelector("input:checked");

function focusEntry(li) {
  if (!li) return;
  (li.querySelector("input:checked") || li.querySelector("input") || li).focus();
  li.scrollIntoView({ block: "nearest" });
}

function currentEntry() {
  const all = entries();
  return all.find((li) => li.contains(document.activeElement)) || all.find(unlabelled) || all[0];
}

// Keys as in the workspace: the chip's key labels the item on screen (the focused one, else the first without a
// label), and the next item without a label comes at once, so the next key is for that one.
document.addEventListener("keydown", (event) => {
  if (composing(event) || asking() || keys.refused(event)) return;
  if (!editable || event.ctrlKey || event.metaKey || event.altKey) return;
  const tag = event.target.tagName;
  if (tag === "TEXTAREA" || (tag === "INPUT" && !["radio", "checkbox"].includes(event.target.type))) return;
  const li = currentEntry();
  if (!li) return;
  const key = event.key.toLowerCase();
  const index = choiceIndex(choicesByItem.get(Number(li.dataset.batchItem)) || [], key);
  if (index < 0 && (key === "j" || key === "k")) {  // an option's own key comes first
    event.preventDefault();
    const all = entries();
    focusEntry(all[all.indexOf(li) + (key === "j" ? 1 : -1)] || li);
    return;
  }
  if (index < 0) return;
  event.preventDefault();
  label(li, index);
  const all = entries();
  focusEntry(all.slice(all.indexOf(li) + 1).find(unlabelled) || all.find(unlabelled) || li);
});

async function decide(kind) {
  const body = kind === "accept" ? { reason: $("reason").value, override_reason: $("override").value } : { reason: $("reason").value };
  const overall = figures && figures.n ? " " + fill(gettext("Overall accuracy %(share)s on %(n)s items."), { share: pct(figures.overall), n: figures.n }) : "";
  const sure = await ask(kind === "accept"
    ? { title: fill(gettext("Accept batch %(batch)s?"), { batch: batch.number }), confirm: gettext("Accept batch"),
      text: gettext("Its labels become final.") + overall + (body.override_reason.trim() ? " " + gettext("The acceptance is flagged as an override.") : "") }
    : { title: fill(gettext("Reject batch %(batch)s?"), { batch: batch.number }), confirm: gettext("Reject batch"), danger: true,
      text: fill(gettext("It goes back to the annotators for round %(round)s, with your reason."), { round: batch.round + 1 }) + overall });
  if (sure === null) return;
  try {
    // After the labels given before it.
    await send(() => api(`/api/v1/batches/${batchId}/${kind}/`, { method: "POST", body }));
    $("reason").value = $("override").value = "";
    await load();
    const done = kind === "accept" ? gettext("Batch accepted.") : fill(gettext("Batch rejected; it goes back to annotation (round %(round)s)."), { round: batch.round });
    say(notice, done, "ok");
    say(decideNotice, done, "ok");
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    if (error.code === "below_threshold") $("override-box").hidden = false;
    say(decideNotice, error.body.detail, "error");  // next to the buttons
    say(notice, error.body.detail, "error");
  }
}

async function loadHistory() {
  const events = await apiAll(`/api/v1/batches/${batchId}/events/?limit=500`);
  $("history").replaceChildren(...events.map((e) => el("tr", {},
    el("td", {}, dateTime(e.created_at)), el("td", {}, e.round ?? ""), el("td", {}, e.kind_text),
    el("td", {}, ...(e.from_state ? [e.from_state_text, " → ", e.to_state_text] : [e.to_state_text])), el("td", {}, e.actor || ""),
    el("td", { class: "prewrap" }, e.reason_text))));
}

// The batch and its sample; the keys wait until the sample shows.
async function showSample() {
  batch = await api(`/api/v1/batches/${batchId}/`);
  $("batch-state").textContent = fill(gettext("State: %(state)s"), { state: batch.state_text }) + " · " +
    fill(gettext("round %(round)s"), batch) + " · " + fill(gettext("guidelines v%(version)s"), { version: batch.settings_version }) +
    (batch.accepted_below_threshold ? " · " + gettext("accepted below threshold") : "");
  $("start").hidden = !(takesQC && batch.state === "handed_in");
  try {
    review = await api(`/api/v1/batches/${batchId}/qc_sample/`);
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 404) throw error;
    review = null;
  }
  const current = review && review.round === batch.round;
  editable = takesQC && batch.state === "in_review" && Boolean(current);
  if (review) labelsFrom(review.sample);
  $("sample-title").textContent = review ? fill(gettext("Sample of round %(round)s"), review) + (review.decision ? ` (${DECISIONS[review.decision] ?? review.decision})` : "") : gettext("Sample");
  $("blind-note").hidden = !review?.blind;
  $("qc-keys").hidden = !editable;
  $("sample").replaceChildren(...(review ? review.sample.map(sampleEntry) : [el("li", {}, gettext("No sample: the batch has not been handed in."))]));
  $("decide").hidden = !(takesQC && batch.state === "in_review");
}

async function load(before = null) {
  keys.busy(TEXT.loading);
  try {
    if (before) await before();
    await showSample();
  } finally {
    keys.free();
  }
  if (review) await refreshFigures();
  await loadHistory();
}

$("start").addEventListener("click", async () => {
  try {
    await load(() => api(`/api/v1/batches/${batchId}/start_review/`, { method: "POST" }));
    focusEntry(currentEntry());  // keys typed meanwhile were refused (keys.js)
  } catch (error) {
    say(notice, error.body?.detail || gettext("Could not start the review."), "error");
  }
});
$("accept").addEventListener("click", () => decide("accept"));
$("reject").addEventListener("click", () => decide("reject"));
load().catch((error) => say(notice, error.body?.detail || gettext("Could not load the batch."), "error"));
