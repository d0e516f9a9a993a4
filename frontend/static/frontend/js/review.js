// QC review of a batch: the sample with the QC's own label per item, live accuracy (computed by the
// server with the acceptance rule itself), the decision, and the batch's history.
import { api, ApiError, el, pct, say } from "./api.js";
import { renderItem } from "./dialogue.js";
import { choicesOf } from "./form.js";

const root = document.getElementById("review");
const batchId = root.dataset.batch;
const isQC = Boolean(root.dataset.qc);
const $ = (id) => document.getElementById(id);
const notice = $("notice");
let batch = null;
let review = null;

const label = (value) => (value === null || value === undefined ? "—" : JSON.stringify(value));

function sampleEntry(entry, editable) {
  const { item } = entry;
  const primary = item.form.questions.find((q) => q.key === item.form.primary);
  const name = `qc-${entry.batch_item}`;
  const choices = el("fieldset", { class: "choices" }, el("legend", {}, "Your label"),
    choicesOf(primary, item).map((choice, i) => {
      const input = el("input", { type: "radio", name, id: `${name}-${i}`, disabled: !editable,
        checked: JSON.stringify(choice.value) === JSON.stringify(entry.qc_value),
        onchange: () => qcLabel(entry.batch_item, choice.value) });
      return el("label", { for: `${name}-${i}`, class: "choice" }, input, choice.label);
    }));
  const agree = entry.qc_value === null ? "" : JSON.stringify(entry.qc_value) === JSON.stringify(entry.annotator_value) ? "agrees" : "differs";
  return el("li", { class: `sample-item ${agree}`, dataset: { batchItem: entry.batch_item } },
    el("h3", {}, `Item ${item.external_id}`),
    el("details", {}, el("summary", {}, `Dialogue (${item.dialogue.length} turns)`), renderItem(item)),
    el("p", {}, "Final label: ", el("strong", { class: "final" }, label(entry.annotator_value))),
    choices);
}

function showFigures(f) {
  const pass = (ok) => el("span", { class: ok ? "pass" : "fail" }, ok ? "meets" : "below");
  const rows = Object.values(f.per_class || {}).map((c) => el("tr", {},
    el("th", { scope: "row" }, label(c.label)), el("td", {}, `${c.correct}/${c.n}`), el("td", {}, pct(c.accuracy)), el("td", {}, pass(c.passed))));
  $("figures").replaceChildren(
    el("p", { class: "big", id: "overall" }, `Overall ${pct(f.overall)} `, f.n ? pass(f.overall_passed) : ""),
    el("p", { class: "muted" }, `${f.n} of ${f.sample} labelled · thresholds ${pct(f.overall_threshold)} overall, ${pct(f.class_threshold)} per class`),
    el("table", { class: "table" }, el("thead", {}, el("tr", {}, ["Class (QC label)", "Right", "Accuracy", ""].map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, rows)),
    el("p", { class: f.passed ? "pass" : "fail", id: "verdict" }, f.passed ? "The sample passes the rule." : "The sample does not pass the rule."));
  $("override-box").hidden = f.passed;
}

async function refreshFigures() {
  try {
    showFigures(await api(`/batches/${batchId}/review/figures/`));
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    $("figures").replaceChildren(el("p", { class: "muted" }, error.body.detail || "No figures yet."));
  }
}

async function qcLabel(batchItem, value) {
  try {
    review = await api(`/api/v1/batches/${batchId}/qc_label/`, { method: "POST", body: { batch_item: batchItem, value } });
    const entry = review.sample.find((e) => e.batch_item === batchItem);
    document.querySelector(`[data-batch-item="${batchItem}"]`).className =
      `sample-item ${JSON.stringify(entry.qc_value) === JSON.stringify(entry.annotator_value) ? "agrees" : "differs"}`;
    say(notice, "");
    await refreshFigures();
  } catch (error) {
    say(notice, error.body?.detail || "Could not save the label.", "error");
  }
}

async function decide(kind) {
  const body = kind === "accept" ? { reason: $("reason").value, override_reason: $("override").value } : { reason: $("reason").value };
  try {
    await api(`/api/v1/batches/${batchId}/${kind}/`, { method: "POST", body });
    $("reason").value = $("override").value = "";
    await load();
    say(notice, kind === "accept" ? "Batch accepted." : `Batch rejected; it goes back to annotation (round ${batch.round}).`, "ok");
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    if (error.code === "below_threshold") $("override-box").hidden = false;
    say(notice, error.body.detail, "error");
  }
}

async function loadHistory() {
  const events = await api(`/api/v1/batches/${batchId}/events/`);
  $("history").replaceChildren(...events.map((e) => el("tr", {},
    el("td", {}, new Date(e.created_at).toLocaleString()), el("td", {}, e.round ?? ""), el("td", {}, e.kind),
    el("td", {}, e.from_state ? `${e.from_state} → ${e.to_state}` : e.to_state), el("td", {}, e.actor || ""), el("td", {}, e.reason))));
}

async function load() {
  batch = await api(`/api/v1/batches/${batchId}/`);
  $("batch-state").textContent = `State: ${batch.state.replace("_", " ")} · round ${batch.round} · guidelines v${batch.settings_version}` +
    (batch.accepted_below_threshold ? " · accepted below threshold" : "");
  $("start").hidden = !(isQC && batch.state === "handed_in");
  try {
    review = await api(`/api/v1/batches/${batchId}/qc_sample/`);
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 404) throw error;
    review = null;
  }
  const current = review && review.round === batch.round;
  const editable = isQC && batch.state === "in_review";
  $("sample-title").textContent = review ? `Sample of round ${review.round}${review.decision ? ` (${review.decision})` : ""}` : "Sample";
  $("sample").replaceChildren(...(review ? review.sample.map((e) => sampleEntry(e, editable && current)) : [el("li", {}, "No sample: the batch has not been handed in.")]));
  $("decide").hidden = !editable;
  if (review) await refreshFigures();
  await loadHistory();
}

$("start").addEventListener("click", async () => {
  try {
    await api(`/api/v1/batches/${batchId}/start_review/`, { method: "POST" });
    await load();
  } catch (error) {
    say(notice, error.body?.detail || "Could not start the review.", "error");
  }
});
$("accept").addEventListener("click", () => decide("accept"));
$("reject").addEventListener("click", () => decide("reject"));
load().catch((error) => say(notice, error.body?.detail || "Could not load the batch.", "error"));
