// The annotator workspace: lease an item, show it, take the answers, submit, fetch the next one.
// A submission keeps one client_submission_id until the server has answered it, so retries after a
// lost connection can never make a second label. Besides labelling: skip with a reason, flag an item for
// the trainers, change one's last answer until the batch is handed in, hand a finished batch in.
// While the page waits for the server (a label on its way, the next item loading) the form is locked and a key
// pressed meanwhile is refused on the page, with the rest of its burst (keys.js): it was pressed on the item then
// on screen, so it is never used on the item that shows next. The skip and flag dialogs own their keys: Enter or
// Ctrl+Enter there sends the dialog and nothing else. The keys of the form itself are form.js's.
import { api, ApiError, composing, isNetworkError, say } from "./api.js";
import { ask, asking } from "./ask.js";
import { languageOf, renderDialogue, renderFields } from "./dialogue.js";
import { buildForm } from "./form.js";
import { fill, gettext, ngettext } from "./i18n.js";
import { keyGate, ownKeys } from "./keys.js";

const page = document.getElementById("workspace");
const campaignId = page.dataset.campaign;
const $ = (id) => document.getElementById(id);
const notice = $("notice");
const guidelines = $("guidelines");
let lease = null;
let form = null;
let editing = null;  // {annotation, item} while changing one's last answer
let lastProgress = null;
let waiting = null;  // {what, refused} while the page waits for the server
const keys = keyGate(notice);
ownKeys(guidelines);
let countdown = null;

// Every string the keys and the waiting rule show.
const TEXT = {
  loading: gettext("the page is loading an item"),
  loadingLast: gettext("your last answer is loading"),
  saving: (item) => fill(gettext("your answer on item %(item)s is being saved"), { item }),
  savingChange: (item) => fill(gettext("your change on item %(item)s is being saved"), { item }),
  skipping: (item) => fill(gettext("item %(item)s is being skipped"), { item }),
  refusedNote: (n) => (n ? " " + fill(ngettext("%(n)s key pressed while it was being saved was not used.",
    "%(n)s keys pressed while it was being saved were not used.", n), { n }) : ""),
  answerFirst: (names) => fill(gettext("Not saved: answer %(names)s first."), { names: names.map((n) => `“${n}”`).join(", ") }),
};
// Runs `work` while the page waits for the server: the form and the buttons are locked (the answers on screen
// are the ones sent) and keys are refused (keys.js) until it is done; then the form has the focus again, and the
// keys come back once the keyboard has been quiet for a moment if any was refused.
const LOCKED = ["submit", "skip", "flag", "change-last", "change-last-done"];
async function whileWaiting(what, work) {
  waiting = keys.busy(what);
  $("answer-form").inert = true;
  for (const id of LOCKED) $(id).disabled = true;
  try {
    await work(waiting);
  } finally {
    waiting = null;
    $("answer-form").inert = false;
    for (const id of LOCKED) $(id).disabled = false;
    if (form && !$("item").hidden) form.focusFirst();
    keys.free();
  }
}

// After a dialog the keys go to the item's form again, not to the button that opened the dialog.
const backToForm = () => { if (form && !$("item").hidden && !waiting) form.focusFirst(); };

const idKey = (assignmentId) => `hb-submission-${assignmentId}`;
function submissionId(assignmentId) {
  // Kept in sessionStorage so that a reload in the middle of a retry still reuses it.
  let id = sessionStorage.getItem(idKey(assignmentId));
  if (!id) {
    id = crypto.randomUUID();
    sessionStorage.setItem(idKey(assignmentId), id);
  }
  return id;
}

function startCountdown(seconds) {
  clearInterval(countdown);
  const until = Date.now() + seconds * 1000;
  const box = $("countdown");
  const tick = () => {
    const left = Math.max(0, Math.ceil((until - Date.now()) / 1000));
    box.textContent = left ? fill(gettext("Minimum reading time: %(left)s s left"), { left }) : gettext("Minimum reading time reached");
    box.classList.toggle("waiting", left > 0);
    if (!left) clearInterval(countdown);
  };
  tick();
  countdown = setInterval(tick, 250);
}

// Every item has all its labels of this round, and the batch is handed in by hand: the server's ready_to_hand_in.
// Nothing a labeller sees says whether the labels agreed: a batch whose labels are all in reads "complete" (the
// server's state) whether it waits for a decision or went on.
const complete = (p) => Boolean(p && p.ready_to_hand_in);
const handedIn = (p) => (p && p.state === "handed_in" ? " " + fill(gettext("Batch %(batch)s is complete and was handed in to QC."), { batch: p.batch })
  : p && (p.state === "complete" || p.state === "accepted") ? " " + fill(gettext("Batch %(batch)s is complete."), { batch: p.batch }) : "");

function showProgress(progress) {
  lastProgress = { ...lastProgress, ...progress };
  const p = lastProgress;
  const bar = $("progress");
  bar.max = p.total || 1;
  bar.value = p.done;
  $("progress-text").textContent = fill(gettext("Batch %(batch)s, round %(round)s: %(done)s of %(total)s items done"), p) +
    (p.mine !== undefined ? " · " + fill(gettext("%(mine)s labelled by you"), p) : "");
  $("left-for-you").textContent = p.left_for_you === undefined ? "" : fill(gettext("%(left)s left for you"), { left: p.left_for_you });
  $("hand-in").hidden = !complete(p);
  $("hand-in").textContent = fill(gettext("Hand in batch %(batch)s"), p);
}

function render(item, task, formSpec) {
  $("task-name").textContent = task.name;
  $("instructions").textContent = task.instructions || "";
  $("item-id").textContent = fill(gettext("Item %(item)s"), { item: item.external_id });
  $("dialogue").replaceChildren(renderDialogue(item.dialogue));
  $("fields").replaceChildren(renderFields(item.fields, item.meta));
  for (const id of ["dialogue", "fields"]) {
    if (languageOf(item)) $(id).lang = languageOf(item);
    else $(id).removeAttribute("lang");
  }
  form = buildForm(formSpec, item, item.dialogue.length);
  $("answer-form").replaceChildren(form.element);
  $("item").hidden = false;
  $("done").hidden = true;
}

function setEditing(on, externalId = "") {
  $("editing").hidden = !on;
  $("editing-item").textContent = externalId;
  $("cancel-edit").hidden = !on;
  $("item-tools").hidden = on;
  $("countdown").hidden = on;
  $("submit").firstChild.textContent = (on ? gettext("Save change") : gettext("Submit")) + " ";
}

function show(data) {
  lease = data;
  editing = null;
  setEditing(false);
  render(data.item, data.task, data.form);
  // Server-rendered from Markdown with raw HTML escaped (annotation/guidelines.py).
  $("guidelines-text").innerHTML = data.guidelines.html || `<p>${gettext("No guidelines for this campaign.")}</p>`;
  $("guidelines-version").textContent = fill(gettext("Version %(version)s"), { version: data.guidelines.version });
  const feedback = data.qc_feedback;
  $("qc-feedback").hidden = !feedback;
  if (feedback) {
    $("qc-feedback-round").textContent = feedback.round;
    $("qc-feedback-reason").textContent = feedback.reason;
  }
  showProgress(data.progress);
  startCountdown(data.seconds_until_submit_allowed);
  history.replaceState(null, "", `/assignments/${data.id}/`);
  say(notice, "");
}

function noWork(detail) {
  lease = null;
  editing = null;
  clearInterval(countdown);
  $("item").hidden = true;
  $("done").hidden = false;
  $("done-text").textContent = detail + handedIn(lastProgress);
  $("hand-in").hidden = !complete(lastProgress);
  history.replaceState(null, "", `/campaigns/${campaignId}/annotate/`);
  $("done").focus();
}

// withProgress false: the page already shows the progress that the submission just answered with, and
// leasing changes none of its counts (an item left for you counts the same free or leased to you), so the
// next item comes without it; the progress is asked for only when the item is from another batch.
async function next(withProgress = true) {
  const query = withProgress ? "" : "?progress=0";
  const data = await api(`/api/v1/campaigns/${campaignId}/next/${query}`, { method: "POST" });
  let leased = data.assignment;
  if (leased && !leased.progress && leased.batch_id !== lastProgress?.batch_id) {
    leased = await api(`/api/v1/assignments/${leased.id}/`);
  }
  if (leased) show(leased);
  else noWork(data.detail);
}

async function submit() {
  if (waiting || (!lease && !editing)) return;  // one submission at a time: Enter held down sends once
  const missing = form.unanswered();
  if (missing.length) { say(notice, TEXT.answerFirst(missing), "error"); return; }
  if (editing) return saveChange();
  const { id: assignmentId, item } = lease;
  const body = { client_submission_id: submissionId(assignmentId), item: item.id, answers: form.answers() };
  form.showErrors();
  await whileWaiting(TEXT.saving(item.external_id), async (wait) => {
    try {
      for (let attempt = 0; ; attempt++) {
        try {
          say(notice, attempt ? fill(gettext("Connection lost; retrying (attempt %(n)s)…"), { n: attempt + 1 }) : gettext("Saving…"), attempt ? "warn" : "info");
          const result = await api(`/api/v1/assignments/${assignmentId}/submit/`, { method: "POST", body });
          sessionStorage.removeItem(idKey(assignmentId));
          showProgress(result.progress);
          await next(false);
          say(notice, (result.replayed ? gettext("Saved (your earlier attempt had arrived).") : gettext("Saved.")) + handedIn(result.progress) +
            TEXT.refusedNote(wait.refused), "ok");
          return;
        } catch (error) {
          if (!isNetworkError(error)) throw error;
          // Same id, same answers: the server answers a repeat with the first result.
          await new Promise((resolve) => setTimeout(resolve, Math.min(8000, 500 * 2 ** attempt)));
        }
      }
    } catch (error) {
      await refused(error);
    }
  });
}

async function refused(error) {
  if (!(error instanceof ApiError)) throw error;
  const body = error.body;
  if (error.code === "too_early") {
    say(notice, fill(gettext("Too early: %(detail)s (%(left)s s left)"), { detail: body.detail, left: body.seconds_left }), "error");
    startCountdown(body.seconds_left);
  } else if (error.code === "invalid_answers") {
    form.showErrors(body.errors);
    say(notice, body.detail, "error");
  } else if (["already_submitted", "lease_closed", "lease_expired"].includes(error.code)) {
    // Another tab or window got there first, or the lease ran out: say so once the next item is shown
    // (showing it clears the notice).
    const done = error.code === "already_submitted"
      ? gettext("This item was already submitted, in another tab or window; the answers given here were not saved.")
      : error.code === "lease_closed" ? `${body.detail} ${gettext("The answers given here were not saved.")}` : body.detail;
    await next();
    say(notice, `${done} ${gettext("Now showing your next item.")}`, "warn");
  } else {
    say(notice, body.detail || fill(gettext("Refused (%(status)s)."), { status: error.status }), "error");
  }
}

async function skip() {
  if (!lease || waiting) return;
  const reason = await ask({ title: gettext("Skip this item"), label: gettext("Why do you skip it? (the trainers read this)"),
    text: gettext("The item goes to someone else and does not come back to you."), required: true, confirm: gettext("Skip item") });
  if (reason === null) { backToForm(); return; }
  const skipped = lease;
  await whileWaiting(TEXT.skipping(skipped.item.external_id), async () => {
    try {
      await api(`/api/v1/assignments/${skipped.id}/release/`, { method: "POST", body: { reason } });
      sessionStorage.removeItem(idKey(skipped.id));
      await next();
      say(notice, fill(gettext("Skipped item %(item)s."), { item: skipped.item.external_id }), "ok");
    } catch (error) {
      say(notice, error.body?.detail || gettext("Could not skip the item."), "error");
    }
  });
}

async function flag() {
  if (!lease || waiting) return;
  const comment = await ask({ title: fill(gettext("Flag item %(item)s"), { item: lease.item.external_id }), required: true,
    confirm: gettext("Send flag"), label: gettext("What is wrong with it? (for the trainers)") });
  backToForm();
  if (comment === null) return;
  try {
    await api(`/api/v1/assignments/${lease.id}/flag/`, { method: "POST", body: { comment } });
    say(notice, gettext("Flag sent to the trainers. You can still label the item."), "ok");
  } catch (error) {
    say(notice, error.body?.detail || gettext("Could not send the flag."), "error");
  }
}

async function changeLast() {
  if (waiting) return;
  await whileWaiting(TEXT.loadingLast, async () => {
    try {
      const last = await api(`/api/v1/campaigns/${campaignId}/last_answer/`);
      if (!last.annotation) { say(notice, last.detail, "warn"); return; }
      editing = last;
      clearInterval(countdown);
      render(last.item, last.task, last.form);
      form.setAnswers(last.annotation.answers);
      setEditing(true, last.item.external_id);
      say(notice, "");
    } catch (error) {
      say(notice, error.body?.detail || gettext("Could not load your last answer."), "error");
    }
  });
}

async function backToWork() {
  if (lease) show(await api(`/api/v1/assignments/${lease.id}/`));
  else await next();
}

// The change is sent for the item it was made on (the server refuses it for any other item).
async function saveChange() {
  const { annotation, item } = editing;
  const body = { item: item.id, answers: form.answers() };
  form.showErrors();
  await whileWaiting(TEXT.savingChange(item.external_id), async (wait) => {
    try {
      const result = await api(`/api/v1/annotations/${annotation.id}/amend/`, { method: "POST", body });
      editing = null;
      if (result.progress) showProgress(result.progress);
      await backToWork();
      say(notice, fill(gettext("Your answer on item %(item)s was changed."), { item: item.external_id }) + handedIn(result.progress) +
        TEXT.refusedNote(wait.refused), "ok");
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      if (error.code === "invalid_answers") form.showErrors(error.body.errors);
      say(notice, error.body.detail || gettext("Could not change the answer."), "error");
    }
  });
}

async function handIn() {
  const p = lastProgress;
  try {
    const batch = await api(`/api/v1/batches/${p.batch_id}/hand_in/`, { method: "POST" });
    showProgress({ state: batch.state, ready_to_hand_in: false });
    $("hand-in").hidden = true;
    say(notice, batch.state === "handed_in" ? fill(gettext("Batch %(batch)s was handed in to QC."), p)
      : fill(gettext("Batch %(batch)s is complete."), p), "ok");
  } catch (error) {
    say(notice, error.body?.detail || gettext("Could not hand the batch in."), "error");
  }
}

function toggleGuidelines() {
  if (guidelines.open) guidelines.close();
  else guidelines.showModal();
}

document.addEventListener("keydown", (event) => {
  if (composing(event)) return;  // the input method's key: Enter ends the composition, never submits
  if (guidelines.open || asking()) return;  // the dialogs handle their own keys (Escape closes them)
  if (keys.refused(event)) return;
  if (event.ctrlKey || event.metaKey || event.altKey) {
    if (event.key === "Enter" && event.target.tagName === "TEXTAREA") { event.preventDefault(); submit(); }
    return;
  }
  const typing = event.target.tagName === "TEXTAREA" || (event.target.tagName === "INPUT" && !["radio", "checkbox"].includes(event.target.type));
  if (event.key === "Enter" && event.target.tagName !== "TEXTAREA" && event.target.tagName !== "BUTTON" && event.target.tagName !== "A") {
    event.preventDefault();
    submit();
  } else if (!typing && form && !$("item").hidden && form.handleKey(event)) {
    event.preventDefault();  // an option's own key (an item's option G included) comes first
  } else if (!typing && (event.key === "?" || event.key.toLowerCase() === "g")) {
    event.preventDefault();
    toggleGuidelines();
  }
});

$("submit").addEventListener("click", submit);
$("skip").addEventListener("click", skip);
$("flag").addEventListener("click", flag);
$("change-last").addEventListener("click", changeLast);
$("change-last-done").addEventListener("click", changeLast);
$("cancel-edit").addEventListener("click", () => {
  if (waiting) return;
  editing = null;
  whileWaiting(TEXT.loading, () => backToWork().catch(() => noWork("")));
});
$("hand-in").addEventListener("click", handIn);
$("open-guidelines").addEventListener("click", toggleGuidelines);
$("close-guidelines").addEventListener("click", () => guidelines.close());
$("answer-form").addEventListener("submit", (event) => { event.preventDefault(); submit(); });

whileWaiting(TEXT.loading, async () => {
  try {
    const initial = page.dataset.assignment;
    const resumed = initial ? await api(`/api/v1/assignments/${initial}/`) : null;
    if (resumed && resumed.status === "leased") show(resumed);
    else await next();
  } catch (error) {
    say(notice, error.body?.detail || gettext("Could not load an item; reload the page to try again."), "error");
  }
});
