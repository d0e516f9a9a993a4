// The keyboard's rule on every labelling page (the workspace, where the gold panel votes too; the QC page; the
// expert's and the gold panel's queues): a key belongs to the item that was on screen when it was pressed, and so
// does the rest of the burst it was typed in. While a page cannot take a key for the item it shows (an answer on
// its way, the next item loading, no item left to take it) the key is refused and the page says so; after a
// refused key the keys stay refused until the keyboard has been quiet for QUIET_MS with the page ready again
// (the next item showing), or until the person clicks the page, a deliberate fresh start. So the tail of a burst
// begun on one item never lands on the next. Dialogs own their keys (ownKeys).
import { el } from "./api.js";
import { fill, gettext } from "./i18n.js";

// Longer than the gaps between the keys of one answer typed fluently, short enough to go unnoticed by someone who
// looks at the next item before answering it.
export const QUIET_MS = 700;

// Every string the refused keys show.
const TEXT = {
  busy: (key, what) => fill(gettext("Key %(key)s was not used: %(what)s."), { key, what }),
  burst: (key) => fill(gettext("Key %(key)s was not used: it was typed right after a key that was not used."), { key }),
  paused: gettext("Keys are paused so that nothing typed for one item lands on another: stop typing for a moment (or click the page), then type again."),
  back: gettext("Keys work again."),
  refused: (refused, paused) => fill(gettext("%(refused)s %(paused)s"), { refused, paused }),  // no space in Chinese
};

export const keyName = (key) => (key === " " ? gettext("Space") : key.length === 1 ? key.toUpperCase() : key);

// A key that chooses, answers or sends: a character, or Enter with or without a modifier (Ctrl+Enter sends
// from a text box). Tab, Escape, the arrows and other shortcuts move around and label nothing.
const labelling = (event) => event.key === "Enter" || (event.key.length === 1 && !event.ctrlKey && !event.metaKey && !event.altKey);

// A key pressed in a dialog is the dialog's alone (Enter or Ctrl+Enter sends the dialog, Escape closes it): it
// never reaches the page beneath, not even when it closes the dialog.
export function ownKeys(dialog) {
  dialog.addEventListener("keydown", (event) => event.stopPropagation());
}

// The page's gate, its status line shown under `notice`. A page calls busy(what) while it cannot take keys (what:
// why, as the refusal says it) and free() once it can, once for each busy() (a page may wait for two things at
// once); refused(event), first thing in its keydown handler, says whether the key must be left alone.
export function keyGate(notice) {
  const line = el("p", { id: "keys-paused", class: "notice warn", role: "status", "aria-live": "polite", hidden: true });
  notice.after(line);
  let busy = null;  // {what, refused}: why the page takes no key now, and how many it has refused meanwhile
  let holds = 0;  // how many waits are under way
  let paused = false;
  let timer = null;

  function show(text, kind) {
    line.textContent = text;
    line.className = `notice ${kind}`;
    line.hidden = !text;
  }
  function resume() {
    clearTimeout(timer);
    paused = false;
    delete line.dataset.keys;
    show(TEXT.back, "ok");
  }
  // The quiet moment starts again with every refused key, and only once the page is ready.
  function quiet() {
    clearTimeout(timer);
    if (paused && !busy) timer = setTimeout(resume, QUIET_MS);
  }
  function pause(event, text) {
    event.preventDefault();
    paused = true;
    line.dataset.keys = "paused";
    show(TEXT.refused(text, TEXT.paused), "warn");
    quiet();
  }
  document.addEventListener("pointerdown", () => { if (paused && !busy) resume(); });

  return {
    busy(what) {
      clearTimeout(timer);
      holds += 1;
      busy = { what, refused: 0 };
      return busy;
    },
    free() {
      holds = Math.max(0, holds - 1);
      if (holds) return;
      busy = null;
      quiet();
    },
    refused(event) {
      if (busy) {
        if (labelling(event)) {
          if (!event.repeat) busy.refused += 1;
          pause(event, TEXT.busy(keyName(event.key), busy.what));
        }
        return true;
      }
      if (!labelling(event)) return false;
      if (paused) {
        pause(event, TEXT.burst(keyName(event.key)));
        return true;
      }
      if (!line.hidden) show("", "ok");  // "Keys work again" goes with the first key used
      return false;
    },
  };
}
