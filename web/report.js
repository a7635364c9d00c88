// SPDX-License-Identifier: Apache-2.0
// report.js: renders the report.json embedded in parity accept's report.html (format
// "parity-report" version 1) with the global Chart (Chart.js 3.9, Debian's libjs-chart.js, inlined before this script).
//
// Drawing contract, relied on by tests/cli/report_html_check.py: every chart is a
// <canvas class="parity-chart">; <html data-charts-expected> counts the charts created,
// <html data-charts-drawn> those rendered with at least one data point (each canvas then gets
// data-drawn="1"); <html data-ready="1"> (and data-ready-ms) once every section is built. A
// section or chart that throws is reported through console.error; the others are still built.
//
// Data only ever reaches the page as text (textContent, text nodes, attributes): never as HTML.
// This file stays ASCII (escapes for other characters) and never holds a closing script tag or
// an HTML comment opener, which would end or confuse the inline script it is assembled into.
(function () {
  "use strict";

  const root = document.documentElement;
  root.dataset.chartsExpected = "0";
  root.dataset.chartsDrawn = "0";

  const DASH = "\u2014";
  const MINUS = "\u2212";
  const DELTA = "\u0394";
  const DOT = " \u00b7 ";
  const STATUS_RANK = { fail: 0, error: 1, skip: 2, pass: 3 };
  const PART_RANK = { numerics: 0, quality: 1, throughput: 2, stability: 3 };
  const SECTION_PARTS = ["numerics", "quality", "throughput", "stability"];
  const C = {
    pass: "#1a7f37",
    fail: "#c62828",
    skip: "#6b7280",
    error: "#a15c00",
    warning: "#d08700",
    fatal: "#b71c1c",
    info: "#1565c0",
    origin: "#6a1b9a",
    structural: "#4a148c",
    zero: "#9aa3ad",
    same: "#546e7a",
    ref: "#37474f",
  };
  const VERDICT_COLOR = {
    faster: C.pass,
    slower: C.fail,
    same: C.same,
    invalid: C.skip,
    skipped: C.skip,
  };

  // ---- DOM and formatting helpers ----

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    if (attrs) {
      for (const [k, v] of Object.entries(attrs)) {
        if (v == null || v === false) continue;
        if (k === "class") node.className = v;
        else if (k === "text") node.textContent = String(v);
        else node.setAttribute(k, v === true ? "" : String(v));
      }
    }
    return append(node, children);
  }

  function append(node, children) {
    for (const c of children) {
      if (c == null || c === false) continue;
      if (Array.isArray(c)) append(node, c);
      else node.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return node;
  }

  function td(text, cls) {
    return el("td", { class: cls, text: text == null ? "" : text });
  }

  // A table in a scrolling wrapper; the headers listed in numeric are right-aligned.
  function table(headers, rows, numeric) {
    const head = headers.map((h) =>
      el("th", { class: numeric && numeric.includes(h) ? "num" : null, text: h }),
    );
    return el(
      "div",
      { class: "table-wrap" },
      el("table", null, el("thead", null, el("tr", null, head)), el("tbody", null, rows)),
    );
  }

  function isNum(v) {
    return typeof v === "number" && Number.isFinite(v);
  }

  function isObj(v) {
    return v != null && typeof v === "object" && !Array.isArray(v);
  }

  function errorText(e) {
    return e && e.message ? e.message : String(e);
  }

  function fmtNum(v) {
    if (!isNum(v)) return v == null ? DASH : String(v);
    if (Number.isInteger(v) && Math.abs(v) < 1e15) return String(v);
    const a = Math.abs(v);
    if (a !== 0 && (a < 1e-3 || a >= 1e6)) return v.toExponential(2);
    return String(Number(v.toPrecision(4)));
  }

  // A histogram bound, short: 1e-3, 0.5, 100.
  function fmtBound(v) {
    if (!isNum(v)) return String(v);
    if (v !== 0 && Math.abs(v) < 0.05) return v.toExponential().replace("e+", "e");
    return String(v);
  }

  // Axis ticks with SI prefixes, or binary ones for bytes.
  function fmtTick(v, unit) {
    if (!isNum(v)) return "";
    const a = Math.abs(v);
    const bytes = unit === "B" && a >= 1024;
    if (!bytes && !(a >= 1e3 && a < 1e15)) return fmtNum(v);
    const step = bytes ? 1024 : 1000;
    const units = bytes ? [" KiB", " MiB", " GiB", " TiB", " PiB"] : ["k", "M", "G", "T"];
    let x = a / step;
    let i = 0;
    while (x >= step && i < units.length - 1) {
      x /= step;
      i++;
    }
    return (v < 0 ? "-" : "") + Number(x.toPrecision(3)) + units[i];
  }

  // Log-axis ticks: decades only.
  function logTicks(v) {
    if (!(v > 0)) return "";
    const e = Math.round(Math.log10(v));
    if (Math.abs(v / Math.pow(10, e) - 1) > 1e-6) return "";
    return e >= 0 && e <= 2 ? String(Math.pow(10, e)) : "1e" + e;
  }

  function fmtDuration(s) {
    if (!isNum(s)) return DASH;
    if (s < 120) return fmtNum(s) + " s";
    if (s < 7200) return fmtNum(Number((s / 60).toFixed(1))) + " min";
    return fmtNum(Number((s / 3600).toFixed(2))) + " h";
  }

  // Seconds since the epoch as ISO 8601, for plausible values only.
  function epochText(v) {
    if (!isNum(v) || v < 1e8 || v > 1e11) return null;
    return new Date(v * 1000).toISOString().replace(".000Z", "Z");
  }

  function absent() {
    return el("span", { class: "absent", text: DASH + " (absent)" });
  }

  // Any JSON value as a node; null or missing reads as absent, never blank or 0.
  function valueNode(v) {
    if (v === null || v === undefined) return absent();
    if (v === "") return el("span", { class: "muted", text: '"" (empty)' });
    if (typeof v === "object") return document.createTextNode(JSON.stringify(v));
    return document.createTextNode(String(v));
  }

  function badge(status) {
    const s = String(status == null ? "unknown" : status);
    return el("span", { class: "badge badge-" + s.replace(/[^a-z]/gi, ""), text: s });
  }

  function notice(text) {
    return el("p", { class: "notice", text });
  }

  // "name value" pairs in a row; undefined values are left out.
  function figures(pairs) {
    const box = el("div", { class: "figures" });
    for (const [k, v] of pairs) {
      if (v === undefined) continue;
      const text =
        v === null
          ? DASH
          : typeof v === "number"
            ? fmtNum(v)
            : typeof v === "object"
              ? JSON.stringify(v)
              : String(v);
      box.appendChild(el("span", null, k + " ", el("b", { text })));
    }
    return box;
  }

  function labelText(labels) {
    if (!isObj(labels)) return "";
    return Object.entries(labels)
      .map(([k, v]) => k + "=" + v)
      .join(" ");
  }

  function palette(i, alpha) {
    const h = Math.round((i * 137.508 + 210) % 360);
    return alpha == null ? `hsl(${h}, 62%, 42%)` : `hsla(${h}, 62%, 42%, ${alpha})`;
  }

  // Flattens free-form JSON into [dotted key, value] pairs. Long arrays are summarised, and so
  // are arrays of objects when compact (a section of the page shows those).
  function flatten(value, prefix, out, depth, compact) {
    if (out.length > 400) return out;
    if (Array.isArray(value)) {
      const scalars = value.every((x) => x === null || typeof x !== "object");
      if (value.length === 0) {
        out.push([prefix, "[]"]);
      } else if (value.length > 12 || (compact && !scalars)) {
        out.push([prefix, value.length + (value.length === 1 ? " entry" : " entries")]);
      } else if (scalars) {
        out.push([
          prefix,
          "[" + value.map((x) => (x === null ? "null" : String(x))).join(", ") + "]",
        ]);
      } else {
        value.forEach((x, i) => flatten(x, prefix + "[" + i + "]", out, depth + 1, compact));
      }
    } else if (isObj(value)) {
      const keys = Object.keys(value);
      if (!keys.length) {
        out.push([prefix, "{}"]);
      } else if (depth > 6) {
        out.push([prefix, JSON.stringify(value).slice(0, 200)]);
      } else {
        for (const k of keys)
          flatten(value[k], prefix ? prefix + "." + k : k, out, depth + 1, compact);
      }
    } else {
      out.push([prefix, value]);
    }
    return out;
  }

  function kvList(obj, compact) {
    const pairs = flatten(obj, "", [], 0, compact);
    const dl = el("dl", { class: "kv" });
    for (const [k, v] of pairs.slice(0, 300)) {
      const dd = el("dd", null, valueNode(v));
      const iso = /(^|\.)(time|start|end)$/.test(k) ? epochText(v) : null;
      if (iso) dd.appendChild(el("span", { class: "muted", text: " (" + iso + ")" }));
      append(dl, [el("dt", { text: k || "(value)" }), dd]);
    }
    if (pairs.length > 300) {
      append(dl, [el("dt", { text: "\u2026" }), el("dd", { text: pairs.length - 300 + " more" })]);
    }
    return dl;
  }

  // ---- Charts ----

  let chartsExpected = 0;
  let chartsDrawn = 0;
  const chartQueue = [];
  const charts = [];

  // Whether a dataset's data holds a point: a number, a [lo, hi] pair or an {x, y} with a y.
  function hasPoint(data) {
    if (!Array.isArray(data)) return false;
    return data.some((d) => {
      if (d == null) return false;
      if (typeof d === "number") return isNum(d);
      if (Array.isArray(d)) return d.length > 0 && d.every(isNum);
      return typeof d === "object" && d.y != null;
    });
  }

  // Marks a canvas drawn once it has rendered, at a real size, with at least one data point.
  const drawnPlugin = {
    id: "parityDrawn",
    afterRender(chart) {
      const canvas = chart.canvas;
      if (!canvas || canvas.dataset.drawn === "1") return;
      if (!(chart.width > 0 && chart.height > 0)) return;
      if (!chart.data.datasets.some((ds) => hasPoint(ds.data))) return;
      canvas.dataset.drawn = "1";
      chartsDrawn++;
      root.dataset.chartsDrawn = String(chartsDrawn);
    },
  };

  // Reference lines: options.plugins.parityRefLines.lines = [{axis, value, color, dash, label}].
  const refLinesPlugin = {
    id: "parityRefLines",
    afterDatasetsDraw(chart, args, opts) {
      const lines = opts && opts.lines;
      if (!lines || !lines.length) return;
      const { ctx, chartArea: a, scales } = chart;
      ctx.save();
      ctx.font = "11px system-ui, sans-serif";
      let slot = 0;
      for (const l of lines) {
        const scale = scales[l.axis || "y"];
        if (!scale || !isNum(l.value)) continue;
        const p = scale.getPixelForValue(l.value);
        const across = scale.isHorizontal(); // a vertical line at an x value
        const inside = across
          ? p >= a.left - 1 && p <= a.right + 1
          : p >= a.top - 1 && p <= a.bottom + 1;
        if (!isNum(p) || !inside) continue;
        ctx.beginPath();
        ctx.strokeStyle = l.color || C.ref;
        ctx.lineWidth = l.width || 1;
        ctx.setLineDash(l.dash || []);
        ctx.moveTo(across ? p : a.left, across ? a.top : p);
        ctx.lineTo(across ? p : a.right, across ? a.bottom : p);
        ctx.stroke();
        if (!l.label) continue;
        ctx.fillStyle = l.color || C.ref;
        const w = ctx.measureText(l.label).width;
        const x = across ? Math.min(p + 3, a.right - w - 2) : a.right - w - 4;
        const y = across ? a.top + 11 + 12 * (slot++ % 3) : p - 3; // staggered labels
        ctx.fillText(l.label, x, y);
      }
      ctx.restore();
    },
  };

  Chart.register(drawnPlugin, refLinesPlugin);
  Chart.defaults.animation = false;
  Chart.defaults.transitions.active.animation.duration = 0;
  Chart.defaults.responsive = true;
  Chart.defaults.maintainAspectRatio = false;
  Chart.defaults.font.family =
    'system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif';
  Chart.defaults.font.size = 11;
  Chart.defaults.color = "#1d2430";
  Chart.defaults.plugins.legend.labels.boxWidth = 12;
  Chart.defaults.plugins.legend.labels.boxHeight = 10;

  // Adds a canvas.parity-chart to parent now; its chart is built later, once the tables have
  // painted. config() returns the Chart.js configuration (options.parityLabel names the chart).
  function chart(parent, height, config, cls) {
    const box = el("div", { class: "chart-box" + (cls ? " " + cls : "") });
    if (height) box.style.height = height + "px";
    const canvas = el("canvas", { class: "parity-chart", role: "img" });
    box.appendChild(canvas);
    parent.appendChild(box);
    chartsExpected++;
    root.dataset.chartsExpected = String(chartsExpected);
    chartQueue.push({ box, canvas, config });
  }

  // A performance timeline entry (seen in the browser's profiler), where supported.
  function measure(name, start) {
    try {
      performance.measure(name, { start });
    } catch (e) {
      // an older browser: no timings
    }
  }

  function buildChart(job) {
    const t0 = performance.now();
    try {
      const cfg = job.config();
      const label = (cfg.options && cfg.options.parityLabel) || "chart";
      job.canvas.setAttribute("aria-label", label);
      charts.push(new Chart(job.canvas, cfg));
      measure("parity chart: " + label, t0);
    } catch (e) {
      console.error("parity report: a chart failed:", e && e.stack ? e.stack : String(e));
      job.box.appendChild(
        el("p", { class: "chart-error", text: "This chart could not be drawn: " + errorText(e) }),
      );
    }
  }

  // Builds queued charts in slices of about 40 ms, so the page stays responsive.
  function drainCharts(done) {
    const start = performance.now();
    while (chartQueue.length && performance.now() - start < 40) buildChart(chartQueue.shift());
    if (chartQueue.length) setTimeout(() => drainCharts(done), 0);
    else done();
  }

  function increasing(points) {
    for (let i = 1; i < points.length; i++) if (!(points[i].x > points[i - 1].x)) return false;
    return true;
  }

  // ---- Sections ----

  function section(id) {
    return document.getElementById(id);
  }

  function guarded(name, fn) {
    try {
      fn();
    } catch (e) {
      console.error(
        "parity report: the " + name + " section failed:",
        e && e.stack ? e.stack : String(e),
      );
      const s = section(name);
      const text = "This section could not be shown: " + errorText(e);
      if (s) s.appendChild(el("p", { class: "chart-error", text }));
    }
  }

  function sideOf(r, name) {
    return isObj(r[name]) ? r[name] : {};
  }

  function renderVerdict(r) {
    const box = section("verdict");
    box.textContent = "";
    const v = String(r.verdict || "unknown").toLowerCase();
    box.className = "verdict verdict-" + (v === "pass" || v === "fail" ? v : "unknown");
    box.appendChild(el("span", { class: "word", text: v.toUpperCase() }));
    const sum = isObj(r.summary) ? r.summary : {};
    const counts = ["pass", "fail", "skip", "error"].map(
      (k) => fmtNum(isNum(sum[k]) ? sum[k] : 0) + " " + k,
    );
    box.appendChild(el("span", { text: counts.join(DOT) }));
    if (r.strict === true) {
      box.appendChild(
        el("span", {
          class: "strict",
          title: "a skipped criterion fails the verdict",
          text: "strict",
        }),
      );
    }
    const cand = sideOf(r, "candidate");
    const base = sideOf(r, "baseline");
    const who = (s) => s.node || s.bundle || "?";
    box.appendChild(
      el("span", { class: "muted", text: "candidate " + who(cand) + " vs baseline " + who(base) }),
    );
    if (r.created) box.appendChild(el("span", { class: "muted", text: r.created }));
    document.title = "parity accept: " + v.toUpperCase() + " " + DASH + " " + who(cand);

    const toc = section("toc");
    for (const sec of document.querySelectorAll("main > section")) {
      const h = sec.querySelector("h2");
      toc.appendChild(el("a", { href: "#" + sec.id, text: h ? h.textContent : sec.id }));
    }
  }

  function renderPlatforms(r) {
    const s = section("platforms");
    const base = sideOf(r, "baseline");
    const cand = sideOf(r, "candidate");
    const rows = ["node", "plan", "backend", "level", "status", "created", "uid", "bundle"].map(
      (k) =>
        el(
          "tr",
          null,
          td(k),
          el("td", { class: "mono" }, valueNode(base[k])),
          el("td", { class: "mono" }, valueNode(cand[k])),
        ),
    );
    const t = table(["", "baseline", "candidate"], rows);
    t.querySelector("table").className = "platform-table";
    s.appendChild(t);
    const fp = el("div", { class: "fingerprints" });
    for (const [name, side] of [
      ["baseline", base],
      ["candidate", cand],
    ]) {
      fp.appendChild(
        el(
          "details",
          null,
          el("summary", { text: name + " fingerprint" }),
          isObj(side.fingerprint) ? kvList(side.fingerprint) : notice("No fingerprint recorded."),
        ),
      );
    }
    s.appendChild(fp);
  }

  function criteriaList(r) {
    return Array.isArray(r.criteria) ? r.criteria.filter(isObj) : [];
  }

  function renderCriteria(r) {
    const s = section("criteria");
    const list = criteriaList(r);
    if (!list.length) {
      s.appendChild(notice("The report lists no criteria."));
      return;
    }
    const cols = ["status", "id", "part", "stage", "title", "reason"];
    const text = (v) => (v == null ? DASH : v);
    const rows = list.map((c, idx) => {
      const status = String(c.status || "unknown");
      const cls = "criterion criterion-" + status.replace(/[^a-z]/gi, "");
      const row = el(
        "tr",
        { class: cls, tabindex: "0", "aria-expanded": "false" },
        el("td", null, badge(status)),
        td(text(c.id), "mono"),
        td(text(c.part)),
        td(text(c.stage)),
        td(c.title),
        td(c.reason),
      );
      const ev = el("td", { colspan: String(cols.length) });
      // Printed only for a part with no section of its own (print CSS).
      const shown = SECTION_PARTS.includes(c.part);
      const evRow = el(
        "tr",
        { class: "evidence-row" + (shown ? " in-section" : ""), hidden: true },
        ev,
      );
      if (isObj(c.evidence) && Object.keys(c.evidence).length) {
        ev.appendChild(kvList(c.evidence, SECTION_PARTS.slice(0, 3).includes(c.part)));
      } else {
        ev.appendChild(notice("No evidence recorded."));
      }
      if (shown) {
        const link = el("a", { href: "#crit-" + idx, text: "Shown under " + c.part + " \u2193" });
        ev.appendChild(el("p", { class: "screen-only" }, link));
      }
      const toggle = () => {
        evRow.hidden = !evRow.hidden;
        row.classList.toggle("open", !evRow.hidden);
        row.setAttribute("aria-expanded", String(!evRow.hidden));
      };
      row.addEventListener("click", toggle);
      row.addEventListener("keydown", (e) => {
        if (e.key === "Enter" || e.key === " ") {
          e.preventDefault();
          toggle();
        }
      });
      return { c, idx, row, evRow };
    });
    const keyOf = (x, col) => {
      if (col === "status") return STATUS_RANK[x.c.status] ?? 9;
      if (col === "part") return PART_RANK[x.c.part] ?? 9;
      return String(x.c[col] == null ? "" : x.c[col]);
    };
    // Failing and erroneous first, then by part, then as listed.
    const byDefault = (a, b) =>
      keyOf(a, "status") - keyOf(b, "status") ||
      keyOf(a, "part") - keyOf(b, "part") ||
      a.idx - b.idx;
    const tbody = el("tbody");
    const headRow = el("tr");
    let sortCol = null;
    let sortDir = 1;
    const place = () => {
      const order = rows.slice().sort((a, b) => {
        if (!sortCol) return byDefault(a, b);
        const ka = keyOf(a, sortCol);
        const kb = keyOf(b, sortCol);
        return (
          sortDir * (typeof ka === "number" ? ka - kb : ka.localeCompare(kb)) || byDefault(a, b)
        );
      });
      for (const x of order) tbody.append(x.row, x.evRow);
    };
    for (const col of cols) {
      const th = el("th", { class: "sortable", text: col, title: "sort by " + col, scope: "col" });
      th.addEventListener("click", () => {
        sortDir = sortCol === col ? -sortDir : 1;
        sortCol = col;
        for (const o of headRow.children) o.classList.remove("sorted-asc", "sorted-desc");
        th.classList.add(sortDir > 0 ? "sorted-asc" : "sorted-desc");
        place();
      });
      headRow.appendChild(th);
    }
    place();
    s.appendChild(
      el("p", {
        class: "muted screen-only",
        text: "Failures first; click a row for its evidence, a heading to sort.",
      }),
    );
    s.appendChild(
      el(
        "div",
        { class: "table-wrap" },
        el("table", { class: "criteria-table" }, el("thead", null, headRow), tbody),
      ),
    );
  }

  function partCriteria(r, part) {
    const out = [];
    criteriaList(r).forEach((c, idx) => {
      if (c.part === part) out.push({ c, idx, ev: isObj(c.evidence) ? c.evidence : {} });
    });
    return out;
  }

  // A criterion's box in its part's section, or a sentence when the part has none.
  function cards(r, part, render) {
    const s = section(part);
    const items = partCriteria(r, part);
    if (!items.length) {
      s.appendChild(notice("No " + part + " criteria in this report."));
      return;
    }
    for (const item of items) {
      const { c, idx } = item;
      const box = el(
        "div",
        { class: "card", id: "crit-" + idx },
        el(
          "h3",
          null,
          badge(c.status),
          el("span", { class: "mono", text: c.id == null ? "(no id)" : c.id }),
          el("span", { class: "muted", text: c.title || "" }),
        ),
      );
      if (c.reason) box.appendChild(el("p", { text: c.reason }));
      s.appendChild(box);
      render(box, item.ev, c);
    }
  }

  // -- Numerics

  function histLabels(bounds, n) {
    const ok = Array.isArray(bounds) && bounds.length === n - 1;
    const labels = [];
    for (let i = 0; i < n; i++) {
      if (!ok) labels.push("bin " + i);
      else if (i === 0) labels.push(fmtBound(bounds[0]));
      else if (i === n - 1) labels.push(">" + fmtBound(bounds[n - 2]));
      else labels.push("\u2264" + fmtBound(bounds[i]));
    }
    return labels;
  }

  // Bin i holds ratios above 1 (failing elements).
  function histFailing(bounds, i) {
    return Array.isArray(bounds) && i > 0 && isNum(bounds[i - 1]) && bounds[i - 1] >= 1;
  }

  // A count axis: logarithmic when the counts span more than two decades.
  function countScale(counts) {
    const pos = counts.filter((v) => isNum(v) && v > 0);
    const max = Math.max(1, ...pos);
    const min = pos.length ? Math.min(...pos) : 1;
    if (max / min <= 100) {
      return {
        type: "linear",
        beginAtZero: true,
        grace: "5%",
        title: { display: true, text: "elements" },
      };
    }
    return {
      type: "logarithmic",
      min: 0.5,
      title: { display: true, text: "elements (log)" },
      ticks: { callback: (v) => (logTicks(v) ? fmtTick(v) : "") },
    };
  }

  function renderNumerics(box, ev) {
    // Index for index: an origin's order is an index into tensors.
    const tensors = Array.isArray(ev.tensors) ? ev.tensors.map((t) => (isObj(t) ? t : {})) : [];
    const origins = Array.isArray(ev.origins) ? ev.origins.filter(isObj) : [];
    box.appendChild(
      figures([
        ["tensors", ev.tensors_total],
        ["passed", ev.passed],
        ["failed", ev.failed],
        ["structural", ev.structural],
        ["not compared", ev.not_compared],
        ["tolerance", ev.tolerance],
        ["first divergence", ev.first_divergence],
        ["baseline dump", ev.baseline_dump],
        ["candidate dump", ev.candidate_dump],
      ]),
    );
    if (!tensors.length) {
      box.appendChild(notice("No per-tensor results recorded."));
    } else {
      ratioChart(box, tensors, origins);
      worstTensors(box, tensors);
    }
    originsTable(box, origins, tensors);

    const grid = el("div", { class: "chart-grid" });
    const hist = Array.isArray(ev.ratio_histogram) ? ev.ratio_histogram : [];
    if (hist.some((v) => isNum(v) && v > 0)) {
      const wrap = el(
        "div",
        null,
        el("h4", { text: "Elements by |a" + MINUS + "b| / allowed, over all tensors" }),
      );
      grid.appendChild(wrap);
      chart(wrap, 240, () => ({
        type: "bar",
        data: {
          labels: histLabels(ev.ratio_bounds, hist.length),
          datasets: [
            {
              label: "elements",
              data: hist.map((v) => (isNum(v) ? v : null)),
              backgroundColor: hist.map((_, i) =>
                i === 0 ? C.zero : histFailing(ev.ratio_bounds, i) ? C.fail : C.pass,
              ),
            },
          ],
        },
        options: {
          parityLabel: "ratio histogram",
          plugins: { legend: { display: false } },
          scales: {
            x: { title: { display: true, text: "|a" + MINUS + "b| / allowed (above 1 fails)" } },
            y: countScale(hist),
          },
        },
      }));
    }
    const failing = Array.isArray(ev.failing_histograms)
      ? ev.failing_histograms.filter((h) => isObj(h) && Array.isArray(h.counts))
      : [];
    const all = [].concat(...failing.map((h) => h.counts));
    if (all.some((v) => isNum(v) && v > 0)) {
      const wrap = el(
        "div",
        null,
        el("h4", { text: "Worst failing tensors, elements by |a" + MINUS + "b| / allowed" }),
      );
      grid.appendChild(wrap);
      const labels = histLabels(ev.ratio_bounds, Math.max(...failing.map((h) => h.counts.length)));
      chart(wrap, 240, () => ({
        type: "bar",
        data: {
          labels,
          datasets: failing.map((h, i) => ({
            label: String(h.name == null ? "tensor " + i : h.name),
            data: labels.map((_, j) => (isNum(h.counts[j]) ? h.counts[j] : null)),
            backgroundColor: palette(i),
          })),
        },
        options: {
          parityLabel: "failing tensor histograms",
          plugins: { legend: { position: "bottom", labels: { font: { size: 10 } } } },
          scales: {
            x: { title: { display: true, text: "|a" + MINUS + "b| / allowed" } },
            y: countScale(all),
          },
        },
      }));
    }
    if (grid.childNodes.length) box.appendChild(grid);
  }

  // Each tensor's ratio along execution order, on a log axis, with the origins marked.
  function ratioChart(box, tensors, origins) {
    let minPos = Infinity;
    let maxPos = 0;
    let xMin = Infinity;
    let xMax = -Infinity;
    const xOf = (t, i) => (isNum(t.order) ? t.order : i);
    tensors.forEach((t, i) => {
      const x = xOf(t, i);
      if (x < xMin) xMin = x;
      if (x > xMax) xMax = x;
      if (isNum(t.ratio) && t.ratio > 0) {
        minPos = Math.min(minPos, t.ratio);
        maxPos = Math.max(maxPos, t.ratio);
      }
    });
    if (!isNum(minPos)) minPos = 1e-3;
    // Exact zeros sit a decade below the smallest ratio, on a tick labelled 0; tensors without
    // a ratio that fail (structural mismatches) sit a decade above the largest.
    const zeroY = Math.pow(10, Math.floor(Math.log10(Math.min(minPos, 1))) - 1);
    const topY = Math.max(maxPos, 1) * 10;
    const groups = { pass: [], fail: [], zero: [], none: [] };
    const yAt = [];
    tensors.forEach((t, i) => {
      if (t.not_compared === true) return; // neither passed nor failed: no point to chart
      const x = xOf(t, i);
      if (isNum(t.ratio)) {
        yAt[i] = t.ratio > 0 ? t.ratio : zeroY;
        groups[t.ratio <= 0 ? "zero" : t.pass === false ? "fail" : "pass"].push({
          x,
          y: yAt[i],
          i,
        });
      } else if (t.pass === false || t.structural === true) {
        yAt[i] = topY;
        groups.none.push({ x, y: topY, i });
      }
    });
    if (!Object.values(groups).some((g) => g.length)) {
      box.appendChild(notice("No tensor has a ratio to chart."));
      return;
    }
    const marks = origins
      .filter((o) => Number.isInteger(o.order) && o.order >= 0 && o.order < tensors.length)
      .map((o) => ({ x: xOf(tensors[o.order], o.order), y: yAt[o.order] ?? topY, o }))
      .sort((a, b) => a.x - b.x);
    const xPad = Math.max(0.5, (xMax - xMin) * 0.005);
    const r = tensors.length < 200 ? 4 : tensors.length < 2000 ? 2.5 : 1.5;
    box.appendChild(
      el("h4", {
        text:
          "Per-tensor error in execution order (ratio = largest |a" +
          MINUS +
          "b| / allowed; above 1 fails)",
      }),
    );
    chart(box, 340, () => {
      const ds = (label, data, color, radius, style) => ({
        label,
        data,
        backgroundColor: color,
        borderColor: color,
        pointRadius: radius,
        pointHoverRadius: radius + 2,
        pointBorderWidth: 0,
        pointStyle: style || "circle",
        parsing: false,
        normalized: increasing(data),
      });
      const datasets = [
        ds("pass", groups.pass, C.pass, r),
        ds("fail", groups.fail, C.fail, r * 2),
        ds("ratio 0 (exact)", groups.zero, C.zero, r),
        ds("structural / no ratio", groups.none, C.structural, 5, "crossRot"),
        Object.assign(ds("origin (explain)", marks, C.origin, 7, "triangle"), {
          pointBorderWidth: 1,
          pointBorderColor: "#fff",
        }),
      ].filter((d) => d.data.length);
      const lines = [
        { axis: "y", value: 1, color: C.fail, dash: [6, 4], label: "tolerance (ratio 1)" },
      ];
      for (const m of marks)
        lines.push({
          axis: "x",
          value: m.x,
          color: C.origin,
          dash: [2, 3],
          label: "#" + (m.o.seq ?? ""),
        });
      const tip = (ctx) => {
        const raw = ctx.raw || {};
        if (raw.o) {
          return [
            "origin #" + (raw.o.seq ?? "") + ": " + (raw.o.name ?? ""),
            "cause " +
              (raw.o.cause ?? DASH) +
              (raw.o.precision ? " (" + raw.o.precision + ")" : ""),
          ];
        }
        const t = tensors[raw.i] || {};
        return [
          String(t.name ?? "tensor " + raw.i),
          "ratio " +
            fmtNum(t.ratio) +
            (t.dtype ? "  " + t.dtype : "") +
            (t.structural ? "  structural" : ""),
          "max_abs " + fmtNum(t.max_abs) + "  max_rel " + fmtNum(t.max_rel),
        ];
      };
      return {
        type: "scatter",
        data: { datasets },
        options: {
          parityLabel: "per-tensor ratio",
          parsing: false,
          interaction: { mode: "nearest", intersect: true },
          scales: {
            x: {
              type: "linear",
              min: xMin - xPad,
              max: xMax + xPad,
              ticks: {
                callback: (v) => (Number.isInteger(v) && v >= xMin && v <= xMax ? fmtNum(v) : ""),
              },
              title: { display: true, text: "tensor (execution order)" },
            },
            y: {
              type: "logarithmic",
              min: zeroY / 2,
              max: topY * 2,
              ticks: {
                autoSkip: false,
                callback: (v) => (Math.abs(v / zeroY - 1) < 1e-6 ? "0" : logTicks(v)),
              },
              title: { display: true, text: "|a" + MINUS + "b| / allowed" },
            },
          },
          plugins: {
            parityRefLines: { lines },
            legend: { position: "bottom" },
            tooltip: { callbacks: { label: tip } },
          },
        },
      };
    });
  }

  function worstTensors(box, tensors) {
    const failing = tensors.filter((t) => t.pass === false && t.not_compared !== true);
    if (!failing.length) {
      const skipped = tensors.filter((t) => t.not_compared === true).length;
      box.appendChild(
        notice(
          skipped
            ? "No listed tensor failed; " + skipped + " of " + tensors.length + " not compared."
            : "All " + tensors.length + " listed tensors are within tolerance.",
        ),
      );
      return;
    }
    const rank = (t) => (t.structural === true ? Infinity : isNum(t.ratio) ? t.ratio : -1);
    failing.sort((a, b) => (rank(b) === rank(a) ? 0 : rank(b) > rank(a) ? 1 : -1));
    const shown = failing.slice(0, 20);
    const metrics = ["ratio", "max_abs", "rmse", "max_rel"];
    const rows = shown.map((t) =>
      el(
        "tr",
        null,
        td(fmtNum(t.order), "num"),
        td(t.name, "mono"),
        td(t.dtype ?? DASH),
        td(t.structural === true ? "yes" : ""),
        metrics.map((k) => td(fmtNum(t[k]), "num")),
        td(t.tolerance, "mono"),
      ),
    );
    const more = failing.length > shown.length ? "; the " + shown.length + " worst" : "";
    box.appendChild(
      el("h4", {
        text: failing.length + " failing tensor" + (failing.length === 1 ? "" : "s") + more,
      }),
    );
    box.appendChild(
      table(["order", "tensor", "dtype", "structural", ...metrics, "tolerance"], rows, [
        "order",
        ...metrics,
      ]),
    );
  }

  function originsTable(box, origins, tensors) {
    if (!origins.length) return;
    const rows = origins.map((o) => {
      const at = Number.isInteger(o.order) ? tensors[o.order] : null;
      const first = isNum(o.order)
        ? fmtNum(o.order) + (at && at.name ? " " + at.name : "")
        : absent();
      return el(
        "tr",
        null,
        td(fmtNum(o.seq), "num"),
        td(o.name, "mono"),
        td(o.op ?? DASH),
        td(o.cause ?? DASH),
        el("td", null, o.precision == null ? absent() : String(o.precision)),
        el("td", { class: "mono" }, first),
        td(o.reason),
      );
    });
    box.appendChild(el("h4", { text: "Origins of the divergence (parity explain)" }));
    box.appendChild(
      table(["#", "op name", "op", "cause", "precision", "first output (order)", "reason"], rows, [
        "#",
      ]),
    );
  }

  // -- Quality

  function renderQuality(box, ev, c) {
    const ci =
      Array.isArray(ev.ci90) && ev.ci90.length === 2 && ev.ci90.every(isNum) ? ev.ci90 : null;
    const ciText = ci
      ? "[" + fmtNum(ci[0]) + ", " + fmtNum(ci[1]) + "]"
      : ev.ci90 === undefined
        ? undefined
        : DASH;
    box.appendChild(
      figures([
        ["metric", ev.metric],
        ["baseline", ev.baseline],
        ["candidate", ev.candidate],
        [DELTA, ev.delta],
        ["margin \u00b1", ev.margin],
        ["relative margin", ev.relative_margin],
        ["90% CI", ciText],
        ["p", ev.p_value],
        ["se", ev.se],
        ["samples", ev.samples],
        ["positives", ev.positives],
        ["verdict", ev.verdict],
        ["scores", ev.scores],
      ]),
    );
    if (!ci && !isNum(ev.delta)) {
      box.appendChild(notice("No interval to chart."));
      return;
    }
    const margin = isNum(ev.margin) ? Math.abs(ev.margin) : null;
    const ext =
      Math.max(
        ci ? Math.abs(ci[0]) : 0,
        ci ? Math.abs(ci[1]) : 0,
        isNum(ev.delta) ? Math.abs(ev.delta) : 0,
        margin || 0,
      ) * 1.25 || 1;
    const color = C[c.status] || C.skip;
    const metric = ev.metric || "metric";
    chart(
      box,
      130,
      () => {
        const datasets = [];
        if (ci) {
          datasets.push({
            type: "bar",
            label: "90% interval of " + DELTA,
            data: [ci],
            backgroundColor: color + "55",
            borderColor: color,
            borderWidth: 1,
            barThickness: 22,
          });
        }
        if (isNum(ev.delta)) {
          datasets.push({
            type: "line",
            label: DELTA + " = candidate " + MINUS + " baseline",
            data: [ev.delta],
            showLine: false,
            pointRadius: 6,
            pointStyle: "rectRot",
            backgroundColor: color,
            borderColor: color,
          });
        }
        const lines = [{ axis: "x", value: 0, color: C.ref, label: "0" }];
        if (margin != null) {
          lines.push({
            axis: "x",
            value: -margin,
            color: C.fail,
            dash: [6, 4],
            label: MINUS + "margin",
          });
          lines.push({ axis: "x", value: margin, color: C.fail, dash: [6, 4], label: "+margin" });
        }
        return {
          type: "bar",
          data: { labels: [DELTA + " " + metric], datasets },
          options: {
            parityLabel: "quality interval",
            indexAxis: "y",
            scales: {
              x: {
                type: "linear",
                min: -ext,
                max: ext,
                title: {
                  display: true,
                  text: DELTA + " " + metric + " (candidate " + MINUS + " baseline)",
                },
              },
            },
            plugins: { legend: { position: "bottom" }, parityRefLines: { lines } },
          },
        };
      },
      "short",
    );
  }

  // -- Throughput

  function renderThroughput(box, ev) {
    const benches = Array.isArray(ev.benchmarks) ? ev.benchmarks.filter(isObj) : [];
    box.appendChild(
      figures([
        ["suite", ev.suite],
        ["geomean", ev.geomean],
        ["min ratio", ev.min_ratio],
        ["benchmarks", ev.benchmarks === undefined ? undefined : benches.length],
      ]),
    );
    if (!benches.some((b) => isNum(b.ratio) || (isNum(b.lo) && isNum(b.hi)))) {
      box.appendChild(
        notice(benches.length ? "No benchmark has a ratio to chart." : "No benchmarks recorded."),
      );
    } else {
      throughputChart(box, ev, benches);
    }
    if (!benches.length) return;
    const rows = benches.map((b) =>
      el(
        "tr",
        null,
        td(b.label, "mono"),
        td(b.unit),
        td(fmtNum(b.base_median), "num"),
        td(fmtNum(b.cand_median), "num"),
        td(fmtNum(b.ratio), "num"),
        td(
          b.lo == null && b.hi == null ? DASH : "[" + fmtNum(b.lo) + ", " + fmtNum(b.hi) + "]",
          "num",
        ),
        el(
          "td",
          null,
          b.verdict == null
            ? absent()
            : el("span", {
                style: "color:" + (VERDICT_COLOR[b.verdict] || C.skip),
                text: b.verdict,
              }),
        ),
      ),
    );
    box.appendChild(
      table(
        [
          "benchmark",
          "unit",
          "baseline median",
          "candidate median",
          "ratio",
          "interval",
          "verdict",
        ],
        rows,
        ["baseline median", "candidate median", "ratio", "interval"],
      ),
    );
  }

  // Each benchmark's ratio (a point) in its interval (a floating bar), with min_ratio and 1.
  function throughputChart(box, ev, benches) {
    const vals = [1];
    for (const b of benches)
      for (const k of ["ratio", "lo", "hi"]) if (isNum(b[k])) vals.push(b[k]);
    if (isNum(ev.min_ratio)) vals.push(ev.min_ratio);
    if (isNum(ev.geomean)) vals.push(ev.geomean);
    const lo = Math.min(...vals);
    const hi = Math.max(...vals);
    const pad = (hi - lo) * 0.08 || 0.05;
    chart(box, Math.max(150, 26 * benches.length + 90), () => {
      const lines = [
        { axis: "x", value: 1, color: C.ref, label: ev.min_ratio === 1 ? "1 = min ratio" : "1" },
      ];
      if (isNum(ev.min_ratio) && ev.min_ratio !== 1) {
        lines.push({
          axis: "x",
          value: ev.min_ratio,
          color: C.fail,
          dash: [6, 4],
          label: "min ratio " + fmtNum(ev.min_ratio),
        });
      }
      if (isNum(ev.geomean)) {
        lines.push({
          axis: "x",
          value: ev.geomean,
          color: C.info,
          dash: [2, 3],
          label: "geomean " + fmtNum(ev.geomean),
        });
      }
      const colors = benches.map((b) => VERDICT_COLOR[b.verdict] || C.skip);
      const tip = (ctx) => {
        const b = benches[ctx.dataIndex] || {};
        return [
          "ratio " +
            fmtNum(b.ratio) +
            " [" +
            fmtNum(b.lo) +
            ", " +
            fmtNum(b.hi) +
            "] " +
            (b.verdict ?? ""),
          "baseline " +
            fmtNum(b.base_median) +
            " \u2192 candidate " +
            fmtNum(b.cand_median) +
            " " +
            (b.unit ?? ""),
        ];
      };
      return {
        type: "bar",
        data: {
          labels: benches.map((b) => String(b.label ?? "")),
          datasets: [
            {
              type: "bar",
              label: "interval [lo, hi]",
              data: benches.map((b) => (isNum(b.lo) && isNum(b.hi) ? [b.lo, b.hi] : null)),
              backgroundColor: colors.map((c) => c + "44"),
              borderColor: colors,
              borderWidth: 1,
              barPercentage: 0.7,
            },
            {
              type: "line",
              label: "ratio (candidate / baseline)",
              data: benches.map((b) => (isNum(b.ratio) ? b.ratio : null)),
              showLine: false,
              pointRadius: 4,
              backgroundColor: colors,
              borderColor: colors,
            },
          ],
        },
        options: {
          parityLabel: "throughput ratios",
          indexAxis: "y",
          scales: {
            x: {
              type: "linear",
              min: lo - pad,
              max: hi + pad,
              title: { display: true, text: "candidate / baseline (higher is faster)" },
            },
          },
          plugins: {
            legend: { position: "bottom" },
            parityRefLines: { lines },
            tooltip: { callbacks: { label: tip } },
          },
        },
      };
    });
  }

  // -- Stability

  function renderStability(box, ev) {
    box.appendChild(Object.keys(ev).length ? kvList(ev) : notice("No evidence recorded."));
  }

  // -- Telemetry

  // Merges buckets when a series is much longer than a chart is wide (nulls stay gaps).
  function rebucket(t, mn, mx, me, target) {
    const n = t.length;
    if (n <= target * 2) return { t, mn, mx, me };
    const k = Math.ceil(n / target);
    const out = { t: [], mn: [], mx: [], me: [] };
    for (let i = 0; i < n; i += k) {
      let lo = null;
      let hi = null;
      let sum = 0;
      let cnt = 0;
      for (let j = i; j < Math.min(n, i + k); j++) {
        if (isNum(mn[j]) && (lo === null || mn[j] < lo)) lo = mn[j];
        if (isNum(mx[j]) && (hi === null || mx[j] > hi)) hi = mx[j];
        if (isNum(me[j])) {
          sum += me[j];
          cnt++;
        }
      }
      out.t.push(t[i]);
      out.mn.push(lo);
      out.mx.push(hi);
      out.me.push(cnt ? sum / cnt : null);
    }
    return out;
  }

  function seriesOf(T) {
    if (!isObj(T) || !Array.isArray(T.series)) return [];
    return T.series.filter((x) => isObj(x) && Array.isArray(x.t));
  }

  function metricOf(x) {
    return String(x.metric ?? "(unnamed)");
  }

  const arr = (a) => (Array.isArray(a) ? a : []);

  function renderTelemetry(r) {
    const s = section("telemetry");
    const tel = isObj(r.telemetry) ? r.telemetry : {};
    const sides = [
      ["baseline", tel.baseline],
      ["candidate", tel.candidate],
    ];
    if (!sides.some(([, T]) => isObj(T))) {
      s.appendChild(notice("No telemetry was recorded for either side."));
      return;
    }
    // A summary of both sides, and each metric's range over both (their charts share a scale).
    const rows = [];
    const metrics = new Map();
    for (const [name, T] of sides) {
      if (!isObj(T)) {
        rows.push(
          el(
            "tr",
            null,
            td(name),
            el("td", { colspan: "6", class: "notice", text: "No telemetry was recorded." }),
          ),
        );
        continue;
      }
      const span = isNum(T.end) && isNum(T.start) ? T.end - T.start : null;
      rows.push(
        el(
          "tr",
          null,
          td(name),
          td(epochText(T.start) || fmtNum(T.start), "mono"),
          td(fmtDuration(span), "num"),
          td(fmtNum(T.samples), "num"),
          td(T.bucket_s == null ? DASH : fmtNum(T.bucket_s) + " s", "num"),
          td(String(seriesOf(T).length), "num"),
          td(String(arr(T.alerts).filter(isObj).length), "num"),
        ),
      );
      for (const x of seriesOf(T)) {
        const m = metricOf(x);
        if (!metrics.has(m)) metrics.set(m, { min: Infinity, max: -Infinity, unit: x.unit });
        const range = metrics.get(m);
        for (const a of [x.min, x.max, x.mean]) {
          for (const v of arr(a)) {
            if (!isNum(v)) continue;
            if (v < range.min) range.min = v;
            if (v > range.max) range.max = v;
          }
        }
      }
    }
    s.appendChild(
      table(["side", "start", "span", "samples", "bucket", "series", "alerts"], rows, [
        "span",
        "samples",
        "bucket",
        "series",
        "alerts",
      ]),
    );
    if (!metrics.size) s.appendChild(notice("The telemetry holds no series."));
    for (const [m, range] of metrics) {
      s.appendChild(
        el(
          "h3",
          null,
          el("span", { class: "mono", text: m }),
          range.unit ? el("span", { class: "muted", text: " (" + range.unit + ")" }) : null,
        ),
      );
      const grid = el("div", { class: "chart-grid" });
      for (const [name, T] of sides) {
        const wrap = el("div", null, el("h4", { text: name }));
        grid.appendChild(wrap);
        const series = seriesOf(T).filter((x) => metricOf(x) === m);
        if (!series.length) {
          wrap.appendChild(
            notice(isObj(T) ? "Not recorded on this side." : "No telemetry was recorded."),
          );
        } else if (!series.some((x) => [x.mean, x.min, x.max].some((a) => arr(a).some(isNum)))) {
          wrap.appendChild(notice("No readings."));
        } else {
          telemetryChart(wrap, T, series, range);
        }
      }
      s.appendChild(grid);
    }
    alertsTable(s, sides);
  }

  // One metric's series on one side: means as lines (min/max bands when few), alerts as marks.
  function telemetryChart(wrap, T, series, range) {
    const lastT = Math.max(
      0,
      ...series.map((x) => (isNum(x.t[x.t.length - 1]) ? x.t[x.t.length - 1] : 0)),
    );
    const span = isNum(T.end) && isNum(T.start) ? Math.max(T.end - T.start, lastT) : lastT;
    const hours = span > 7200;
    const div = hours ? 3600 : 1;
    const unit = range.unit || "";
    const band = series.length <= 4 || !series.some((x) => arr(x.mean).some(isNum));
    const pad = (range.max - range.min) * 0.05 || Math.abs(range.max) * 0.05 || 1;
    const alerts = arr(T.alerts).filter((a) => isObj(a) && isNum(a.t));
    chart(wrap, 300 + Math.ceil(series.length / 4) * 16, () => {
      const datasets = [];
      series.forEach((x, i) => {
        const b = rebucket(x.t, arr(x.min), arr(x.max), arr(x.mean), 2000);
        const pts = (a) => b.t.map((t, j) => ({ x: t / div, y: isNum(a[j]) ? a[j] : null }));
        const common = {
          parsing: false,
          normalized: b.t.every((t, j) => j === 0 || t > b.t[j - 1]),
          pointRadius: 0,
        };
        const label = labelText(x.labels) || metricOf(x);
        const color = palette(i);
        if (band && b.mn.some(isNum) && b.mx.some(isNum)) {
          datasets.push({
            ...common,
            label: label + " min",
            data: pts(b.mn),
            parityBand: true,
            borderWidth: 0,
            fill: false,
          });
          datasets.push({
            ...common,
            label: label + " max",
            data: pts(b.mx),
            parityBand: true,
            borderWidth: 0,
            fill: "-1",
            backgroundColor: palette(i, 0.15),
          });
        }
        datasets.push({
          ...common,
          label,
          data: pts(b.me),
          borderColor: color,
          backgroundColor: color,
          borderWidth: 1.25,
          pointHitRadius: 3,
          fill: false,
          spanGaps: false,
        });
      });
      const lines = [];
      for (const sev of ["fatal", "warning", "other"]) {
        const known = (a) => a.severity === "fatal" || a.severity === "warning";
        const these = alerts.filter((a) => (sev === "other" ? !known(a) : a.severity === sev));
        if (!these.length) continue;
        const color = sev === "fatal" ? C.fatal : sev === "warning" ? C.warning : C.info;
        datasets.push({
          type: "scatter",
          label: "alert: " + sev,
          data: these.map((a) => ({ x: a.t / div, y: 0.97, a })),
          yAxisID: "alerts",
          parsing: false,
          pointStyle: "triangle",
          rotation: 180,
          pointRadius: 7,
          pointHoverRadius: 9,
          backgroundColor: color,
          borderColor: color,
        });
        for (const a of these) lines.push({ axis: "x", value: a.t / div, color, dash: [3, 3] });
      }
      const tip = (ctx) => {
        const a = ctx.raw && ctx.raw.a;
        if (!a) return ctx.dataset.label + ": " + fmtNum(ctx.parsed.y) + " " + unit;
        const state = a.resolved ? " (resolved)" : "";
        return `${a.severity ?? ""} ${a.rule ?? ""}: ${a.message ?? ""}${state}`;
      };
      return {
        type: "line",
        data: { datasets },
        options: {
          parityLabel: "telemetry " + metricOf(series[0]),
          parsing: false,
          interaction: { mode: "nearest", intersect: false, axis: "xy" },
          scales: {
            x: {
              type: "linear",
              min: 0,
              max: span / div || 1,
              title: { display: true, text: hours ? "hours since start" : "seconds since start" },
            },
            y: {
              type: "linear",
              suggestedMin: range.min - pad,
              suggestedMax: range.max + pad,
              title: { display: !!unit, text: unit },
              ticks: { callback: (v) => fmtTick(v, unit) },
            },
            alerts: { type: "linear", axis: "y", display: false, min: 0, max: 1 },
          },
          plugins: {
            parityRefLines: { lines },
            legend: {
              position: "bottom",
              labels: {
                font: { size: 10 },
                filter: (item, data) => !data.datasets[item.datasetIndex].parityBand,
              },
            },
            tooltip: {
              filter: (item) => !item.dataset.parityBand,
              callbacks: {
                title: (items) =>
                  items.length ? fmtNum(items[0].parsed.x) + (hours ? " h" : " s") : "",
                label: tip,
              },
            },
          },
        },
      };
    });
  }

  function alertsTable(s, sides) {
    const rows = [];
    for (const [name, T] of sides) {
      if (!isObj(T)) continue;
      for (const a of arr(T.alerts).filter(isObj)) {
        const when = isNum(a.t) && isNum(T.start) ? epochText(T.start + a.t) : null;
        const state = a.resolved === true ? "resolved" : a.resolved === false ? "open" : DASH;
        rows.push(
          el(
            "tr",
            null,
            td(name),
            td(isNum(a.t) ? fmtNum(a.t) + " s" : DASH, "num"),
            td(when, "mono"),
            el("td", null, badge(a.severity)),
            td(a.rule, "mono"),
            td(a.message),
            td(state),
          ),
        );
      }
    }
    s.appendChild(el("h3", { text: "Alerts" }));
    if (!rows.length) s.appendChild(notice("No alerts were raised."));
    else
      s.appendChild(
        table(["side", "t", "time", "severity", "rule", "message", "state"], rows, ["t"]),
      );
  }

  // -- Environment

  function renderEnvironment(r) {
    const s = section("environment");
    const diffs = Array.isArray(r.environment_diff) ? r.environment_diff.filter(isObj) : [];
    if (!diffs.length) {
      s.appendChild(notice("No differences between the two environments were recorded."));
      return;
    }
    // Relevant keys first, each group as listed.
    const order = diffs
      .map((d, i) => ({ d, i }))
      .sort((a, b) => (b.d.relevant === true) - (a.d.relevant === true) || a.i - b.i);
    const rows = order.map(({ d }) => {
      const rel = d.relevant === true;
      return el(
        "tr",
        { class: rel ? "relevant" : null },
        td(d.key, "mono"),
        el("td", { class: "mono" }, valueNode(d.baseline)),
        el("td", { class: "mono" }, valueNode(d.candidate)),
        el(
          "td",
          null,
          rel ? el("span", { class: "badge badge-warning", text: "relevant" }) : null,
          d.note ? el("span", { class: rel ? "note" : "muted", text: " " + d.note }) : null,
        ),
      );
    });
    const nRel = diffs.filter((d) => d.relevant === true).length;
    s.appendChild(
      el("p", {
        class: "muted",
        text:
          diffs.length + " keys differ; " + nRel + " may affect the results (first, highlighted).",
      }),
    );
    s.appendChild(table(["key", "baseline", "candidate", "note"], rows));
  }

  function renderFooter(r) {
    const f = section("footer");
    const tool = isObj(r.tool) ? r.tool : {};
    const text =
      (tool.name || "parity") +
      " " +
      (tool.version || "") +
      DOT +
      "report created " +
      (r.created || DASH) +
      DOT +
      "format " +
      (r.format || "?") +
      " version " +
      (r.version ?? "?");
    f.insertBefore(el("p", { text }), f.firstChild);
  }

  // ---- Main ----

  function load() {
    const node = document.getElementById("parity-report-data");
    if (!node) throw new Error("no report data in the page (script#parity-report-data)");
    const r = JSON.parse(node.textContent);
    if (!isObj(r)) throw new Error("the report data is not a JSON object");
    return r;
  }

  function main() {
    const t0 = performance.now();
    let r;
    try {
      r = load();
      measure("parity parse", t0);
    } catch (e) {
      section("verdict").textContent = "The report data could not be read: " + errorText(e);
      throw e;
    }
    if (r.format !== "parity-report" || r.version !== 1) {
      section("report").prepend(
        notice(
          "This page shows format parity-report version 1; the data says " +
            r.format +
            " version " +
            r.version +
            ".",
        ),
      );
    }
    guarded("verdict", () => renderVerdict(r));
    guarded("platforms", () => renderPlatforms(r));
    guarded("criteria", () => renderCriteria(r));
    guarded("numerics", () => cards(r, "numerics", renderNumerics));
    guarded("quality", () => cards(r, "quality", renderQuality));
    guarded("throughput", () => cards(r, "throughput", renderThroughput));
    guarded("stability", () => cards(r, "stability", renderStability));
    guarded("telemetry", () => renderTelemetry(r));
    guarded("environment", () => renderEnvironment(r));
    guarded("footer", () => renderFooter(r));
    measure("parity sections", t0);

    // Charts are built once the tables have had a chance to paint (or after 100 ms at most,
    // as a page in the background gets no animation frames).
    let started = false;
    const go = () => {
      if (started) return;
      started = true;
      drainCharts(() => {
        root.dataset.readyMs = performance.now().toFixed(1);
        root.dataset.ready = "1";
      });
    };
    requestAnimationFrame(() => setTimeout(go, 0));
    setTimeout(go, 100);
    const resizeAll = () => charts.forEach((c) => c.resize());
    window.addEventListener("beforeprint", resizeAll);
    window.addEventListener("afterprint", resizeAll);
  }

  main();
})();
