// Model runs: start one, watch its progress chunk by chunk by polling, cancel it. The modes offered
// are those the server says can score every task of the chosen benchmark; the others are listed with why.
import { api, ApiError, el, say } from "./api.js";

const $ = (id) => document.getElementById(id);
const notice = $("notice");
const ACTIVE = ["queued", "running"];
let timer = null;

// A cancelled or failed run can still have a chunk being scored: it finishes and is counted.
const moving = (run) => ACTIVE.includes(run.state) || run.progress.chunks_running > 0;

function progressText(run) {
  const p = run.progress;
  if (run.mode === "train") {
    return `${p.items_done} / ${p.items_total} examples trained · chunk ${p.chunks_done} of ${p.chunks_total}`;
  }
  if (ACTIVE.includes(run.state) || run.state === "finished") {
    return `${p.items_done} / ${p.items_total} items scored · chunk ${p.chunks_done} of ${p.chunks_total}`;
  }
  const still = p.chunks_running ? `; ${p.chunks_running} chunk still being scored is kept` : "";
  return `${p.items_done} of ${p.items_total} items scored before it stopped (${p.chunks_done} of ${p.chunks_total} chunks${still})`;
}

// The study a run follows and where it differs from the published protocol; a list the reader opened
// stays open when the table is refreshed.
const opened = new Set();
function study(run) {
  const p = run.protocol;
  if (!p) return "";
  const differences = p.differences.map((d) => el("li", {},
    el("strong", {}, d.setting), `: published ${d.published}; here ${d.ours} (${d.why})`));
  return el("details", { class: "protocol", open: opened.has(run.id),
    ontoggle: (event) => { if (event.target.open) opened.add(run.id); else opened.delete(run.id); } },
    el("summary", {}, `${p.title}: ${p.differences.length} difference${p.differences.length === 1 ? "" : "s"}`),
    el("p", { class: "muted" }, `Preset ${p.preset}; ${p.source}`), el("ul", {}, ...differences));
}

function row(run) {
  const p = run.progress;
  const active = ACTIVE.includes(run.state);
  return el("tr", { dataset: { run: run.id, state: run.state } },
    el("td", {}, `#${run.id}`), el("td", {}, run.model), el("td", {}, run.benchmark), el("td", {}, run.mode),
    el("td", { class: "study" }, study(run)),
    el("td", { class: `state ${run.state}` }, run.state, run.reason && run.state !== "finished" ? ` (${run.reason})` : ""),
    el("td", { class: "run-progress" },
      el("progress", { max: p.items_total || 1, value: p.items_done, "aria-label": `Run ${run.id} progress` }),
      " ", el("span", { class: "scored" }, progressText(run))),
    el("td", {}, active ? el("button", { type: "button", class: "danger", onclick: () => cancel(run.id) }, "Cancel")
      : run.state === "finished" ? el("a", { href: `/reports/${run.benchmark}/` }, "Report") : ""));
}

async function refresh() {
  clearTimeout(timer);
  const runs = await api("/api/v1/runs/?limit=20");
  $("runs").replaceChildren(...runs.results.map(row));
  if (runs.results.some(moving)) timer = setTimeout(() => refresh().catch(retry), 1000);
}
const retry = () => { timer = setTimeout(() => refresh().catch(retry), 3000); };

async function cancel(id) {
  try {
    await api(`/api/v1/runs/${id}/cancel/`, { method: "POST", body: { reason: "cancelled from the runs page" } });
    say(notice, `Run ${id} cancelled; what it had scored is kept.`, "ok");
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    say(notice, error.body.detail || error.message, "error");
  }
  await refresh();
}

// The studies the chosen mode can follow (the registry lives on the server: modeleval.studies).
let presets = {};
function showPresets() {
  const select = $("preset");
  const previous = select.value;
  const offered = presets[$("mode").value] || [];
  select.replaceChildren(el("option", { value: "" }, "none"),
    ...offered.map((p) => el("option", { value: p.preset }, p.title)));
  if (offered.some((p) => p.preset === previous)) select.value = previous;
}

// The modes the benchmark's tasks support (the rule lives on the server), and why the others are missing.
let asked = 0;
async function loadModes() {
  const benchmark = $("benchmark").value;
  const mine = ++asked;
  const select = $("mode");
  const missing = $("modes-missing");
  if (!benchmark) return;
  const modes = await api(`/api/v1/runs/modes/?benchmark=${encodeURIComponent(benchmark)}`);
  if (mine !== asked) return; // the benchmark changed while this answer was on its way
  const previous = select.value;
  const offered = modes.filter((m) => m.available);
  select.replaceChildren(...offered.map((m) => el("option", { value: m.mode, title: m.label }, m.mode.replace("_", " "))));
  if (offered.some((m) => m.mode === previous)) select.value = previous;
  presets = Object.fromEntries(offered.map((m) => [m.mode, m.presets || []]));
  showPresets();
  const others = modes.filter((m) => !m.available);
  missing.replaceChildren(
    others.length ? el("p", {}, `Not offered for ${benchmark}:`) : "",
    others.length ? el("ul", { class: "reasons" }, ...others.map((m) => el("li", { dataset: { mode: m.mode } },
      el("strong", {}, m.mode.replace("_", " ")), `: ${m.reasons[0]}`,
      m.reasons.length > 1 ? ` (and ${m.reasons.length - 1} more task${m.reasons.length > 2 ? "s" : ""})` : ""))) : "");
  $("start").disabled = !offered.length;
  if (!offered.length) say(notice, `No mode can score every task of ${benchmark}.`, "warn");
}

function refused(error) {
  if (!(error instanceof ApiError)) throw error;
  // Field errors come as {"code": "invalid", "detail": ..., "errors": {field: [messages]}}.
  const fields = Object.entries(error.body.errors || {}).map(([k, v]) => `${k}: ${v}`).join("; ");
  const detail = fields || error.body.detail || error.message;
  say(notice, `Refused: ${detail}`, "error");
}

$("start-run").addEventListener("submit", async (event) => {
  event.preventDefault();
  const limit = $("limit").value;
  const chunkSize = $("chunk-size").value;
  const body = { model: $("model").value, benchmark: $("benchmark").value, mode: $("mode").value,
    limit: limit ? Number(limit) : null };
  if (chunkSize) body.chunk_size = Number(chunkSize);
  if ($("preset").value) body.settings = { preset: $("preset").value };
  try {
    const run = await api("/api/v1/runs/", { method: "POST", body });
    await refresh();
    say(notice, `Run ${run.id} started on ${run.progress.items_total} items in ${run.progress.chunks_total} chunks.`, "ok");
    return;
  } catch (error) {
    refused(error);
  }
  await refresh();
});
// Training: the recipe's fields as the run's settings; numbers stay numbers, an empty one is left out.
$("start-training").addEventListener("submit", async (event) => {
  event.preventDefault();
  const form = new FormData(event.target);
  const settings = { include_checked: $("train-include-checked").checked };
  for (const name of ["learning_rate", "batch_size", "epochs", "max_grad_norm", "max_length", "validation", "test",
    "steps_per_chunk"]) {
    if (form.get(name) !== "") settings[name] = Number(form.get(name));
  }
  if (form.get("holdout_domain")) settings.holdout_domain = form.get("holdout_domain");
  const body = { model: form.get("model"), benchmark: form.get("benchmark"), seed: Number(form.get("seed")), settings };
  try {
    const run = await api("/api/v1/runs/train/", { method: "POST", body });
    say(notice, `Training run ${run.id} started: ${run.progress.items_total} examples in ${run.progress.chunks_total} chunks.`, "ok");
  } catch (error) {
    refused(error);
  }
  await refresh();
});
$("mode").addEventListener("change", showPresets);
$("benchmark").addEventListener("change", () => { say(notice, ""); loadModes().catch((e) => say(notice, e.message, "error")); });

// Enabled only once the handler above is attached and the modes are known: an early click must not
// submit the bare form.
loadModes().catch((error) => say(notice, error.message, "error"));
refresh().catch(retry);
