// Renders an item's dialogue and fields as text (textContent only), speakers told apart by colour and name.
// Every value is shown as readable text, whatever its shape: strings, numbers, lists, objects (options,
// personalities), a second dialogue; the content carries the item's language.
import { el } from "./api.js";
import { gettext } from "./i18n.js";

export function renderDialogue(turns) {
  const speakers = [];
  const list = el("ol", { class: "dialogue", "aria-label": gettext("Dialogue") });
  turns.forEach((turn, index) => {
    const speaker = typeof turn === "string" ? "" : turn.speaker;
    const text = typeof turn === "string" ? turn : turn.text;
    if (!speakers.includes(speaker)) speakers.push(speaker);
    const side = speakers.indexOf(speaker) % 4;
    list.append(el("li", { class: `turn speaker-${side}`, value: index },
      el("span", { class: "who" }, el("span", { class: "turn-index" }, `#${index}`), " ", speaker || "—"),
      el("p", { class: "text" }, text)));
  });
  return list;
}

const isTurns = (value) => Array.isArray(value) && value.length > 0 &&
  value.every((t) => t && typeof t === "object" && "text" in t);

// One line of text for a value (meta, list entries).
export function plainText(value) {
  if (value === null || value === undefined) return "—";
  if (Array.isArray(value)) return value.map(plainText).join("; ");
  if (typeof value === "object") return Object.entries(value).map(([k, v]) => `${k}: ${plainText(v)}`).join("; ");
  return String(value);
}

function fieldValue(value) {
  if (isTurns(value)) return renderDialogue(value);  // a second dialogue (pairwise items)
  if (Array.isArray(value)) {
    return el("ul", { class: "field-list" }, value.map((v) => el("li", {}, typeof v === "object" && v !== null ? fieldValue(v) : plainText(v))));
  }
  if (value && typeof value === "object") {
    return el("dl", { class: "options" }, Object.entries(value).map(([key, v]) => [
      el("dt", {}, key), el("dd", {}, typeof v === "object" && v !== null ? fieldValue(v) : plainText(v))]));
  }
  return el("p", { class: "text" }, plainText(value));
}

// The names of the fields and metadata the importers give items, in the person's language; any other name shows
// as it is named in the data.
const FIELD_NAMES = {
  options: gettext("Options"), question: gettext("Question"), test_question: gettext("Question"), option_description: gettext("Option descriptions"),
  target_speaker: gettext("Target speaker"), next_speaker: gettext("Next speaker"), domain: gettext("Domain"),
  context: gettext("Context"), response: gettext("Response"), persona: gettext("Persona"), knowledge: gettext("Knowledge"),
  task: gettext("Task"), model_a: gettext("Model A"), model_b: gettext("Model B"),
};
const label = (key) => FIELD_NAMES[key] ?? key.replaceAll("_", " ");

export function renderFields(fields, meta = {}) {
  const box = el("div", { class: "fields", lang: meta?.language || null });
  // An empty value (an item without a domain) shows no heading.
  const shown = Object.entries(meta || {}).filter(([k, v]) => k !== "language" && v !== "" && v !== null && v !== undefined
    && !(typeof v === "object" && Object.keys(v).length === 0));
  if (shown.length) {
    box.append(el("dl", { class: "meta muted" }, shown.map(([k, v]) => [
      el("dt", {}, label(k)),
      el("dd", {}, v && typeof v === "object" && !Array.isArray(v)
        ? el("ul", { class: "meta-list" }, Object.entries(v).map(([who, text]) => el("li", {}, `${who}: ${plainText(text)}`)))
        : plainText(v))])));
  }
  for (const [key, value] of Object.entries(fields || {})) {
    const long = typeof value === "string" && value.length > 400;
    box.append(el("section", { class: `field${long ? " long" : ""}` }, el("h3", {}, label(key)), fieldValue(value)));
  }
  return box;
}

// The language of an item's content, for the `lang` attribute (empty when unknown).
export const languageOf = (item) => item?.meta?.language || "";

// The dialogue and the fields of an item in one block carrying the item's language.
export function renderItem(item, { meta = item.meta } = {}) {
  return el("div", { class: "item-content", lang: languageOf(item) || null },
    renderDialogue(item.dialogue), renderFields(item.fields, meta));
}
