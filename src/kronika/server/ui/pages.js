// kronika's memory browser, its linked pages: summaries, entities, opinions with their
// evidence, a fact's explanation, the Markdown zip and import. Uses app.js's helpers.
"use strict";

function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (cls) node.className = cls;
  return node;
}

function link(text, cls, onclick) {
  const a = el("a", text, cls);
  a.href = "#";
  a.addEventListener("click", (e) => {
    e.preventDefault();
    Promise.resolve(onclick()).catch((err) => say(err.message, true));
  });
  return a;
}

const isAdmin = () => state.me && state.me.role === "admin" && !state.me.agent;
const confidence = (c) => (c === null || c === undefined ? "unknown" : Number(c).toFixed(2));

function itemLine(item) {
  const li = el("li");
  li.append(el("span", item.content), " ", el("span", `(${item.citation})`, "muted"), " ");
  li.appendChild(link("why?", "why", () => openExplain(item.id, li)));
  return li;
}

function list(title, items, draw) {
  const part = document.createDocumentFragment();
  if (!items.length) return part;
  part.appendChild(el("h4", title));
  const ul = el("ul");
  for (const item of items) ul.appendChild(draw(item));
  part.appendChild(ul);
  return part;
}

// ------------------------------------------------------------------ explain
async function openExplain(id, under) {
  const data = await api("GET", agentPath("/explain/" + encodeURIComponent(id)));
  let box = under ? under.querySelector(":scope > .explanation") : $("explain");
  if (!box) {
    box = el("div", null, "explanation");
    under.appendChild(box);
  }
  drawExplain(box, data);
  box.focus();
}

const ORIGINS = {
  remembered: (o) => `remembered by ${o.by}`,
  extracted: (o) => `taken by the rule extractor (${o.by})`,
  consolidated: (o) => `extracted by a consolidation (${o.by}${o.model ? ", model " + o.model : ""})`,
  imported: () => "imported",
  "hand-written": () => "written by hand in the Markdown",
  conversation: (o) => `said by ${o.by}`,
};

function drawExplain(box, data) {
  const { item, origin } = data;
  box.replaceChildren();
  box.tabIndex = -1;
  box.appendChild(el("h3", `Why: ${item.content}`));
  let said = (ORIGINS[origin.how] || (() => origin.how))(origin);
  if (origin.session_id) said += ` from session ${origin.session_id}`;
  if (origin.turn_ids.length) said += ` (turns ${origin.turn_ids.join(", ")})`;
  box.appendChild(el("p", `${item.id}, ${item.status}, in ${item.citation}: ${said}`, "origin"));
  if (origin.turns.length) {
    const quote = el("blockquote", null, "turns");
    for (const turn of origin.turns) quote.appendChild(el("p", turn));
    box.appendChild(quote);
  }
  if (data.events.length) {
    box.appendChild(el("h4", "What happened to it"));
    box.appendChild(table(["at", "action", "by", "outcome", "summary"], data.events.map(
      (e) => [{ at: e.at }, e.action, e.by, e.outcome, e.summary]), "events"));
  }
  if (data.lineage.length > 1) {
    box.appendChild(el("h4", `Values of ${item.key}`));
    box.appendChild(table(["value", "status", "valid from", "valid to"], data.lineage.map(
      (v) => [v.value, v.status, { at: v.valid_from }, { at: v.valid_to }]), "lineage"));
  }
}

function table(heads, rows, cls) {
  const t = el("table", null, cls);
  const tr = el("tr");
  for (const h of heads) tr.appendChild(el("th", h));
  const head = el("thead");
  head.appendChild(tr);
  const tbody = el("tbody");
  for (const values of rows) {
    const row = el("tr");
    for (const v of values) {
      if (v !== null && typeof v === "object") timeCell(row, v.at);  // a time, readable
      else cell(row, v);
    }
    tbody.appendChild(row);
  }
  t.append(head, tbody);
  return t;
}

// ---------------------------------------------------------------- summaries
loaders.summaries = async () => {
  const data = await api("GET", agentPath("/summaries"));
  const sessions = body("session-summaries");
  for (const s of data.sessions.slice().reverse()) {
    const row = el("tr");
    cell(row, "").appendChild(link(s.session_id, "summary-link", () => drawSummary(s.session_id)));
    cell(row, s.status);
    cell(row, s.summary);
    sessions.appendChild(row);
  }
  const levels = body("level-summaries");
  for (const s of data.summaries) {
    const row = el("tr");
    cell(row, s.level);
    cell(row, s.sessions.join(", "));
    cell(row, s.content);
    levels.appendChild(row);
  }
  if (!data.sessions.length && !data.summaries.length) say("no summaries yet");
};

async function openSummary(id) {
  await show("summaries");
  await drawSummary(id);
}

async function drawSummary(id) {
  const data = await api("GET", agentPath("/sessions/" + encodeURIComponent(id) + "/summary"));
  const box = $("summary-page");
  box.replaceChildren();
  box.tabIndex = -1;
  box.appendChild(el("h3", `Session ${id} (${data.status || "open"}, ${data.turns} turns)`));
  box.appendChild(el("p", data.summary || "(not summarised yet)", "session-summary"));
  box.appendChild(list("Summaries that cover it", data.summaries, (s) => {
    const li = el("li");
    li.append(el("strong", s.level + " "), el("span", s.content));
    return li;
  }));
  const back = link("Open the transcript", "transcript-link", async () => {
    await show("sessions");
    await openSession(id);
  });
  box.appendChild(el("p")).appendChild(back);
  box.focus();
}

// The sessions view links each session to its summary.
const drawSessions = loaders.sessions;
loaders.sessions = async () => {
  await drawSessions();
  for (const row of $("sessions").querySelectorAll("tbody tr")) {
    const id = row.querySelector("a.session").textContent;
    cell(row, "").appendChild(link("summary", "summary-of", () => openSummary(id)));
  }
};

// ----------------------------------------------------------------- entities
loaders.entities = async () => {
  const data = await api("GET", agentPath("/entities"));
  const ul = $("entity-list");
  ul.replaceChildren();
  for (const e of data.entities) {
    const li = el("li");
    li.appendChild(link(`${e.name} (${e.items})`, "entity-link", () => openEntity(e.name)));
    ul.appendChild(li);
  }
  if (!data.entities.length) say("no entity pages yet (kronika jobs run reflect writes them)");
};

async function openEntity(name) {
  const page = await api("GET", agentPath("/entities/" + encodeURIComponent(name)));
  const box = $("entity-page");
  box.replaceChildren();
  box.tabIndex = -1;
  box.appendChild(el("h3", page.name));
  if (page.path) box.appendChild(el("p", page.path, "muted"));
  box.appendChild(list("Facts", page.facts, itemLine));
  box.appendChild(list("Opinions", page.opinions, (o) => {
    const li = el("li");
    li.append(el("span", `${confidence(o.confidence)} `, "confidence"));
    li.appendChild(link(o.content, "opinion-link", () => openOpinion(o.id)));
    li.append(` — ${o.evidence.length} piece(s) of evidence`);
    return li;
  }));
  box.appendChild(list("Notes", page.notes, itemLine));
  box.appendChild(list("Written on its page", page.written, itemLine));
  box.focus();
}

// ----------------------------------------------------------------- opinions
loaders.opinions = async () => {
  const data = await api("GET", agentPath("/opinions"));
  state.opinions = data.opinions;
  const tbody = body("opinions");
  for (const o of data.opinions) {
    const row = el("tr");
    row.dataset.id = o.id;
    const c = cell(row, "");
    const meter = el("meter");
    meter.min = 0;
    meter.max = 1;
    meter.value = o.confidence === null ? 0.5 : o.confidence;
    meter.setAttribute("aria-label", "confidence");
    c.append(confidence(o.confidence), " ", meter);
    cell(row, o.content);
    const names = cell(row, "");
    for (const name of o.entities) {
      names.appendChild(link(name, "entity-of", async () => {
        await show("entities");
        await openEntity(name);
      }));
      names.append(" ");
    }
    cell(row, "").appendChild(link(`${o.evidence.length} piece(s)`, "evidence-of", () => drawEvidence(o)));
    tbody.appendChild(row);
  }
  if (!data.opinions.length) say("no opinions yet (notes of kind O)");
};

async function openOpinion(id) {
  await show("opinions");
  const found = (state.opinions || []).find((o) => o.id === id);
  if (!found) throw new Error(`no opinion ${id}`);
  drawEvidence(found);
}

function drawEvidence(opinion) {
  for (const row of $("opinions").querySelectorAll("tbody tr")) {
    row.classList.toggle("chosen", row.dataset.id === opinion.id);
  }
  const box = $("evidence");
  box.replaceChildren();
  box.tabIndex = -1;
  box.appendChild(el("h3", `Evidence for: ${opinion.content}`));
  box.appendChild(el("p", `confidence ${confidence(opinion.confidence)}`));
  if (!opinion.evidence.length) box.appendChild(el("p", "No evidence weighed yet."));
  const ul = el("ul", null, "evidence");
  for (const piece of opinion.evidence) ul.appendChild(itemLine(piece.item));
  box.appendChild(ul);
  box.focus();
}

// ------------------------------------------------------- export and import
async function download(path) {
  const headers = { Authorization: "Bearer " + state.key };
  if ($("user").value.trim()) headers["X-Kronika-User"] = $("user").value.trim();
  if ($("channel").value.trim()) headers["X-Kronika-Channel"] = $("channel").value.trim();
  const answer = await fetch(path, { headers });
  if (!answer.ok) {
    let detail = await answer.text();
    try { detail = JSON.parse(detail).detail; } catch (e) { /* plain text */ }
    throw new Error(answer.status + ": " + detail);
  }
  return answer.blob();
}

async function exportZip() {
  const blob = await download("/v1/export/markdown?agent=" + encodeURIComponent(state.agent));
  const a = $("export-zip-link");
  a.href = URL.createObjectURL(blob);
  a.download = `kronika-${state.agent}.zip`;
  a.textContent = `kronika-${state.agent}.zip (${blob.size} bytes)`;
  a.hidden = false;
  say("Markdown zip ready");
}

async function importFile(event) {
  event.preventDefault();
  const file = $("import-file").files[0];
  if (!file) return;
  let document_;
  try {
    document_ = JSON.parse(await file.text());
  } catch (e) {
    throw new Error(`${file.name} is not JSON: ${e.message}`);
  }
  const report = await api("POST", "/v1/import", { document: document_, replace: $("import-replace").checked });
  const box = $("import-report");
  box.replaceChildren(el("h3", "Imported"));
  const ul = el("ul");
  for (const [name, value] of Object.entries(report)) {
    ul.appendChild(el("li", `${name}: ${typeof value === "object" ? JSON.stringify(value) : value}`));
  }
  box.appendChild(ul);
  const listed = await api("GET", "/v1/agents");
  const select = $("agent");
  select.replaceChildren();
  for (const name of listed.agents) select.appendChild(el("option", name));
  select.value = state.agent;
  say(`imported ${file.name}`);
}

loaders.export = async () => {
  $("import-form").hidden = !isAdmin();
};

// A table's cells carry their column's name, which the phone layout shows beside them.
function labelTables() {
  for (const t of document.querySelectorAll("main table")) {
    const heads = [...t.querySelectorAll("thead th")].map((th) => th.textContent);
    for (const row of t.querySelectorAll("tbody tr")) {
      [...row.cells].forEach((td, n) => { if (heads[n]) td.dataset.label = heads[n]; });
    }
  }
}
let labelling = false;
new MutationObserver(() => {
  if (labelling) return;
  labelling = true;
  requestAnimationFrame(() => { labelTables(); labelling = false; });
}).observe(document.querySelector("main"), { childList: true, subtree: true });

// The views' bar answers the arrow keys, Home and End as well as Tab.
$("tabs").addEventListener("keydown", (e) => {
  const tabs = [...$("tabs").querySelectorAll("button")];
  const at = tabs.indexOf(document.activeElement);
  const to = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: tabs.length - 1 }[e.key];
  if (at < 0 || to === undefined) return;
  e.preventDefault();
  tabs[(to + tabs.length) % tabs.length].focus();
});

$("export-zip").addEventListener("click", () => exportZip().catch((err) => say(err.message, true)));
$("import-form").addEventListener("submit", (e) => importFile(e).catch((err) => say(err.message, true)));
