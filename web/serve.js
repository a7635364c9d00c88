// parity serve's page: every figure comes from the JSON API (docs/SERVE.md); nothing is
// computed here but layout. Stable element ids for the tests (tests/cli/test_serve.py).
"use strict";

const state = { offset: 0, limit: 50, total: 0, picked: [], explainOffset: 0, charts: {} };

function $(id) { return document.getElementById(id); }

async function api(path) {
  const response = await fetch(path, { headers: { Accept: "application/json" } });
  const body = await response.json();
  if (!response.ok) throw new Error(body.error || ("HTTP " + response.status));
  return body;
}

function cell(row, text, cls) {
  const td = document.createElement("td");
  td.textContent = text === null || text === undefined ? "" : String(text);
  if (cls) td.className = cls;
  row.appendChild(td);
  return td;
}

function utc(seconds) {
  if (typeof seconds !== "number") return "";
  return new Date(seconds * 1000).toISOString().replace("T", " ").slice(0, 19);
}

function num(x) {
  if (typeof x !== "number") return "";
  const a = Math.abs(x);
  return a !== 0 && (a < 1e-3 || a >= 1e6) ? x.toExponential(3) : x.toPrecision(4);
}

function show(page) {
  for (const section of document.querySelectorAll(".page")) section.hidden = section.id !== "page-" + page;
  for (const button of document.querySelectorAll("nav button")) {
    button.classList.toggle("active", button.dataset.page === page);
  }
  if (page === "trends") loadMetrics();
  if (page === "reports") loadReports();
}

function setStatus(text) { $("status-line").textContent = text; }

// Runs: filtered, paged, polled every 2 s so that a collect writing the store shows up live.
function runsQuery() {
  const q = new URLSearchParams({ offset: state.offset, limit: state.limit });
  if ($("runs-kind").value) q.set("kind", $("runs-kind").value);
  if ($("runs-status").value) q.set("status", $("runs-status").value);
  if ($("runs-search").value) q.set("q", $("runs-search").value);
  return "/api/runs?" + q.toString();
}

let lastRunsText = "";
async function loadRuns() {
  let body;
  try {
    body = await api(runsQuery());
  } catch (e) {
    setStatus("runs: " + e.message);
    return;
  }
  const text = JSON.stringify(body.runs) + body.total;
  state.total = body.total;
  $("runs-range").textContent = body.total === 0 ? "no runs" :
    `${body.offset + 1}-${body.offset + body.runs.length} of ${body.total}`;
  if (text !== lastRunsText) {
    lastRunsText = text;
    const tbody = $("runs-table").tBodies[0];
    tbody.replaceChildren();
    for (const run of body.runs) {
      const tr = document.createElement("tr");
      tr.dataset.id = run.id;
      tr.dataset.kind = run.kind;
      if (state.picked.includes(run.id)) tr.classList.add("picked");
      const pick = document.createElement("input");
      pick.type = "checkbox";
      pick.className = "pick";
      pick.checked = state.picked.includes(run.id);
      pick.disabled = run.kind !== "collect";
      pick.addEventListener("change", () => togglePick(run.id, pick.checked));
      cell(tr, "").appendChild(pick);
      cell(tr, run.id, "num");
      cell(tr, utc(run.started));
      cell(tr, run.kind);
      cell(tr, run.status, run.status);
      cell(tr, run.node);
      cell(tr, run.plan);
      cell(tr, run.level, "num");
      cell(tr, run.bundle);
      tbody.appendChild(tr);
    }
  }
  setStatus(`${body.total} runs · updated ${new Date().toLocaleTimeString()}`);
  document.body.dataset.runsReady = "1";
}

function togglePick(id, on) {
  state.picked = state.picked.filter((x) => x !== id);
  if (on) state.picked.push(id);
  while (state.picked.length > 2) state.picked.shift();
  lastRunsText = "";
  loadRuns();
  $("runs-compare").disabled = state.picked.length !== 2;
}

// Trends.
async function loadMetrics() {
  if ($("trend-metric").options.length > 0) return;
  const body = await api("/api/metrics");
  for (const m of body.metrics) {
    const option = document.createElement("option");
    option.value = m.name;
    option.textContent = `${m.name} (${m.points})`;
    $("trend-metric").appendChild(option);
  }
}

async function loadTrend() {
  const q = new URLSearchParams({ metric: $("trend-metric").value });
  if ($("trend-node").value) q.set("node", $("trend-node").value);
  const body = await api("/api/trend?" + q.toString());
  const tbody = $("trend-table").tBodies[0];
  tbody.replaceChildren();
  const changes = $("trend-changes").tBodies[0];
  changes.replaceChildren();
  const datasets = [];
  for (const s of body.series) {
    const t = s.trend;
    const tr = document.createElement("tr");
    cell(tr, t.node);
    cell(tr, t.name);
    cell(tr, t.dtype);
    cell(tr, JSON.stringify(t.params));
    cell(tr, t.points, "num");
    cell(tr, num(t.first) + " " + (t.unit || ""), "num");
    cell(tr, num(t.last) + " " + (t.unit || ""), "num");
    cell(tr, typeof t.change === "number" ? (t.change * 100).toFixed(1) + "%" : "", "num");
    cell(tr, t.verdict, t.verdict);
    tbody.appendChild(tr);
    const label = `${t.node || ""} ${t.name} ${t.dtype || ""}`;
    datasets.push({ label, data: s.points.map((p) => ({ x: p.started * 1000, y: p.value })),
                    showLine: true, pointRadius: 2 });
    const bands = s.points.filter((p) => p.band);
    if (bands.length > 0) {
      datasets.push({ label: label + " noise band (low)", data: bands.map((p) => ({ x: p.started * 1000, y: p.band[0] })),
                      showLine: true, pointRadius: 0, borderDash: [4, 4], borderWidth: 1 });
      datasets.push({ label: label + " noise band (high)", data: bands.map((p) => ({ x: p.started * 1000, y: p.band[1] })),
                      showLine: true, pointRadius: 0, borderDash: [4, 4], borderWidth: 1 });
    }
    for (const c of s.change_points) {
      const row = document.createElement("tr");
      cell(row, utc(c.started));
      cell(row, `${num(c.from)} → ${num(c.to)}`, "num");
      cell(row, c.verdict, c.verdict);
      const diffs = c.env_diff.map((d) => `${d.key}: ${JSON.stringify(d.baseline)} → ${JSON.stringify(d.candidate)}`);
      cell(row, diffs.length ? diffs.join("; ") : "no recorded difference");
      changes.appendChild(row);
    }
  }
  drawScatter("trend", $("trend-chart"), datasets, "time", body.metric);
  document.body.dataset.trendReady = "1";
}

function drawScatter(name, canvas, datasets, xTitle, yTitle, logY) {
  if (typeof Chart === "undefined") return;
  if (state.charts[name]) state.charts[name].destroy();
  state.charts[name] = new Chart(canvas, {
    type: "scatter",
    data: { datasets },
    options: {
      animation: false, maintainAspectRatio: false, parsing: true,
      scales: {
        x: { title: { display: true, text: xTitle },
             ticks: xTitle === "time" ? { callback: (v) => utc(v / 1000).slice(0, 10) } : {} },
        y: { type: logY ? "logarithmic" : "linear", title: { display: true, text: yTitle } },
      },
    },
  });
}

// Compare: every figure from /api/compare (bench compare, env diff, accept's criteria).
async function loadCompare() {
  const a = $("compare-a").value.trim(), b = $("compare-b").value.trim();
  const problem = $("compare-problem");
  problem.hidden = true;
  for (const id of ["compare-table", "criteria-table", "envdiff-table"]) $(id).tBodies[0].replaceChildren();
  let body;
  try {
    body = await api(`/api/compare?a=${encodeURIComponent(a)}&b=${encodeURIComponent(b)}`);
  } catch (e) {
    problem.textContent = e.message;
    problem.hidden = false;
    document.body.dataset.compareReady = "error";
    return;
  }
  const tbody = $("compare-table").tBodies[0];
  for (const stage of body.throughput) {
    if (!stage.report) {
      const tr = document.createElement("tr");
      cell(tr, stage.stage);
      cell(tr, stage.problem, "error");
      tbody.appendChild(tr);
      continue;
    }
    for (const c of stage.report.comparisons) {
      const tr = document.createElement("tr");
      const label = [c.benchmark, c.dtype, JSON.stringify(c.params)].filter((x) => x && x !== "{}").join(" ");
      tr.dataset.label = label;
      tr.dataset.ratio = c.ratio;
      cell(tr, stage.stage);
      cell(tr, label);
      cell(tr, num(c.base_median) + " " + (c.unit || ""), "num");
      cell(tr, num(c.cand_median) + " " + (c.unit || ""), "num");
      cell(tr, num(c.ratio), "num ratio");
      cell(tr, typeof c.ci_low === "number" ? `[${num(c.ci_low)}, ${num(c.ci_high)}]` : "", "num");
      cell(tr, c.verdict, c.verdict);
      tbody.appendChild(tr);
    }
  }
  const criteria = $("criteria-table").tBodies[0];
  for (const c of body.criteria) {
    const tr = document.createElement("tr");
    cell(tr, c.id);
    cell(tr, c.status, c.status);
    cell(tr, c.reason);
    criteria.appendChild(tr);
  }
  const env = $("envdiff-table").tBodies[0];
  for (const d of body.env_diff.differences.slice(0, 200)) {
    const tr = document.createElement("tr");
    cell(tr, d.key);
    cell(tr, JSON.stringify(d.baseline));
    cell(tr, JSON.stringify(d.candidate));
    cell(tr, d.note);
    env.appendChild(tr);
  }
  const dumps = $("compare-dumps");
  dumps.replaceChildren();
  for (const d of body.dumps) {
    const button = document.createElement("button");
    button.textContent = `Explain dump stage ${d.stage}`;
    button.addEventListener("click", () => {
      $("explain-a").value = a;
      $("explain-b").value = b;
      show("explain");
      state.explainOffset = 0;
      loadExplain();
    });
    dumps.appendChild(button);
  }
  document.body.dataset.compareReady = "1";
}

// Reports.
async function loadReports() {
  const body = await api("/api/reports");
  const tbody = $("reports-table").tBodies[0];
  tbody.replaceChildren();
  for (const r of body.reports) {
    const tr = document.createElement("tr");
    const link = cell(tr, "");
    const a = document.createElement("a");
    a.href = r.url;
    a.textContent = r.path;
    a.addEventListener("click", (e) => { e.preventDefault(); $("report-frame").src = r.url; });
    link.appendChild(a);
    if (!r.readable) {
      cell(tr, "unreadable: " + r.problem, "error");
    } else {
      cell(tr, r.verdict, r.verdict);
    }
    cell(tr, r.created);
    const sig = r.signature;
    const changed = [...(sig.changed || []), ...(sig.added || []), ...(sig.missing || [])];
    cell(tr, sig.status + (changed.length ? ": " + changed.join(", ") : "") + (sig.problem ? ": " + sig.problem : ""), sig.status);
    tbody.appendChild(tr);
  }
  document.body.dataset.reportsReady = "1";
}

// Explain browser: one page of op calls at a time, filtered on the server.
async function loadExplain() {
  const q = new URLSearchParams({ offset: state.explainOffset, limit: 100 });
  if ($("explain-dir-a").value && $("explain-dir-b").value) {
    q.set("dir_a", $("explain-dir-a").value);
    q.set("dir_b", $("explain-dir-b").value);
  } else {
    q.set("a", $("explain-a").value.trim());
    q.set("b", $("explain-b").value.trim());
  }
  for (const [key, id] of [["cause", "explain-cause"], ["pass", "explain-pass"], ["step", "explain-step"], ["module", "explain-module"]]) {
    if ($(id).value.trim()) q.set(key, $(id).value.trim());
  }
  let body;
  try {
    body = await api("/api/explain?" + q.toString());
  } catch (e) {
    $("explain-summary").textContent = e.message;
    return;
  }
  $("explain-summary").textContent = `${body.total} op calls, ${body.matched} match; ` +
    Object.entries(body.causes).map(([k, v]) => `${k} ${v}`).join(", ");
  $("explain-range").textContent = body.matched === 0 ? "none" :
    `${body.offset + 1}-${body.offset + body.ops.length} of ${body.matched}`;
  const tbody = $("explain-table").tBodies[0];
  tbody.replaceChildren();
  for (const op of body.ops) {
    const tr = document.createElement("tr");
    cell(tr, op.seq, "num");
    cell(tr, op.step, "num");
    cell(tr, op.pass);
    cell(tr, op.name);
    cell(tr, op.op);
    cell(tr, op.cause, op.cause);
    cell(tr, num(op.output_diff), "num");
    cell(tr, op.reason);
    tbody.appendChild(tr);
  }
  const points = body.plot.filter((p) => p.error > 0).map((p) => ({ x: p.seq, y: p.error }));
  drawScatter("explain", $("explain-chart"), [{ label: "output difference (rms rel.)", data: points, pointRadius: 2 }],
              "op call (seq)", "relative error", true);
  state.explainMatched = body.matched;
  document.body.dataset.explainReady = "1";
}

function init() {
  for (const button of document.querySelectorAll("nav button")) {
    button.addEventListener("click", () => show(button.dataset.page));
  }
  for (const id of ["runs-kind", "runs-status"]) $(id).addEventListener("change", () => { state.offset = 0; loadRuns(); });
  $("runs-search").addEventListener("input", () => { state.offset = 0; loadRuns(); });
  $("runs-prev").addEventListener("click", () => { state.offset = Math.max(0, state.offset - state.limit); loadRuns(); });
  $("runs-next").addEventListener("click", () => {
    if (state.offset + state.limit < state.total) state.offset += state.limit;
    loadRuns();
  });
  $("runs-compare").addEventListener("click", () => {
    $("compare-a").value = state.picked[0];
    $("compare-b").value = state.picked[1];
    show("compare");
    loadCompare();
  });
  $("compare-go").addEventListener("click", loadCompare);
  $("trend-go").addEventListener("click", loadTrend);
  $("explain-go").addEventListener("click", () => { state.explainOffset = 0; loadExplain(); });
  $("explain-prev").addEventListener("click", () => { state.explainOffset = Math.max(0, state.explainOffset - 100); loadExplain(); });
  $("explain-next").addEventListener("click", () => {
    if (state.explainOffset + 100 < (state.explainMatched || 0)) state.explainOffset += 100;
    loadExplain();
  });
  loadRuns();
  setInterval(loadRuns, 2000);
}

init();
