// Model runs: start one, watch its progress chunk by chunk by polling, cancel it. The modes offered
// are those the server says can score every task of the chosen benchmark; the others are listed with why.
// Self-chat runs are started here too (a worker generates them step by step), and finished ones are paired
// into an arena benchmark.
import { api, ApiError, el, say } from "./api.js";

const $ = (id) => document.getElementById(id);
const notice = $("notice");
const ACTIVE = ["queued", "running"];
let timer = null;

// A cancelled or failed run can still have a chunk being scored: it finishes and is counted.
const moving = (run) => ACTIVE.includes(run.state) || run.progress.chunks_running > 0;

// Items scored so far: those of finished chunks, and while the run is active those of the chunks being scored.
const scored = (run) => run.progress.items_done + (ACTIVE.includes(run.state) ? run.progress.items_scoring || 0 : 0);

function progressText(run) {
  const p = run.progress;
  if (run.writes === "dialogues") {
    // A self-chat run's chunks are its steps: one utterance more for every dialogue.
    if (run.state === "finished") return `${p.items_done} dialogues written`;
    if (ACTIVE.includes(run.state)) {
      return run.state === "queued" ? `waiting for a worker · ${p.items_total} seeds`
        : `step ${p.chunks_done} of ${p.chunks_total} · ${p.items_total} dialogues`;
    }
    return `no dialogues written (stopped at step ${p.chunks_done} of ${p.chunks_total})`;
  }
  if (run.writes === "classifier") {
    return `${p.items_done} / ${p.items_total} examples trained · chunk ${p.chunks_done} of ${p.chunks_total}`;
  }
  if (ACTIVE.includes(run.state) || run.state === "finished") {
    return `${scored(run)} / ${p.items_total} items scored · chunk ${p.chunks_done} of ${p.chunks_total}`;
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
  const steps = run.writes === "dialogues";
  const bar = steps ? { max: p.chunks_total || 1, value: run.state === "finished" ? p.chunks_total || 1 : p.chunks_done }
    : { max: p.items_total || 1, value: scored(run) };
  return el("tr", { dataset: { run: run.id, state: run.state, mode: run.mode } },
    el("td", {}, `#${run.id}`), el("td", {}, run.model), el("td", {}, run.benchmark), el("td", {}, run.mode),
    el("td", { class: "study" }, study(run)),
    el("td", { class: `state ${run.state}` }, run.state, run.reason && run.state !== "finished" ? ` (${run.reason})` : ""),
    el("td", { class: "run-progress" },
      el("progress", { ...bar, "aria-label": `Run ${run.id} progress` }),
      " ", el("span", { class: "scored" }, progressText(run))),
    el("td", {}, active ? el("button", { type: "button", class: "danger", onclick: () => cancel(run.id) }, "Cancel")
      : run.state === "finished" ? el("a", { href: `/reports/${run.benchmark}/` }, "Report") : ""));
}

// The state each self-chat run was last seen in: one that has just finished joins the runs to pair.
const selfchatStates = new Map();
async function refresh() {
  clearTimeout(timer);
  const runs = await api("/api/v1/runs/?limit=20");
  $("runs").replaceChildren(...runs.results.map(row));
  const finished = runs.results.filter((run) => run.writes === "dialogues" && run.state === "finished"
    && selfchatStates.get(run.id) !== "finished");
  for (const run of runs.results.filter((r) => r.writes === "dialogues")) selfchatStates.set(run.id, run.state);
  if (finished.length) await loadPairRuns();
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

// The studies the chosen mode can follow (the registry lives on the server: studies/).
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
      m.reasons.length > 1 ? ` (and ${m.reasons.length - 1} more task${m.reasons.length > 2 ? "s" : ""})` : "",
      m.writes === "dialogues" ? [" · ", el("a", { href: "#selfchat-title" }, "Start a self-chat run")] : ""))) : "");
  $("start").disabled = !offered.length;
  if (!offered.length) say(notice, `No mode can score every task of ${benchmark}.`, "warn");
}

// `region`: where the refusal is shown, the page's notice unless the form has its own.
function refused(error, region = notice) {
  if (!(error instanceof ApiError)) throw error;
  // Field errors come as {"code": "invalid", "detail": ..., "errors": {field: [messages]}}.
  const fields = Object.entries(error.body.errors || {}).map(([k, v]) => `${k}: ${v}`).join("; ");
  const detail = fields || error.body.detail || error.message;
  say(region, `Refused: ${detail}${error.body.code && !fields ? ` [${error.body.code}]` : ""}`, "error");
}

$("start-run").addEventListener("submit", async (event) => {
  event.preventDefault();
  const limit = $("limit").value;
  const chunkSize = $("chunk-size").value;
  const body = { model: $("model").value, benchmark: $("benchmark").value, mode: $("mode").value,
    limit: limit ? Number(limit) : null };
  if (chunkSize) body.chunk_size = Number(chunkSize);
  if ($("preset").value) body.settings = { preset: $("preset").value };
  if ($("position-policy").value) body.position_policy = $("position-policy").value;
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
// Self-chat: the form's settings, numbers as numbers; an empty one is left out (the preset's or ours).
$("start-selfchat")?.addEventListener("submit", async (event) => {
  event.preventDefault();
  const form = new FormData(event.target);
  const body = { model: form.get("model"), seeds: form.get("seeds"), preset: form.get("preset"),
    seed: Number(form.get("seed")), loop_similarity: form.get("loop_similarity"),
    loop_threshold: Number(form.get("loop_threshold")), batch_size: Number(form.get("batch_size")) };
  for (const name of ["limit", "utterances", "max_new_tokens"]) {
    if (form.get(name) !== "") body[name] = Number(form.get(name));
  }
  for (const name of ["decoding", "reply_cut"]) if (form.get(name)) body[name] = form.get(name);
  try {
    const run = await api("/api/v1/runs/selfchat/", { method: "POST", body });
    say($("selfchat-notice"), `Self-chat run ${run.id} queued: ${run.progress.items_total} seeds continued to `
      + `${run.settings.utterances} utterances each, into benchmark ${run.benchmark}. Its steps show in Runs below.`, "ok");
  } catch (error) {
    refused(error, $("selfchat-notice"));
  }
  await refresh();
});

// Arena pairs: finished self-chat runs to pick from, and who meets whom among the systems picked.
const picked = () => [...document.querySelectorAll("#pair-runs input:checked")].map((box) => Number(box.value));
let pairRuns = [];
async function loadPairRuns() {
  const runs = await api("/api/v1/runs/?mode=selfchat&state=finished&limit=100");
  const chosen = new Set(picked());
  pairRuns = runs.results;
  $("pair-runs").replaceChildren(...(pairRuns.length ? pairRuns.map((run) => {
    const seeds = run.selection.seeds_benchmark || run.selection.seeds || "?";
    return el("label", { class: "pick" }, el("input", { type: "checkbox", name: "runs", value: String(run.id),
      checked: chosen.has(run.id), onchange: showReferences }),
    ` #${run.id} ${run.model} · ${run.progress.items_done} dialogues of ${run.settings.utterances} utterances · seeds ${seeds}`);
  }) : [el("p", { class: "muted" }, "None yet: start a self-chat run above; it is listed here once it has finished.")]));
  showReferences();
}
function showReferences() {
  const select = $("pairs-reference");
  const previous = select.value;
  const runs = pairRuns.filter((run) => picked().includes(run.id));
  select.replaceChildren(el("option", { value: "" }, "every pair of systems"),
    $("pairs-ground-truth").value ? el("option", { value: "human" }, "human against each run") : "",
    ...runs.map((run) => el("option", { value: String(run.id) }, `run #${run.id} against each other`)));
  if ([...select.options].some((option) => option.value === previous)) select.value = previous;
}
$("pairs-ground-truth").addEventListener("change", showReferences);

const canCreateCampaigns = $("runs-page").dataset.canCreateCampaigns === "true";
function built(result) {
  const slug = encodeURIComponent(result.benchmark);
  const campaign = canCreateCampaigns
    ? el("a", { href: `/manage/campaigns/new/?benchmark=${slug}&preset=botchat-arena`, id: "pairs-campaign" },
      "Create a campaign on it (BotChat arena preset)")
    : el("span", { class: "muted" }, "A manager can create a campaign on it with the BotChat arena preset.");
  const box = $("pairs-result");
  box.className = "notice ok";
  box.replaceChildren(
    el("p", {}, "Benchmark ", el("strong", {}, result.benchmark), ` built: ${result.items} pairs (${result.description}).`),
    el("ul", { class: "next" },
      el("li", {}, el("a", { href: `/reports/${slug}/`, id: "pairs-report" }, `Open ${result.benchmark}`), " (its report)"),
      el("li", {}, campaign),
      el("li", {}, el("a", { href: `/runs/?benchmark=${slug}&mode=pairwise#start-title`, id: "pairs-judge" },
        "Start a pairwise judge run on it"))));
  box.hidden = false;
}

$("make-pairs").addEventListener("submit", async (event) => {
  event.preventDefault();
  const form = new FormData(event.target);
  const body = { runs: picked(), ground_truth: form.get("ground_truth"), reference: form.get("reference"),
    both_orders: form.get("orders") === "both", seed: Number(form.get("seed")),
    benchmark_slug: form.get("benchmark_slug"),
    min_source_utterances: form.get("min_source_utterances") === "" ? null : Number(form.get("min_source_utterances")) };
  if (!body.runs.length) {
    say($("pairs-result"), "Refused: pick at least one finished self-chat run.", "error");
    return;
  }
  try {
    built(await api("/api/v1/runs/pairs/", { method: "POST", body }));
  } catch (error) {
    refused(error, $("pairs-result"));
  }
});

$("mode").addEventListener("change", showPresets);
$("benchmark").addEventListener("change", () => { say(notice, ""); loadModes().catch((e) => say(notice, e.message, "error")); });

// Enabled only once the handler above is attached and the modes are known: an early click must not
// submit the bare form.
// A link may name the benchmark and the mode of the run to start (`?benchmark=SLUG&mode=pairwise`).
const asks = new URLSearchParams(window.location.search);
if ([...$("benchmark").options].some((option) => option.value === asks.get("benchmark"))) {
  $("benchmark").value = asks.get("benchmark");
}
loadModes().then(() => {
  if ([...$("mode").options].some((option) => option.value === asks.get("mode"))) {
    $("mode").value = asks.get("mode");
    showPresets();
  }
}).catch((error) => say(notice, error.message, "error"));
refresh().catch(retry);
loadPairRuns().catch((error) => say(notice, error.message, "error"));
