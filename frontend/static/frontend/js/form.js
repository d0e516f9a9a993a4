// The task's answer form, built from its schema (benchmarks/formschema.py), and the one home of the keys of
// every labelling page. Each option has one key, shown on its chip, and no other key chooses it. A key answers
// one question at a time and its chip says which: the question being worked on when it has the key, else the
// first unanswered question that has it, else the first that has it. The primary question (the one the
// campaign measures) comes first, so a digit answers it before any other question; a choice then moves on.
import { el } from "./api.js";
import { fill, gettext } from "./i18n.js";

// Every string this file shows.
const TEXT = {
  required: " " + gettext("(required)"),
  yes: gettext("Yes"),
  no: gettext("No"),
  key: (key) => fill(gettext("Key %(key)s"), { key }),
  keyElsewhere: (key, question) => fill(gettext("Key %(key)s answers “%(question)s” now"), { key, question }),
  turnNumber: (last) => fill(gettext("Turn number, 0 to %(last)s (shown as #n)"), { last }),
  unanswered: gettext("Not answered yet: answer this question before saving."),
};

const KEYS = "123456789";
// Several values in one string, as DiQAD's release writes its reasons (benchmarks/importers/diqad_released.py).
const SEPARATOR = "#!#";
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

// [{value, label, key}] for a choice-like question; `key` (lower case, or null) is the one key of the option.
export function choicesOf(spec, item) {
  if (spec.type === "boolean") {
    return [{ value: true, label: TEXT.yes, key: "y" }, { value: false, label: TEXT.no, key: "n" }];
  }
  if (spec.type === "scale") {
    const { min, max } = spec.scale;
    const values = Array.from({ length: max - min + 1 }, (_, i) => min + i);
    const keys = scoredKeys(values);
    return values.map((v, i) => ({ value: v, label: String(v), key: keys[i] }));
  }
  if (spec.options === "item") {
    // An item's options by their letter (A-D); options named otherwise by position.
    return Object.entries(item.fields.options || {}).map(([k, text], i) => ({
      value: k, label: `${k}. ${text}`, key: k.length === 1 ? k.toLowerCase() : KEYS[i] ?? null }));
  }
  const scored = spec.options.filter((o) => !isExclusion(o));
  const keys = scoredKeys(scored.map((o) => o.value));
  const taken = new Set(keys);
  const letters = [...EXCLUSION_KEYS].filter((k) => !taken.has(k));
  return spec.options.map((o) => {
    const key = isExclusion(o) ? letters.shift() ?? null : keys[scored.indexOf(o)];
    return { value: o.value, label: o.label ?? String(o.value), key, excludes: isExclusion(o) };
  });
}

// The option a key press picks in one question (its own key only), or -1.
export const choiceIndex = (choices, key) => choices.findIndex((c) => c.key === key);

// An option as every page shows it: its input, the chip with its key (with `withKey`), its label.
export function choiceLabel(choice, input, withKey = true) {
  const key = withKey && choice.key ? choice.key.toUpperCase() : null;
  const chip = key ? el("kbd", {}, key) : withKey ? el("span", { class: "nokey" }) : null;
  return el("label", { for: input.id, class: `choice${choice.excludes ? " excludes" : ""}`, title: key && TEXT.key(key) },
    input, chip, " ", choice.label);
}

export function buildForm(form, item, dialogueLength) {
  const questions = [];
  const root = el("div", { class: "questions" });
  const primary = form.questions.find((spec) => spec.key === form.primary);
  const ordered = [primary, ...form.questions.filter((spec) => spec !== primary)].filter(Boolean);

  ordered.forEach((spec, n) => {
    const required = spec.required !== false;
    const id = `q-${spec.key}`;
    // Numbered among the questions shown (answers() renumbers them): DiQAD's reason is 3 whichever score asks it.
    const legend = el("legend", { id: `${id}-label` }, el("span", { class: "q-number" }, `${n + 1}. `), spec.label || spec.key,
      required ? el("span", { class: "req" }, TEXT.required) : null);
    const box = el("fieldset", { class: "question", dataset: { key: spec.key } }, legend);
    const error = el("p", { class: "field-error", id: `${id}-error`, hidden: true });
    const q = { spec, box, error, choices: [], inputs: [], labels: [] };
    if (["single_choice", "multi_choice", "scale", "boolean"].includes(spec.type)) {
      const multi = spec.type === "multi_choice";
      q.choices = choicesOf(spec, item);
      const list = el("div", { class: `choices ${spec.type}` });
      q.choices.forEach((choice, i) => {
        const input = el("input", { type: multi ? "checkbox" : "radio", name: id, id: `${id}-${i}`,
          "aria-describedby": `${id}-error`, dataset: { index: i } });
        q.inputs.push(input);
        q.labels.push(choiceLabel(choice, input));
      });
      list.append(...q.labels);
      box.append(list);
    } else if (spec.type === "index") {
      const input = el("input", { type: "number", min: 0, max: dialogueLength - 1, id, inputmode: "numeric",
        "aria-labelledby": `${id}-label`, "aria-describedby": `${id}-error` });
      q.inputs.push(input);
      box.append(el("p", { class: "muted" }, TEXT.turnNumber(dialogueLength - 1)), input);
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

  const visible = () => questions.filter((q) => !q.box.hidden);
  const open = (list) => list.find((q) => answerOf(q) === undefined);
  const nameOf = (q) => q.spec.label || q.spec.key;

  // The question a key answers now (null: none). See the rule at the top of this file.
  function ownerOf(key) {
    const having = visible().filter((q) => choiceIndex(q.choices, key) >= 0);
    return having.find((q) => q.box.contains(document.activeElement)) || open(having) || having[0] || null;
  }

  // Each chip is lit while its key answers its question, and dimmed (saying which question the key answers)
  // while it answers another one.
  function showKeys() {
    for (const q of questions) {
      q.choices.forEach((choice, i) => {
        const chip = q.labels[i].querySelector("kbd");
        if (!chip) return;
        const owner = q.box.hidden ? q : ownerOf(choice.key);
        const key = choice.key.toUpperCase();
        chip.classList.toggle("idle", owner !== q);
        q.labels[i].title = owner === q ? TEXT.key(key) : TEXT.keyElsewhere(key, nameOf(owner));
      });
    }
  }

  // Conditional questions: shown (and sent) only while their condition holds; the server checks again.
  function answers() {
    const result = {};
    let number = 0;
    for (const q of questions) {
      const cond = q.spec.shown_if;
      const shown = !cond || cond.in.some((v) => v === result[cond.key]);
      q.box.hidden = !shown;
      if (!shown) continue;
      q.box.querySelector(".q-number").textContent = `${++number}. `;
      const value = answerOf(q);
      if (value !== undefined) result[q.spec.key] = value;
    }
    showKeys();
    return result;
  }

  const focusQuestion = (q) => {
    if (!q) return;
    (q.inputs.find((i) => i.checked) || q.inputs[0]).focus();
  };
  // Keys move only between questions with options: a text box never takes keys meant for a later question.
  const choosing = () => visible().filter((q) => q.choices.length);
  // After a choice in `q`: the next unanswered question, else the next question.
  function after(q) {
    const shown = choosing();
    const later = shown.slice(shown.indexOf(q) + 1);
    return open(later) || open(shown) || later[0] || q;
  }

  root.addEventListener("change", () => answers());
  root.addEventListener("focusin", showKeys);
  root.addEventListener("focusout", showKeys);

  // Returns true when the key was used.
  function handleKey(event) {
    const key = event.key.toLowerCase();
    const q = ownerOf(key);
    if (!q) return false;
    const input = q.inputs[choiceIndex(q.choices, key)];
    input.checked = q.spec.type === "multi_choice" ? !input.checked : true;
    answers();
    if (q.spec.type === "multi_choice") input.focus();
    else focusQuestion(after(q));
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

  // A form is saved only with every shown required question answered on purpose (nothing is pre-chosen).
  // Returns the names of those not answered, marked on the form with the first focused; [] when complete.
  function unanswered() {
    answers();
    const missing = visible().filter((q) => q.spec.required !== false && answerOf(q) === undefined);
    showErrors(Object.fromEntries(missing.map((q) => [q.spec.key, TEXT.unanswered])));
    focusQuestion(missing[0]);
    return missing.map(nameOf);
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
  // The first unanswered question with options (the primary one on a fresh form), else the first question.
  const focusFirst = () => focusQuestion(open(choosing()) || choosing()[0] || visible()[0]);
  return { element: root, answers, handleKey, showErrors, unanswered, setAnswers, focusFirst };
}

// An answer as people read it: each question's label with the chosen options' labels (not raw values).
export function describeAnswers(form, item, answers = {}) {
  return form.questions.filter((q) => answers[q.key] !== undefined).map((q) => {
    const given = answers[q.key];
    const choices = ["single_choice", "multi_choice", "scale", "boolean"].includes(q.type) ? choicesOf(q, item) : [];
    const known = (v) => choices.find((c) => JSON.stringify(c.value) === JSON.stringify(v))?.label;
    // A value outside the options (reasons as released, "less_informative#!#not_fluent") by the names of its parts.
    const name = (v) => known(v) ?? (typeof v === "string" && v.includes(SEPARATOR)
      ? v.split(SEPARATOR).filter((p) => p.trim()).map((p) => known(p.trim()) ?? p.trim().replaceAll("_", " ")).join(", ")
      : String(v));
    const text = Array.isArray(given) ? given.map(name).join(", ") : name(given);
    return { key: q.key, label: q.label || q.key, text, primary: q.key === form.primary };
  });
}
