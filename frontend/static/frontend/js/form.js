// The task's answer form, built from its schema (benchmarks/formschema.py), with keyboard choice:
// digits (or the option's letter) answer the question being worked on; a choice moves on to the next.
import { el } from "./api.js";

const KEYS = "123456789";
// Letters for exclusion codes: never digits, so they cannot be taken for scores; not `g` (guidelines)
// nor `y`/`n` (yes/no).
const EXCLUSION_KEYS = "xzwvutsrqpomlkjihfedcba";

const singleDigit = (v) => (typeof v === "number" && Number.isInteger(v) && v >= 0 && v <= 9) ||
  (typeof v === "string" && /^[0-9]$/.test(v));
// An exclusion code takes the item out of the data set (-1, -2, "abandon", or marked `excludes`).
const isExclusion = (o) => Boolean(o.excludes) || (typeof o.value === "number" && o.value < 0) || o.value === "abandon";

// Keys of the scored options: the value itself when every value is a single digit, else positions.
function scoredKeys(values) {
  if (values.every(singleDigit)) return values.map((v) => String(v));
  return values.map((_, i) => KEYS[i] ?? null);
}

// [{value, label, key, alt}] for a choice-like question. `key` is the one shown on the option's chip;
// `alt` are further keys choosing it (digits by position for lettered options, 1/2 for yes/no).
export function choicesOf(spec, item) {
  if (spec.type === "boolean") {
    return [{ value: true, label: "Yes", key: "y", alt: ["1"] }, { value: false, label: "No", key: "n", alt: ["2"] }];
  }
  if (spec.type === "scale") {
    const { min, max } = spec.scale;
    const values = Array.from({ length: max - min + 1 }, (_, i) => min + i);
    const keys = scoredKeys(values);
    return values.map((v, i) => ({ value: v, label: String(v), key: keys[i], alt: [] }));
  }
  if (spec.options === "item") {
    return Object.entries(item.fields.options || {}).map(([k, text], i) => ({
      value: k, label: `${k}. ${text}`, key: k.toLowerCase(), alt: KEYS[i] ? [KEYS[i]] : [] }));
  }
  const scored = spec.options.filter((o) => !isExclusion(o));
  const keys = scoredKeys(scored.map((o) => o.value));
  const taken = new Set(keys);
  const letters = [...EXCLUSION_KEYS].filter((k) => !taken.has(k));
  return spec.options.map((o) => {
    const key = isExclusion(o) ? letters.shift() ?? null : keys[scored.indexOf(o)];
    return { value: o.value, label: o.label ?? String(o.value), key, alt: [], excludes: isExclusion(o) };
  });
}

// The choice a key press picks: its own key first, then an alternative key.
export function choiceIndex(choices, key) {
  const own = choices.findIndex((c) => c.key === key);
  return own >= 0 ? own : choices.findIndex((c) => c.alt.includes(key));
}

export function buildForm(form, item, dialogueLength) {
  const questions = [];
  const root = el("div", { class: "questions" });

  form.questions.forEach((spec, n) => {
    const required = spec.required !== false;
    const id = `q-${spec.key}`;
    const legend = el("legend", { id: `${id}-label` }, `${n + 1}. ${spec.label || spec.key}`,
      required ? el("span", { class: "req" }, " (required)") : null);
    const box = el("fieldset", { class: "question", dataset: { key: spec.key } }, legend);
    const error = el("p", { class: "field-error", id: `${id}-error`, hidden: true });
    const q = { spec, box, error, choices: [], inputs: [] };
    if (["single_choice", "multi_choice", "scale", "boolean"].includes(spec.type)) {
      const multi = spec.type === "multi_choice";
      q.choices = choicesOf(spec, item);
      const list = el("div", { class: `choices ${spec.type}` });
      q.choices.forEach((choice, i) => {
        const input = el("input", { type: multi ? "checkbox" : "radio", name: id, id: `${id}-${i}`,
          "aria-describedby": `${id}-error`, dataset: { index: i } });
        q.inputs.push(input);
        const keys = [choice.key, ...choice.alt].filter(Boolean).map((k) => k.toUpperCase());
        list.append(el("label", { for: `${id}-${i}`, class: `choice${choice.excludes ? " excludes" : ""}`,
          title: keys.length ? `Key ${keys.join(" or ")}` : null }, input,
          choice.key ? el("kbd", {}, choice.key.toUpperCase()) : el("span", { class: "nokey" }), " ", choice.label));
      });
      box.append(list);
    } else if (spec.type === "index") {
      const input = el("input", { type: "number", min: 0, max: dialogueLength - 1, id, inputmode: "numeric",
        "aria-labelledby": `${id}-label`, "aria-describedby": `${id}-error` });
      q.inputs.push(input);
      box.append(el("p", { class: "muted" }, `Turn number, 0 to ${dialogueLength - 1} (shown as #n)`), input);
    } else {
      const input = el("textarea", { id, rows: 3, "aria-labelledby": `${id}-label`, "aria-describedby": `${id}-error` });
      q.inputs.push(input);
      box.append(input);
    }
    box.append(error);
    questions.push(q);
    root.append(box);
  });

  function answerOf(q) {
    const { spec, inputs, choices } = q;
    if (spec.type === "multi_choice") {
      const picked = inputs.filter((i) => i.checked).map((i) => choices[i.dataset.index].value);
      return picked.length ? picked : undefined;
    }
    if (choices.length) {
      const picked = inputs.find((i) => i.checked);
      return picked ? choices[picked.dataset.index].value : undefined;
    }
    const raw = inputs[0].value;
    if (raw === "") return undefined;
    return spec.type === "index" ? Number.parseInt(raw, 10) : raw;
  }

  // Conditional questions: shown (and sent) only while their condition holds; the server checks again.
  function answers() {
    const result = {};
    for (const q of questions) {
      const cond = q.spec.shown_if;
      const shown = !cond || cond.in.some((v) => v === result[cond.key]);
      q.box.hidden = !shown;
      if (!shown) continue;
      const value = answerOf(q);
      if (value !== undefined) result[q.spec.key] = value;
    }
    return result;
  }

  const visible = () => questions.filter((q) => !q.box.hidden);
  const focusQuestion = (q) => {
    if (!q) return;
    (q.inputs.find((i) => i.checked) || q.inputs[0]).focus();
  };
  function current() {
    const here = visible().find((q) => q.box.contains(document.activeElement));
    return here || visible().find((q) => answerOf(q) === undefined) || visible()[0];
  }

  root.addEventListener("change", () => answers());

  // Returns true when the key was used.
  function handleKey(event) {
    const q = current();
    if (!q || !q.choices.length) return false;
    const index = choiceIndex(q.choices, event.key.toLowerCase());
    if (index < 0) return false;
    const input = q.inputs[index];
    input.checked = q.spec.type === "multi_choice" ? !input.checked : true;
    answers();
    if (q.spec.type === "multi_choice") input.focus();
    else {
      const rest = visible();
      focusQuestion(rest[rest.indexOf(q) + 1] || q);
    }
    return true;
  }

  function showErrors(errors = {}) {
    for (const q of questions) {
      const message = errors[q.spec.key];
      q.error.textContent = message ? [].concat(message).join(" ") : "";
      q.error.hidden = !message;
      q.box.classList.toggle("invalid", Boolean(message));
    }
  }

  // Fills the form with earlier answers (changing one's last answer).
  function setAnswers(given = {}) {
    const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
    for (const q of questions) {
      const value = given[q.spec.key];
      if (q.choices.length) {
        q.inputs.forEach((input, i) => {
          const choice = q.choices[i].value;
          input.checked = Array.isArray(value) ? value.some((v) => same(v, choice)) : same(value, choice);
        });
      } else {
        q.inputs[0].value = value === undefined || value === null ? "" : String(value);
      }
    }
    answers();
  }

  answers();
  return { element: root, answers, handleKey, showErrors, setAnswers, focusFirst: () => focusQuestion(visible()[0]) };
}

// An answer as people read it: each question's label with the chosen options' labels (not raw values).
export function describeAnswers(form, item, answers = {}) {
  return form.questions.filter((q) => answers[q.key] !== undefined).map((q) => {
    const given = answers[q.key];
    const choices = ["single_choice", "multi_choice", "scale", "boolean"].includes(q.type) ? choicesOf(q, item) : [];
    const name = (v) => choices.find((c) => JSON.stringify(c.value) === JSON.stringify(v))?.label ?? String(v);
    const text = Array.isArray(given) ? given.map(name).join(", ") : name(given);
    return { key: q.key, label: q.label || q.key, text, primary: q.key === form.primary };
  });
}
