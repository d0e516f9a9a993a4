// One modal question at a time: a confirmation, or a text to type (a reason, a comment). Resolves with the
// text ("" when no text is asked) on confirm, null on cancel or Escape. The dialog owns its keys: Enter on a
// button or Ctrl+Enter in the text sends it, and no key pressed in it reaches the page beneath (keys.js).
import { composing, el } from "./api.js";
import { gettext } from "./i18n.js";
import { ownKeys } from "./keys.js";

let dialog = null;

export function ask({ title, text = "", label = null, required = false, confirm = gettext("OK"), danger = false }) {
  dialog?.remove();
  return new Promise((resolve) => {
    const field = label && el("textarea", { id: "ask-text", rows: 3, "aria-required": required ? "true" : null });
    const error = el("p", { class: "field-error", hidden: true }, gettext("Please write something first."));
    const yes = el("button", { type: "submit", class: danger ? "danger" : "primary", id: "ask-confirm" }, confirm);
    const no = el("button", { type: "button", id: "ask-cancel" }, gettext("Cancel"));
    const form = el("form", { method: "dialog" },
      el("h2", { id: "ask-title" }, title), text ? el("p", {}, text) : null,
      field ? [el("label", { for: "ask-text" }, label), field, error] : null,
      el("div", { class: "buttons" }, yes, no));
    dialog = el("dialog", { id: "ask", "aria-labelledby": "ask-title" }, form);
    ownKeys(dialog);
    let answer = null;
    form.addEventListener("submit", (event) => {
      const value = field ? field.value.trim() : "";
      if (required && !value) {
        event.preventDefault();
        error.hidden = false;
        field.focus();
        return;
      }
      answer = value;
    });
    no.addEventListener("click", () => dialog.close());
    field?.addEventListener("keydown", (event) => {
      if (composing(event)) return;  // Enter ends the input method's composition
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) { event.preventDefault(); form.requestSubmit(); }
    });
    dialog.addEventListener("close", () => { resolve(answer); dialog.remove(); dialog = null; });
    document.body.append(dialog);
    dialog.showModal();
    (field || yes).focus();
  });
}

export const asking = () => Boolean(dialog?.open);
