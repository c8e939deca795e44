// kronika's memory browser: one page over the /v1 API, with the key kept in this tab only.
"use strict";

const state = { key: sessionStorage.getItem("kronika-key") || "", me: null, agent: "", facts: [] };
const $ = (id) => document.getElementById(id);

function say(text, bad) {
  const status = $("status");
  status.textContent = text || "";
  status.className = bad ? "bad" : "";
}

async function api(method, path, body) {
  const headers = { Authorization: "Bearer " + state.key };
  const user = $("user").value.trim();
  const channel = $("channel").value.trim();
  if (user) headers["X-Kronika-User"] = user;
  if (channel) headers["X-Kronika-Channel"] = channel;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const answer = await fetch(path, {
    method, headers, body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await answer.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch (e) { data = text; }
  if (!answer.ok) {
    const detail = data && typeof data === "object" ? data.message || data.detail || data : data;
    const message = typeof detail === "string" ? detail : JSON.stringify(detail);
    throw new Error(answer.status + ": " + message);
  }
  return data;
}

// A time as a person reads it, in this browser's time zone: "today 14:05",
// "yesterday 09:30", "3 Nov", "3 Nov 2024"; the exact time is in its tooltip.
const TIME = new Intl.DateTimeFormat("en-GB", { hour: "2-digit", minute: "2-digit", hour12: false });
const DAY = new Intl.DateTimeFormat("en-GB", { day: "numeric", month: "short" });
const DAY_YEAR = new Intl.DateTimeFormat("en-GB", { day: "numeric", month: "short", year: "numeric" });
const FULL = new Intl.DateTimeFormat("en-GB", { dateStyle: "full", timeStyle: "short" });

function when(iso) {
  if (!iso) return "";
  const t = new Date(iso);
  if (Number.isNaN(t.getTime())) return String(iso);
  const now = new Date();
  const midnight = (d) => new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime();
  const days = Math.round((midnight(now) - midnight(t)) / 86400000);
  if (days === 0) return "today " + TIME.format(t);
  if (days === 1) return "yesterday " + TIME.format(t);
  return (t.getFullYear() === now.getFullYear() ? DAY : DAY_YEAR).format(t);
}

function timeCell(row, iso) {
  const td = cell(row, "", "num");
  if (!iso) return td;
  const time = document.createElement("time");
  time.dateTime = iso;
  time.textContent = when(iso);
  const t = new Date(iso);
  if (!Number.isNaN(t.getTime())) time.title = FULL.format(t);
  td.appendChild(time);
  return td;
}

// A modal dialog whose form runs `confirm` on submit: true once it succeeded, false when
// cancelled (Cancel, Escape). A failure is shown in the dialog, which stays open.
function ask(dialog, confirm) {
  const form = dialog.querySelector("form");
  const error = dialog.querySelector("[role=alert]");
  const cancelButton = dialog.querySelector("button[type=button]");
  error.textContent = "";
  return new Promise((resolve) => {
    let done = false;
    const submit = async (e) => {
      e.preventDefault();
      try {
        await confirm();
        done = true;
        dialog.close();
      } catch (err) {
        error.textContent = err.message;
      }
    };
    const cancel = () => dialog.close();
    const closed = () => {
      form.removeEventListener("submit", submit);
      cancelButton.removeEventListener("click", cancel);
      dialog.removeEventListener("close", closed);
      resolve(done);
    };
    form.addEventListener("submit", submit);
    cancelButton.addEventListener("click", cancel);
    dialog.addEventListener("close", closed);
    dialog.showModal();
  });
}

function cell(row, text, cls) {
  const td = document.createElement("td");
  td.textContent = text === null || text === undefined ? "" : String(text);
  if (cls) td.className = cls;
  row.appendChild(td);
  return td;
}

function button(label, onclick, cls) {
  const b = document.createElement("button");
  b.type = "button";
  b.textContent = label;
  b.className = cls || "";
  b.addEventListener("click", onclick);
  return b;
}

function body(id) {
  const tbody = $(id).querySelector("tbody");
  tbody.replaceChildren();
  return tbody;
}

const canWrite = () => state.me && state.me.role !== "reader";
const agentPath = (rest) => "/v1/agents/" + encodeURIComponent(state.agent) + rest;

// ------------------------------------------------------------------ sign in
async function signIn(key) {
  state.key = key;
  try {
    state.me = await api("GET", "/v1/me");
  } catch (error) {
    state.key = "";
    sessionStorage.removeItem("kronika-key");
    say("Sign-in refused: " + error.message, true);
    return;
  }
  sessionStorage.setItem("kronika-key", key);
  const listed = await api("GET", "/v1/agents");
  const select = $("agent");
  select.replaceChildren();
  for (const name of listed.agents) {
    const option = document.createElement("option");
    option.textContent = name;
    select.appendChild(option);
  }
  state.agent = state.me.agent || listed.agents[0] || "";
  select.value = state.agent;
  $("identity").textContent = `tenant ${state.me.tenant}, ${state.me.role} key`;
  $("signin").hidden = true;
  $("who").hidden = false;
  document.body.classList.toggle("read-only", !canWrite());
  say("");
  const none = !state.agent;  // a tenant with no agent yet: nothing to show but how to make one
  $("no-agent").hidden = !none;
  $("tabs").hidden = none;
  $("agent").disabled = none;
  if (!none) show("brain");
}

function signOut() {
  sessionStorage.removeItem("kronika-key");
  state.key = "";
  state.me = null;
  location.reload();
}

// -------------------------------------------------------------------- views
const loaders = {};

async function show(view) {
  say("");
  for (const section of document.querySelectorAll(".view")) section.hidden = true;
  for (const tab of document.querySelectorAll("#tabs button")) {
    if (tab.dataset.view === view) tab.setAttribute("aria-current", "page");
    else tab.removeAttribute("aria-current");
  }
  $("view-" + view).hidden = false;
  try {
    if (loaders[view]) await loaders[view]();
  } catch (error) {
    say(error.message, true);
  }
}

loaders.brain = async () => {
  const wake = await api("GET", agentPath("/wake"));
  const box = $("wake");
  box.replaceChildren();
  for (const [title, text, tokens, budget] of [
    ["Identity", wake.identity, wake.parts ? wake.parts.identity : null, wake.budgets ? wake.budgets.identity : null],
    ["<memory> block", wake.memory_block, wake.parts ? wake.parts.memory_block : null, wake.budgets ? wake.budgets.memory_block : null],
    ["Active Context", wake.active_context, wake.parts ? wake.parts.active_context : null, wake.budgets ? wake.budgets.active_context : null],
  ]) {
    const figure = document.createElement("figure");
    const caption = document.createElement("figcaption");
    caption.textContent = title + (tokens !== null ? ` — ${tokens} of ${budget} tokens` : "");
    const meter = document.createElement("meter");
    meter.min = 0;
    meter.max = budget || 1;
    meter.value = tokens || 0;
    meter.setAttribute("aria-label", title + " tokens");
    const pre = document.createElement("pre");
    pre.textContent = text || "(empty)";
    figure.append(caption, meter, pre);
    box.appendChild(figure);
  }
  const facts = await api("GET", agentPath("/facts?include_archived=false"));
  const tbody = body("brain-facts");
  for (const fact of facts.facts) {
    const row = document.createElement("tr");
    cell(row, fact.key);
    cell(row, fact.value || fact.content);
    cell(row, fact.section);
    const edit = cell(row, "", "edit");
    if (fact.key && canWrite()) {
      edit.appendChild(button("Edit", () => editFact(fact), "edit-fact"));
    }
    tbody.appendChild(row);
  }
};

async function editFact(fact) {
  $("edit-old").textContent = `${fact.key}: ${fact.value || fact.content}`;
  $("edit-label").textContent = `New value of ${fact.key}`;
  $("edit-value").value = fact.value || "";
  let receipt = null;
  const saved = await ask($("edit-dialog"), async () => {
    const value = $("edit-value").value.trim();
    if (!value) throw new Error("Type the new value.");
    receipt = await api("POST", agentPath("/memories"), { key: fact.key, value });
  });
  if (!saved) return;
  await loaders.brain();
  const value = receipt.item ? receipt.item.value || receipt.item.content : "";
  say(receipt.outcome === "proposed"
    ? `${fact.key}: proposed, waiting for approval`
    : `${fact.key} is now ${value}; the old value is kept as history`);
}

loaders.facts = async () => {
  const facts = await api("GET", agentPath("/facts"));
  const keys = [...new Set(facts.facts.filter((f) => f.key).map((f) => f.key))];
  const values = [];
  for (const key of keys) {
    const history = await api("GET", agentPath("/history?key=" + encodeURIComponent(key)));
    values.push(...history.values);
  }
  state.facts = values;
  drawFacts();
};

function drawFacts() {
  const asof = $("asof").value ? new Date($("asof").value + "T23:59:59Z") : null;
  const tbody = body("facts");
  for (const fact of state.facts) {
    const from = fact.valid_from ? new Date(fact.valid_from) : new Date(fact.created_at);
    const to = fact.valid_to ? new Date(fact.valid_to) : null;
    const trueThen = asof ? from <= asof && (to === null || to > asof) : fact.status !== "superseded";
    if (!trueThen) continue;
    const row = document.createElement("tr");
    cell(row, fact.key);
    cell(row, fact.value || fact.content);
    timeCell(row, fact.valid_from || fact.created_at);
    timeCell(row, fact.valid_to || "");
    cell(row, fact.status);
    cell(row, "").appendChild(button("Explain", () => openExplain(fact.id), "explain"));  // pages.js
    tbody.appendChild(row);
  }
}

async function search(event) {
  event.preventDefault();
  const payload = { query: $("query").value, k: 20, explain: true, record_access: false };
  if ($("since").value.trim()) payload.since = $("since").value.trim();
  if ($("type").value) payload.types = [$("type").value];
  const result = await api("POST", agentPath("/recall"), payload);
  const tbody = body("hits");
  for (const hit of result.hits) {
    const row = document.createElement("tr");
    const parts = hit.explain || {};
    cell(row, hit.score.toFixed(3), "num");
    cell(row, parts.relevance !== undefined ? parts.relevance.toFixed(3) : "", "num");
    cell(row, parts.importance !== undefined ? parts.importance.toFixed(2) : "", "num");
    cell(row, parts.recency !== undefined ? parts.recency.toFixed(3) : "", "num");
    cell(row, parts.rerank_score !== null && parts.rerank_score !== undefined ? parts.rerank_score.toFixed(3) : "—", "num");
    cell(row, hit.item.type);
    cell(row, hit.item.content);
    const cite = cell(row, "", "cite");
    const link = document.createElement("a");
    link.href = "#";
    link.textContent = hit.citation;
    link.className = "citation";
    link.addEventListener("click", (e) => { e.preventDefault(); openSource(hit.item); });
    cite.appendChild(link);
    tbody.appendChild(row);
  }
  say(`${result.hits.length} of ${result.candidates} candidates`);
}

async function openSource(item) {
  const box = $("source");
  box.replaceChildren();
  const title = document.createElement("h3");
  title.textContent = item.citation;
  box.appendChild(title);
  const list = document.createElement("ol");
  list.className = "source-lines";
  const sid = item.provenance && item.provenance.session_id;
  if (sid) {
    const session = await api("GET", agentPath("/sessions/" + encodeURIComponent(sid)));
    for (const turn of session.turns || []) {
      const li = document.createElement("li");
      li.textContent = `${turn.speaker}: ${turn.content}`;
      if (turn.id === item.id) li.className = "cited";
      list.appendChild(li);
    }
  } else {
    const li = document.createElement("li");
    li.className = "cited";
    li.textContent = item.content;
    list.appendChild(li);
  }
  box.appendChild(list);
}

loaders.items = async () => {
  const listed = await api("GET", agentPath("/memories?limit=200"));
  state.items = listed.items;
  for (const select of $("item-filters").querySelectorAll("select")) {
    const field = select.dataset.field;
    const chosen = select.value;
    const values = [...new Set(listed.items.map((item) => item[field] || "-"))].sort();
    select.replaceChildren(new Option("any", ""));
    for (const value of values) {
      select.appendChild(new Option(value === "-" ? `(no ${field})` : value, value));
    }
    select.value = values.includes(chosen) ? chosen : "";
  }
  drawItems();
};

function drawItems() {
  const wanted = [...$("item-filters").querySelectorAll("select")]
    .filter((select) => select.value)
    .map((select) => [select.dataset.field, select.value]);
  const shown = (state.items || []).filter(
    (item) => wanted.every(([field, value]) => (item[field] || "-") === value));
  const tbody = body("items");
  for (const item of shown) {
    const row = document.createElement("tr");
    timeCell(row, item.created_at);
    cell(row, item.type);
    cell(row, item.content);
    cell(row, item.citation, "cite");
    const act = cell(row, "", "edit");
    const label = `the ${item.type} “${item.content}”`;
    if (canWrite()) act.appendChild(button("Forget…", () => forget({ id: item.id }, label), "forget"));
    tbody.appendChild(row);
  }
  const total = (state.items || []).length;
  $("items-count").textContent = shown.length === total ? `${total} items` : `${shown.length} of ${total} items`;
}

// Forgetting asks first: the server says what would go (a dry run), the dialog shows
// it, and only "Forget" forgets. The receipt shown is always this forget's, or why it
// could not be done.
async function forget(what, label) {
  const box = $("receipt");
  box.replaceChildren();
  let preview;
  try {
    preview = await api("POST", agentPath("/forget"), { ...what, dry_run: true });
  } catch (error) {
    box.append(el("h3", `Nothing forgotten: ${label}`), el("p", error.message, "bad"));
    return;
  }
  if (!preview.forgotten.length) {
    box.append(el("h3", `Nothing forgotten: ${label}`),
      el("p", "Nothing in this agent's memory matches it."));
    return;
  }
  $("forget-what").textContent = `Forget ${label}? These ${preview.forgotten.length} item(s) go:`;
  $("forget-items").replaceChildren(...preview.forgotten.map(
    (item) => el("li", `${item.content} (${item.citation})`)));
  $("forget-places").replaceChildren(...preview.places.map(
    (place) => el("li", `${place.path}: ${place.action} ${place.count}`)));
  let receipt = null;
  const done = await ask($("forget-dialog"), async () => {
    receipt = await api("POST", agentPath("/forget"), what);
  });
  if (!done) {
    say("Nothing was forgotten.");
    return;
  }
  const title = receipt.outcome === "proposed"
    ? `Proposed (${receipt.proposal}): ${label} is forgotten once approved`
    : `Forgotten: ${receipt.forgotten.length} item(s) (${receipt.outcome}) — ${label}`;
  const list = document.createElement("ul");
  for (const place of receipt.places) {
    const li = document.createElement("li");
    li.textContent = `${place.path}: ${place.action} ${place.count}`;
    list.appendChild(li);
  }
  const index = document.createElement("p");
  index.textContent = `index rows removed ${receipt.index.removed}, rewritten ${receipt.index.rewritten}; audit entries redacted ${receipt.audit_redacted}`;
  box.append(el("h3", title), list, index);
  await loaders.items();
}

loaders.sessions = async () => {
  const listed = await api("GET", agentPath("/sessions"));
  const tbody = body("sessions");
  for (const session of listed.sessions.slice().reverse()) {
    const row = document.createElement("tr");
    const first = cell(row, "");
    const link = document.createElement("a");
    link.href = "#";
    link.textContent = session.session_id;
    link.className = "session";
    link.addEventListener("click", (e) => { e.preventDefault(); openSession(session.session_id); });
    first.appendChild(link);
    cell(row, session.status);
    cell(row, (session.fields && session.fields.summary) || "");
    tbody.appendChild(row);
  }
};

async function openSession(id) {
  const session = await api("GET", agentPath("/sessions/" + encodeURIComponent(id)));
  const box = $("transcript");
  box.replaceChildren();
  const title = document.createElement("h3");
  title.textContent = id;
  const list = document.createElement("ol");
  for (const turn of session.turns || []) {
    const li = document.createElement("li");
    li.textContent = `${turn.speaker}: ${turn.content}`;
    list.appendChild(li);
  }
  box.append(title, list);
}

loaders.lessons = async () => {
  const retired = $("retired").checked ? "?include_retired=true" : "";
  const listed = await api("GET", agentPath("/lessons" + retired));
  const tbody = body("lessons");
  for (const x of listed.lessons) {
    const row = document.createElement("tr");
    cell(row, x.kind);
    cell(row, x.score.toFixed(2));
    cell(row, x.helped);
    cell(row, x.hurt);
    cell(row, x.status);
    cell(row, x.text);
    tbody.appendChild(row);
  }
  if (!listed.lessons.length) say("no lessons yet");
};

loaders.proposals = async () => {
  const listed = await api("GET", agentPath("/proposals"));
  const tbody = body("proposals");
  for (const p of listed.proposals) {
    const row = document.createElement("tr");
    cell(row, p.id);
    cell(row, p.from);
    cell(row, p.summary);
    const act = cell(row, "", "edit");
    if (canWrite()) {
      act.appendChild(button("Approve", () => settle(p.id, "approve"), "approve"));
      act.appendChild(button("Reject", () => settle(p.id, "reject"), "reject"));
    }
    tbody.appendChild(row);
  }
  if (!listed.proposals.length) say("nothing waits for approval");
};

async function settle(id, verb) {
  await api("POST", agentPath(`/proposals/${encodeURIComponent(id)}/${verb}`));
  await loaders.proposals();
  say(`${id}: ${verb === "approve" ? "approved" : "rejected"}`);
}

loaders.audit = async () => {
  const listed = await api("GET", agentPath("/audit?limit=500"));
  state.audit = listed.entries;
  drawAudit();
};

function drawAudit() {
  const words = $("audit-filter").value.trim().toLowerCase();
  const tbody = body("audit");
  for (const e of (state.audit || []).slice().reverse()) {
    const line = `${e.action} ${e.source_agent} ${e.target_agent} ${e.outcome} ${e.summary}`.toLowerCase();
    if (words && !line.includes(words)) continue;
    const row = document.createElement("tr");
    timeCell(row, e.at);
    cell(row, e.action);
    cell(row, e.source_agent);
    cell(row, e.outcome);
    cell(row, e.summary);
    tbody.appendChild(row);
  }
}

async function exportJson() {
  const data = await api("GET", "/v1/export?agent=" + encodeURIComponent(state.agent));
  const blob = new Blob([JSON.stringify(data, null, 2)], { type: "application/json" });
  const link = $("export-link");
  link.href = URL.createObjectURL(blob);
  link.hidden = false;
  link.textContent = `kronika-export.json (${blob.size} bytes)`;
  say("export ready");
}

// -------------------------------------------------------------------- wiring
$("signin").addEventListener("submit", (e) => { e.preventDefault(); signIn($("key").value.trim()); });
$("signout").addEventListener("click", signOut);
$("agent").addEventListener("change", () => { state.agent = $("agent").value; show("brain"); });
for (const tab of document.querySelectorAll("#tabs button")) {
  tab.addEventListener("click", () => show(tab.dataset.view));
}
$("search-form").addEventListener("submit", (e) => search(e).catch((err) => say(err.message, true)));
$("forget-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const topic = $("forget-topic").value.trim();
  if (topic) forget({ topic }, `everything about “${topic}”`).catch((err) => say(err.message, true));
});
$("item-filters").addEventListener("change", drawItems);
$("asof").addEventListener("change", drawFacts);
$("retired").addEventListener("change", () => loaders.lessons().catch((err) => say(err.message, true)));
$("asof-clear").addEventListener("click", () => { $("asof").value = ""; drawFacts(); });
$("audit-filter").addEventListener("input", drawAudit);
$("export-json").addEventListener("click", () => exportJson().catch((err) => say(err.message, true)));
if (state.key) signIn(state.key);
