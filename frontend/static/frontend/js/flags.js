// The campaign's flags from annotators (item, batch and round, who, comment), for trainers, experts and
// managers; the card stays hidden for roles that may not read them.
import { api, ApiError, el } from "./api.js";

export async function showFlags(campaignId, card, body) {
  let flags;
  try {
    flags = await api(`/api/v1/campaigns/${campaignId}/flags/`);
  } catch (error) {
    if (error instanceof ApiError && error.status === 403) { card.hidden = true; return; }
    throw error;
  }
  card.hidden = false;
  body.replaceChildren(...(flags.length ? flags.map((f) => el("tr", {},
    el("td", {}, f.external_id), el("td", {}, `${f.batch} / ${f.round}`), el("td", {}, f.author || "—"),
    el("td", { class: "prewrap" }, f.comment), el("td", {}, new Date(f.created_at).toLocaleString())))
    : [el("tr", {}, el("td", { colspan: 5, class: "muted" }, "No flags."))]));
}
