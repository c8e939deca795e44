// kronika's charts and policies views: inline SVG drawn from the /v1 chart routes, no library.
// Each chart is a <figure>: an SVG with role="img" whose <title> and <desc> say the figures,
// a legend, and a table of the same figures for anyone who would rather read them.
// Uses app.js's api, agentPath, loaders, $, cell and body (loaded before this file).
"use strict";

const Charts = (() => {
  const NS = "http://www.w3.org/2000/svg";
  const COLOURS = ["#1f5fbf", "#d9822b", "#2e8b57", "#8e44ad", "#c0392b", "#16a085", "#6b7280", "#b8860b", "#2c3e50", "#d6336c"];
  const HEIGHT = 200;
  const PAD = { left: 48, right: 10, top: 12, bottom: 34 };
  let serial = 0;

  function svg(name, attrs, text) {
    const node = document.createElementNS(NS, name);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function html(name, attrs, text) {
    const node = document.createElement(name);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
    if (text !== undefined) node.textContent = text;
    return node;
  }

  const plain = (v) => (Number.isInteger(v) ? String(v) : v.toFixed(4));
  const total = (values) => values.reduce((a, b) => a + b, 0);

  // A figure with its caption, an accessible SVG of `width` x `height`, a legend and a table.
  function frame(box, spec, height) {
    const id = "chart-" + ++serial;
    const figure = html("figure", { class: "chart", "data-chart": spec.key });
    figure.appendChild(html("figcaption", { id: id + "-cap" }, spec.title));
    box.appendChild(figure);  // measured in place: its width is what the layout gives it
    const width = Math.max(260, Math.floor(figure.clientWidth || 600));
    const drawing = svg("svg", {
      role: "img", width, height, viewBox: `0 0 ${width} ${height}`,
      "aria-labelledby": `${id}-t ${id}-d`,
    });
    drawing.append(svg("title", { id: id + "-t" }, spec.title), svg("desc", { id: id + "-d" }, describe(spec)));
    figure.appendChild(drawing);
    return { figure, drawing, width, height };
  }

  // What the chart shows, in words: each series' total and peak (or each meter's use).
  function describe(spec) {
    if (spec.rows) {
      return spec.rows.map((r) => `${r.name}: ${plain(r.value)} of ${plain(r.max)}${spec.unit ? " " + spec.unit : ""}${r.note ? " (" + r.note + ")" : ""}`).join("; ") + ".";
    }
    const said = spec.series.map((s) => {
      const sum = total(s.values);
      if (spec.running) return `${s.name}: ${plain(s.values[0])} on ${spec.labels[0]}, ${plain(s.values[s.values.length - 1])} on ${spec.labels[spec.labels.length - 1]}`;
      if (!sum) return `${s.name}: none`;
      const peak = Math.max(...s.values);
      return `${s.name}: ${plain(sum)} in all, at most ${plain(peak)} on ${spec.labels[s.values.indexOf(peak)]}`;
    });
    return `${spec.labels.length} days from ${spec.labels[0]} to ${spec.labels[spec.labels.length - 1]}. ${said.join("; ")}.`;
  }

  function legend(figure, names) {
    const list = html("ul", { class: "legend" });
    names.forEach((name, n) => {
      const item = html("li");
      item.append(html("span", { class: "swatch", style: `background:${COLOURS[n % COLOURS.length]}`, "aria-hidden": "true" }), document.createTextNode(name));
      list.appendChild(item);
    });
    figure.appendChild(list);
  }

  // The figures as a table: one row per day that has any (or per meter), in a <details>.
  function table(figure, spec) {
    const details = html("details");
    details.appendChild(html("summary", {}, "Figures"));
    const t = html("table", { class: "chart-data" });
    t.appendChild(html("caption", {}, spec.title));
    const head = html("tr");
    const columns = spec.rows ? [spec.rowLabel || "", "value", "out of", "note"] : [spec.rowLabel || "day", ...spec.series.map((s) => s.name)];
    for (const c of columns) head.appendChild(html("th", { scope: "col" }, c));
    const thead = html("thead");
    thead.appendChild(head);
    const tbody = html("tbody");
    const rows = spec.rows
      ? spec.rows.map((r) => [r.name, plain(r.value), plain(r.max), r.note || ""])
      : spec.labels.map((label, i) => [label, ...spec.series.map((s) => s.values[i])])
        .filter((row) => spec.running || row.slice(1).some((v) => v))
        .map((row) => [row[0], ...row.slice(1).map(plain)]);
    for (const values of rows) {
      const tr = html("tr");
      values.forEach((v, n) => tr.appendChild(html(n ? "td" : "th", n ? {} : { scope: "row" }, v)));
      tbody.appendChild(tr);
    }
    if (!rows.length) {
      const tr = html("tr");
      tr.appendChild(html("td", { colspan: columns.length }, "nothing in these days"));
      tbody.appendChild(tr);
    }
    t.append(thead, tbody);
    details.appendChild(t);
    figure.appendChild(details);
  }

  function axes(drawing, width, height, labels, top, format) {
    const bottom = height - PAD.bottom;
    drawing.appendChild(svg("line", { x1: PAD.left, x2: width - PAD.right, y1: bottom, y2: bottom, class: "axis" }));
    drawing.appendChild(svg("text", { x: PAD.left - 6, y: PAD.top + 4, "text-anchor": "end", class: "tick" }, format(top)));
    drawing.appendChild(svg("text", { x: PAD.left - 6, y: bottom, "text-anchor": "end", class: "tick" }, "0"));
    const band = (width - PAD.left - PAD.right) / labels.length;
    const shown = labels.length > 2 ? [0, Math.floor((labels.length - 1) / 2), labels.length - 1] : labels.map((_, i) => i);
    for (const i of shown) {
      const anchor = i === 0 ? "start" : i === labels.length - 1 ? "end" : "middle";
      const x = i === 0 ? PAD.left : i === labels.length - 1 ? width - PAD.right : PAD.left + band * (i + 0.5);
      drawing.appendChild(svg("text", { x, y: height - 12, "text-anchor": anchor, class: "tick" }, labels[i]));
    }
    return band;
  }

  // Bars per day: `stacked` piles the series up, otherwise they stand side by side.
  function bars(box, spec) {
    const { figure, drawing, width, height } = frame(box, spec, HEIGHT);
    const n = spec.labels.length;
    const sums = spec.labels.map((_, i) => total(spec.series.map((s) => s.values[i])));
    const top = Math.max(1, spec.stacked ? Math.max(0, ...sums) : Math.max(0, ...spec.series.flatMap((s) => s.values)));
    const band = axes(drawing, width, height, spec.labels, top, spec.format || plain);
    const scale = (height - PAD.top - PAD.bottom) / top;
    const inner = Math.max(1, band * 0.8);
    const each = spec.stacked ? inner : inner / spec.series.length;
    for (let i = 0; i < n; i++) {
      let base = height - PAD.bottom;
      spec.series.forEach((s, j) => {
        const value = s.values[i];
        if (!value) return;
        const h = Math.max(1, value * scale);
        const x = PAD.left + band * i + (band - inner) / 2 + (spec.stacked ? 0 : each * j);
        const y = spec.stacked ? base - h : height - PAD.bottom - h;
        const bar = svg("rect", {
          x: x.toFixed(1), y: y.toFixed(1), width: Math.max(1, each - (spec.stacked ? 0 : 1)).toFixed(1), height: h.toFixed(1),
          fill: COLOURS[j % COLOURS.length], class: "bar", "data-series": s.name, "data-label": spec.labels[i], "data-value": value,
        });
        bar.appendChild(svg("title", {}, `${spec.labels[i]}, ${s.name}: ${plain(value)}`));
        drawing.appendChild(bar);
        if (spec.stacked) base -= h;
      });
    }
    legend(figure, spec.series.map((s) => s.name));
    table(figure, spec);
    return figure;
  }

  // Lines with a point per day (a running total, for instance).
  function lines(box, given) {
    const spec = { ...given, running: true };
    const { figure, drawing, width, height } = frame(box, spec, HEIGHT);
    const top = Math.max(1, ...spec.series.flatMap((s) => s.values));
    const band = axes(drawing, width, height, spec.labels, top, spec.format || plain);
    const scale = (height - PAD.top - PAD.bottom) / top;
    spec.series.forEach((s, j) => {
      const colour = COLOURS[j % COLOURS.length];
      const at = s.values.map((v, i) => [PAD.left + band * (i + 0.5), height - PAD.bottom - v * scale]);
      drawing.appendChild(svg("polyline", { points: at.map(([x, y]) => `${x.toFixed(1)},${y.toFixed(1)}`).join(" "), fill: "none", stroke: colour, "stroke-width": 2, class: "line" }));
      at.forEach(([x, y], i) => {
        const point = svg("circle", { cx: x.toFixed(1), cy: y.toFixed(1), r: 3, fill: colour, class: "point", "data-series": s.name, "data-label": spec.labels[i], "data-value": s.values[i] });
        point.appendChild(svg("title", {}, `${spec.labels[i]}, ${s.name}: ${plain(s.values[i])}`));
        drawing.appendChild(point);
      });
    });
    legend(figure, spec.series.map((s) => s.name));
    table(figure, spec);
    return figure;
  }

  // One horizontal bar per row against its own maximum (a budget); past it shows red.
  function meters(box, spec) {
    const rowHeight = 40;
    const { figure, drawing, width } = frame(box, spec, rowHeight * spec.rows.length + 8);
    const full = width - 12;
    spec.rows.forEach((r, n) => {
      const y = 4 + n * rowHeight;
      const share = r.max > 0 ? r.value / r.max : r.value > 0 ? 1 : 0;
      drawing.appendChild(svg("text", { x: 6, y: y + 12, class: "tick" }, `${r.name}: ${plain(r.value)} of ${plain(r.max)}${spec.unit ? " " + spec.unit : ""}${r.note ? " · " + r.note : ""}`));
      drawing.appendChild(svg("rect", { x: 6, y: y + 18, width: full, height: 14, rx: 3, class: "track" }));
      const fill = svg("rect", {
        x: 6, y: y + 18, width: (full * Math.min(1, share)).toFixed(1), height: 14, rx: 3,
        fill: share > 1 ? "#a11c1c" : COLOURS[n % COLOURS.length], class: "meter", "data-label": r.name, "data-value": r.value, "data-max": r.max,
      });
      fill.appendChild(svg("title", {}, `${r.name}: ${plain(r.value)} of ${plain(r.max)}`));
      drawing.appendChild(fill);
    });
    table(figure, spec);
    return figure;
  }

  return { bars, lines, meters };
})();

// ------------------------------------------------------------------ the charts view
const chartState = { data: null };

loaders.charts = async () => {
  const q = "?days=" + encodeURIComponent($("chart-days").value);
  const [growth, recalls, llm, wake] = await Promise.all([
    api("GET", agentPath("/charts/growth" + q)),
    api("GET", agentPath("/charts/recalls" + q)),
    api("GET", agentPath("/charts/llm" + q)),
    api("GET", agentPath("/wake")),
  ]);
  chartState.data = { growth, recalls, llm, wake };
  drawCharts();
};

function drawCharts() {
  const data = chartState.data;
  const box = $("charts");
  box.replaceChildren();
  if (!data) return;
  const { growth, recalls, llm, wake } = data;
  const days = growth.days;
  const zeros = days.map(() => 0);
  const tiers = growth.tiers.map((t) => ({ name: t + "-term", values: growth.by_tier[t] || zeros }));
  Charts.bars(box, { key: "growth-tier", title: "Items added per day, by tier", labels: days, series: tiers, stacked: true });
  let size = growth.before;
  const running = days.map((_, i) => (size += tiers.reduce((a, s) => a + s.values[i], 0)));
  Charts.lines(box, { key: "growth-size", title: "Items kept, day by day", labels: days, series: [{ name: "items", values: running }] });
  const types = Object.entries(growth.by_type).map(([name, values]) => ({ name, values }));
  Charts.bars(box, { key: "growth-type", title: "Items added per day, by type", labels: days, series: types.length ? types : [{ name: "items", values: zeros }], stacked: true });

  const used = Charts.bars(box, {
    key: "recalls", title: "Recall use per day", labels: days, stacked: false,
    series: [{ name: "recalls", values: recalls.recalls }, { name: "items recalled", values: recalls.items }],
  });
  const sum = (values) => values.reduce((a, b) => a + b, 0);
  const note = document.createElement("p");
  note.className = "chart-note";
  note.textContent = `${sum(recalls.recalls)} recall(s) in all, which used items you may see ${sum(recalls.uses)} time(s) (from the recall log).`;
  used.appendChild(note);
  if (recalls.top.length) {
    const list = document.createElement("ol");
    list.className = "top-recalled";
    for (const t of recalls.top) {
      const li = document.createElement("li");
      li.textContent = `${t.uses}× ${t.type}: ${t.content}`;
      list.appendChild(li);
    }
    used.appendChild(list);
  }

  Charts.meters(box, {
    key: "wake", title: "Wake context: tokens against budget", unit: "tokens", rowLabel: "block",
    rows: [["Identity", "identity"], ["<memory> block", "memory_block"], ["Active Context", "active_context"]]
      .map(([name, part]) => ({ name, value: wake.parts[part], max: wake.budgets[part] })),
  });

  const ok = llm.calls.map((c, i) => c - llm.failed[i]);
  Charts.bars(box, { key: "llm-calls", title: "Model calls per day", labels: days, stacked: true, series: [{ name: "ok", values: ok }, { name: "failed", values: llm.failed }] });
  const tokens = Charts.bars(box, { key: "llm-tokens", title: "Model tokens per day", labels: days, stacked: true, series: [{ name: "tokens in", values: llm.tokens_in }, { name: "tokens out", values: llm.tokens_out }] });
  const cost = document.createElement("p");
  cost.className = "chart-note";
  const spent = llm.cost.reduce((a, b) => a + b, 0);
  cost.textContent = llm.priced ? `Estimated cost: ${spent.toFixed(4)}.` : "No prices set (llm_price_input, llm_price_output): no cost estimate.";
  tokens.appendChild(cost);
  const most = Math.max(1, ...llm.by_purpose.map((p) => p.tokens_in + p.tokens_out));
  Charts.meters(box, {
    key: "llm-purpose", title: "Model tokens by purpose", unit: "tokens", rowLabel: "purpose",
    rows: llm.by_purpose.length
      ? llm.by_purpose.map((p) => ({ name: p.purpose, value: p.tokens_in + p.tokens_out, max: most, note: `${p.calls} call(s)` + (llm.priced ? `, cost ${p.cost.toFixed(4)}` : "") }))
      : [{ name: "no model calls", value: 0, max: 1 }],
  });
}

let chartResize = 0;
window.addEventListener("resize", () => {
  clearTimeout(chartResize);
  chartResize = setTimeout(() => { if (!$("view-charts").hidden) drawCharts(); }, 150);
});
$("chart-days").addEventListener("change", () => loaders.charts().catch((err) => say(err.message, true)));

// ---------------------------------------------------------------- the policies view
const HOLDS = { short: "conversation turns", mid: "notes, summaries", long: "Brain facts and their history" };

loaders.policies = async () => {
  const found = await api("GET", agentPath("/policies"));
  const retention = body("retention");
  for (const [tier, days] of Object.entries(found.retention_days)) {
    const row = document.createElement("tr");
    cell(row, tier);
    cell(row, HOLDS[tier] || "");
    cell(row, days ? `${days} days` : "for ever");
    retention.appendChild(row);
  }
  const rules = body("policies");
  for (const p of found.policies) {
    const row = document.createElement("tr");
    cell(row, p.name);
    cell(row, p.applies_to);
    cell(row, p.effect);
    rules.appendChild(row);
  }
  if (!found.policies.length) {
    const row = document.createElement("tr");
    cell(row, "no rules for this agent: every item is stored in the tier it asks for").colSpan = 3;
    rules.appendChild(row);
  }
  const dms = found.dm_channels.length ? found.dm_channels.join(", ") : "none";
  const how = found.editable
    ? `Change them below; they live in ${found.edited_in}, and the command kronika policies shows them.`
    : `Read-only here (${found.not_editable}): the policies are edited in ${found.edited_in} in the workspace, and the command kronika policies shows them.`;
  $("policies-note").textContent = `Direct messages: channels named ${dms}. ${how}`;
  $("policies-form").hidden = !found.editable;
  if (found.editable) $("policies-toml").value = found.toml || "";
};

$("policies-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  try {
    await api("PUT", agentPath("/policies"), { toml: $("policies-toml").value });
    await loaders.policies();
    say("Policies saved and applied.");
  } catch (err) {
    say(err.message, true);
  }
});
