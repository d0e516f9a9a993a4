// Renders an item's dialogue and fields as text (textContent only), speakers told apart by colour and name.
import { el } from "./api.js";

export function renderDialogue(turns) {
  const speakers = [];
  const list = el("ol", { class: "dialogue", "aria-label": "Dialogue" });
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

function fieldValue(value) {
  if (Array.isArray(value) && value.length && typeof value[0] === "object" && "text" in value[0]) {
    return renderDialogue(value);  // a second dialogue (pairwise items)
  }
  if (value && typeof value === "object") {
    return el("dl", { class: "options" }, Object.entries(value).map(([key, text]) => [
      el("dt", {}, key), el("dd", {}, typeof text === "string" ? text : JSON.stringify(text))]));
  }
  return el("p", { class: "text" }, String(value));
}

export function renderFields(fields, meta = {}) {
  const box = el("div", { class: "fields" });
  const metaText = Object.entries(meta).map(([k, v]) => `${k}: ${v}`).join(" · ");
  if (metaText) box.append(el("p", { class: "muted" }, metaText));
  for (const [key, value] of Object.entries(fields || {})) {
    const long = typeof value === "string" && value.length > 400;
    box.append(el("section", { class: `field${long ? " long" : ""}` },
      el("h3", {}, key.replaceAll("_", " ")), fieldValue(value)));
  }
  return box;
}
