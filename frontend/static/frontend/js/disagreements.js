// The expert's queue: each open disagreement with every annotator's whole answer (by the options' labels,
// with their reasons and comments; no names where the panel votes blind), and the decision. By keyboard as on
// the QC page: the key on an option's chip chooses it on the item you are on, Enter decides that item and the
// next undecided one comes at once. A decision is bound to its item when it is made, sent once (its form is
// locked until the server has answered) and after the decisions made before it; the other items stay as they
// are on screen while it is on its way. A key with no item to take it (the queue loading, every item on screen
// decided while decisions are on their way) is refused, with the rest of its burst (keys.js).
import { api, composing, config, el, inOrder, say } from "./api.js";
import { renderItem } from "./dialogue.js";
import { showFlags } from "./flags.js";
import { choiceIndex, choiceLabel, choicesOf, describeAnswers } from "./form.js";
import { fill, gettext } from "./i18n.js";
import { keyGate } from "./keys.js";

// Every string the keys and the decisions on their way show.
const TEXT = {
  choose: gettext("Choose a decision first."),
  saving: gettext("saving…"),
  decided: (item, label) => fill(gettext("Item %(item)s decided: %(label)s."), { item, label }),
  decidedHere: (label) => fill(gettext("Decided: %(label)s"), { label }),
  notSaved: (item, detail) => fill(gettext("The decision on item %(item)s was not saved: %(detail)s"), { item, detail }),
  noAnswer: gettext("the server did not answer."),
  noneOpen: gettext("No open disagreements."),
  loading: gettext("the queue is loading"),
  noneLeft: gettext("every item on screen is decided and the decisions are being saved"),
};
// How a disagreement was settled when no one decided it.
const METHODS = { majority: gettext("majority vote"), extra_annotator: gettext("one more annotator"), adjudicated: gettext("an expert decided") };

const root = document.getElementById("queue");
const campaignId = root.dataset.campaign;
const canResolve = Boolean(root.dataset.resolve);
const blind = Boolean(root.dataset.blind);
const forms = config("task-forms");
const notice = document.getElementById("notice");
const send = inOrder();
const keys = keyGate(notice);
let held = false;  // the keys wait for the decisions on their way: no item on screen is left to take them
const cardOf = new Map();  // disagreement id -> {d, choices} of its card
const labelOf = (choices, value) => choices.find((c) => JSON.stringify(c.value) === JSON.stringify(value))?.label ?? JSON.stringify(value);

function answerList(form, item, given) {
  // A gold panel's voters get no one's answers from the server: they decide without seeing the votes.
  if (blind && !given.answers.length) return el("p", { class: "muted blind" }, gettext("The panel votes blind: the answers are not shown."));
  const primaryChoices = choicesOf(form.questions.find((q) => q.key === form.primary), item);
  return el("ul", { class: "labels" }, given.answers.map((a) => {
    const parts = describeAnswers(form, item, a.answers);
    const main = parts.find((p) => p.primary);
    const rest = parts.filter((p) => !p.primary);
    // A label changed once the other answers were in: the change did not settle the item; its first value is shown.
    const amended = a.amended_after_peer && el("em", { class: "amended" },
      " " + fill(gettext("(changed after the other answer was in; first answer: %(first)s)"), { first: labelOf(primaryChoices, a.first_value) }));
    return el("li", {}, el("span", { class: "who" }, a.annotator), ": ", el("strong", {}, main ? main.text : "—"), amended || null,
      rest.length ? el("ul", { class: "answer-details" }, rest.map((p) => el("li", {}, `${p.label}: `, el("span", { class: "prewrap" }, p.text)))) : null);
  }));
}

function flagList(flags) {
  if (!flags.length) return null;
  return [el("h3", {}, gettext("Comments from annotators")), el("ul", { class: "flags" }, flags.map((f) =>
    el("li", {}, el("span", { class: "who" }, f.author || gettext("An annotator")), ", " + fill(gettext("round %(round)s"), f) + ": ", el("span", { class: "prewrap" }, f.comment))))];
}

async function entry(d) {
  const [item, given] = await Promise.all([api(`/api/v1/items/${d.item}/`), api(`/api/v1/disagreements/${d.id}/answers/`)]);
  const form = forms[item.task];
  const primary = form.questions.find((q) => q.key === form.primary);
  const choices = choicesOf(primary, item);
  const name = `decide-${d.id}`;
  const reason = el("textarea", { id: `${name}-reason`, rows: 2 });
  cardOf.set(d.id, { d, choices });
  const decision = canResolve && el("form", { class: "decision",
    onsubmit: (e) => { e.preventDefault(); resolve(e.target.closest(".disagreement")); } },
    el("fieldset", { class: "choices" }, el("legend", {}, gettext("Decision")), choices.map((c, i) =>
      choiceLabel(c, el("input", { type: "radio", name, id: `${name}-${i}`, value: i, required: true })))),
    el("label", { for: `${name}-reason` }, gettext("Reason")), reason,
    el("button", { type: "submit", class: "primary" }, gettext("Decide")), el("span", { class: "entry-status", "aria-live": "polite" }));
  return el("li", { class: "card disagreement", dataset: { id: d.id } },
    el("h2", {}, fill(gettext("Item %(item)s"), { item: d.external_id }), el("small", { class: "muted" }, " " +
      fill(gettext("batch %(batch)s, round %(round)s, guidelines v%(version)s"), { batch: d.batch, round: d.round, version: d.guideline_version }))),
    renderItem(item), el("h3", {}, gettext("Answers")), answerList(form, item, given), flagList(given.flags), decision);
}

const cards = () => [...document.querySelectorAll("#disagreements .disagreement")];
const undecided = (card) => Boolean(card.querySelector("form.decision")) && !card.classList.contains("pending");

function focusCard(card) {
  if (!card) return;
  (card.querySelector("input:checked") || card.querySelector("input[type=radio]")).focus();
  card.scrollIntoView({ block: "nearest" });
}

// The card's decision, bound to its item now: the card is locked and shows it is being saved, the next undecided
// item comes at once, and the decision goes after those made before it. A refused one is said, its card open again.
function resolve(card) {
  if (!undecided(card)) return;  // a second click or Enter sends nothing
  const { d, choices } = cardOf.get(Number(card.dataset.id));
  const formNode = card.querySelector("form.decision");
  const picked = formNode.querySelector("input[type=radio]:checked");
  if (!picked) { say(notice, TEXT.choose, "error"); return; }
  const choice = choices[picked.value];
  const body = { value: choice.value, reason: formNode.querySelector("textarea").value };
  const status = formNode.querySelector(".entry-status");
  card.classList.add("pending");
  formNode.inert = true;
  status.textContent = TEXT.saving;
  const all = cards();
  focusCard(all.slice(all.indexOf(card) + 1).find(undecided) || all.find(undecided));
  send(() => api(`/api/v1/disagreements/${d.id}/resolve/`, { method: "POST", body }))
    .then(() => {
      formNode.replaceWith(el("p", { class: "decided" }, TEXT.decidedHere(choice.label)));
      say(notice, TEXT.decided(d.external_id, choice.label), "ok");
    }, (error) => {
      formNode.inert = false;
      status.textContent = "";
      say(notice, TEXT.notSaved(d.external_id, error.body?.detail || TEXT.noAnswer), "error");
    })
    .finally(() => {
      card.classList.remove("pending");
      if (!send.idle()) return;
      refresh().catch(() => {}).finally(() => {  // the items opened meanwhile show
        if (held) keys.free();
        held = false;
      });
    });
}

// Keys: the chip's key chooses on the item you are on (the focused one, else the first undecided); Enter decides
// the focused item.
document.addEventListener("keydown", (event) => {
  if (composing(event) || !canResolve || keys.refused(event) || event.ctrlKey || event.metaKey || event.altKey) return;
  const target = event.target;
  if (["TEXTAREA", "BUTTON", "A", "SELECT"].includes(target.tagName) || (target.tagName === "INPUT" && target.type !== "radio")) return;
  const all = cards();
  const here = all.find((card) => card.contains(target));
  if (!all.some(undecided) && !send.idle()) {  // nothing to take the key until the decisions are saved
    if (!held) keys.busy(TEXT.noneLeft);
    held = true;
    keys.refused(event);
    return;
  }
  if (event.key === "Enter") {
    if (!here) return;
    event.preventDefault();
    resolve(here);
    return;
  }
  const card = here && undecided(here) ? here : all.find(undecided);
  if (!card) return;
  const index = choiceIndex(cardOf.get(Number(card.dataset.id)).choices, event.key.toLowerCase());
  if (index < 0) return;
  event.preventDefault();
  const input = card.querySelectorAll("form.decision input[type=radio]")[index];
  input.checked = true;
  input.focus();
});

async function settledRows(done) {
  // Decisions by their labels: the item's form gives the option labels.
  return Promise.all(done.results.map(async (d) => {
    let shown = JSON.stringify(d.resolved_value);
    try {
      const item = await api(`/api/v1/items/${d.item}/`);
      const form = forms[item.task];
      shown = labelOf(choicesOf(form.questions.find((q) => q.key === form.primary), item), d.resolved_value);
    } catch { /* the raw value is still right */ }
    return el("tr", {}, el("td", {}, d.external_id), el("td", {}, shown), el("td", {}, d.resolved_by || (METHODS[d.method] ?? d.method)),
      el("td", {}, d.reason));
  }));
}

async function showSettled() {
  const done = await api(`/api/v1/disagreements/?campaign=${campaignId}&status=resolved&limit=50`);
  document.getElementById("settled").replaceChildren(...await settledRows(done));
  await showFlags(campaignId, document.getElementById("flags-card"), document.getElementById("flags"));
}

async function load() {
  keys.busy(TEXT.loading);
  try {
    const open = await api(`/api/v1/disagreements/?campaign=${campaignId}&status=open&limit=50`);
    const list = document.getElementById("disagreements");
    list.replaceChildren(...await Promise.all(open.results.map(entry)));
    if (!open.results.length) list.replaceChildren(el("li", { class: "card" }, TEXT.noneOpen));
  } finally {
    keys.free();
  }
  await showSettled();
}

// Once no decision is on its way: the settled table again, and disagreements opened meanwhile added at the end
// (the cards on screen stay where they are).
async function refresh() {
  const open = await api(`/api/v1/disagreements/?campaign=${campaignId}&status=open&limit=50`);
  const fresh = open.results.filter((d) => !cardOf.has(d.id));
  if (fresh.length) {
    const list = document.getElementById("disagreements");
    list.querySelectorAll("li:not(.disagreement)").forEach((placeholder) => placeholder.remove());
    list.append(...await Promise.all(fresh.map(entry)));
  }
  await showSettled();
}

load().catch((error) => say(notice, error.body?.detail || gettext("Could not load the queue."), "error"));
