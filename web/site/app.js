// The web calculator's page: a form whose fields are plan options, sent to memplan's core
// (memplan.js: estimate() and catalog(), JSON in and out, the same report as
// `memplan estimate --format json`), and the answer drawn as a stacked bar, a table with the
// CLI's rows and a memory-against-context chart.
"use strict";

const $ = (id) => document.getElementById(id);
const COLORS = ["#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#eeca3b", "#b279a2", "#ff9da6", "#9d755d", "#bab0ac"];
// The options the form has fields for; the rest are under "More options".
const FORM_KEYS = new Set(["kind", "batch_size", "seq_len", "precision"]);

let core = null;
let catalog = null;
let timer = null;

// Sizes as the CLI's tables write them (powers of 1024, two decimals).
function iec(bytes) {
  const units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(2)} ${units[unit]}`;
}

function optionByKey(key) {
  return catalog.options.find((o) => o.key === key);
}

// The request for the core: the model (or the pasted config), the device and the options
// given, each by its plan key.
function currentRequest() {
  const options = { kind: $("workload").value };
  const precision = $("precision").value.trim();
  if (precision && precision !== "auto") options.precision = precision;
  if ($("batch").value !== "") options.batch_size = $("batch").value;
  if ($("seq").value !== "") options.seq_len = $("seq").value;
  for (const row of document.querySelectorAll(".extra-row")) {
    const option = optionByKey(row.querySelector("select").value);
    const input = row.querySelector("input");
    if (option.kind === "flag") {
      if (input.checked) options[option.key] = true;
    } else if (input.value.trim() !== "") {
      options[option.key] = option.kind === "list" ? input.value.split(",").map((s) => s.trim()) : input.value.trim();
    }
  }
  const request = { options };
  const capacity = $("capacity").value.trim();
  const gpu = capacity || $("gpu").value;
  if (gpu) request.gpu = gpu;
  const config = $("config").value.trim();
  if (config) {
    try {
      request.config = JSON.parse(config);
    } catch (e) {
      throw new Error(`config.json: ${e.message}`);
    }
  } else {
    request.model = $("model").value;
  }
  return request;
}

// `memplan estimate ...` for the same request: what a user runs to get this answer in a terminal.
function commandLine(request) {
  const words = ["memplan", "estimate", request.model || "config.json"];
  if (request.gpu) words.push("--gpu", request.gpu);
  for (const [key, value] of Object.entries(request.options)) {
    const option = optionByKey(key);
    const flag = key === "kind" ? "-w" : option.flag;
    if (value === true) words.push(flag);
    else words.push(flag, Array.isArray(value) ? value.join(",") : String(value));
  }
  return words.map((w) => (/^[\w.,:/@=+-]+$/.test(w) ? w : `'${w.replace(/'/g, "'\\''")}'`)).join(" ");
}

function estimate(request) {
  return JSON.parse(core.estimate(JSON.stringify(request)));
}

function showError(message) {
  $("error").textContent = message;
  $("error").hidden = false;
  $("answer").classList.add("stale");
}

function render(report, request) {
  $("error").hidden = true;
  const total = report.total_bytes;
  $("total").textContent = iec(total);
  $("total").dataset.bytes = String(total);
  $("total").title = `${total.toLocaleString("en")} bytes`;
  const verdict = $("verdict");
  verdict.className = report.verdict || "";
  verdict.textContent = report.verdict ? report.verdict.replace(/_/g, " ") : "no GPU chosen";
  const model = report.model || {};
  const work = report.workload || {};
  const device = report.device ? ` on ${report.device.name} (${iec(report.device.memory_bytes)})` : "";
  $("summary").textContent =
    `${model.name} (${(model.params || 0).toLocaleString("en")} parameters), ${work.kind}, ` +
    `batch ${work.batch_size} × ${work.seq_len} tokens, ${report.precision ? report.precision.resolved : ""}${device}`;

  const components = report.components || [];
  const scale = Math.max(total, report.device ? report.device.memory_bytes : 0) || 1;
  const bar = $("bar");
  bar.replaceChildren();
  components.forEach((c, i) => {
    const part = document.createElement("div");
    part.style.width = `${(100 * c.bytes) / scale}%`;
    part.style.background = COLORS[i % COLORS.length];
    part.title = `${c.name}: ${iec(c.bytes)}`;
    bar.append(part);
  });
  if (report.device) {
    const limit = document.createElement("span");
    limit.className = "limit";
    limit.style.left = `calc(${(100 * report.device.memory_bytes) / scale}% - 2px)`;
    limit.title = `${report.device.name}: ${iec(report.device.memory_bytes)}`;
    bar.append(limit);
  }

  const body = $("rows").querySelector("tbody");
  body.replaceChildren();
  const addRow = (c, child, color) => {
    const tr = document.createElement("tr");
    if (child) tr.className = "child";
    const name = document.createElement("td");
    if (color) {
      const swatch = document.createElement("span");
      swatch.className = "swatch";
      swatch.style.background = color;
      name.append(swatch);
    }
    name.append(c.name);
    const bytes = document.createElement("td");
    bytes.className = "num";
    bytes.textContent = iec(c.bytes);
    bytes.title = `${c.bytes.toLocaleString("en")} bytes`;
    const share = document.createElement("td");
    share.className = "num";
    share.textContent = `${((100 * c.bytes) / (total || 1)).toFixed(1)}%`;
    const formula = document.createElement("td");
    formula.className = "formula";
    formula.textContent = c.formula || "";
    tr.append(name, bytes, share, formula);
    body.append(tr);
  };
  components.forEach((c, i) => {
    addRow(c, false, COLORS[i % COLORS.length]);
    for (const d of c.detail || []) addRow(d, true, null);
  });
  $("command").textContent = commandLine(request);
  drawChart(request, report);
}

// Memory against sequence length: the same plan at powers of two up to the model's context.
function drawChart(request, report) {
  const built = catalog.models.find((m) => m.name === request.model);
  const context = built ? built.max_seq_len : (request.config && request.config.max_position_embeddings) || 4096;
  const points = [];
  for (let seq = 128; seq <= context; seq *= 2) {
    const r = estimate({ ...request, options: { ...request.options, seq_len: String(seq) } });
    if (!r.error) points.push([seq, r.total_bytes]);
  }
  const chart = $("chart");
  if (points.length < 2) {
    chart.textContent = "Too few sequence lengths to draw.";
    return;
  }
  const W = 640, H = 240, L = 70, R = 24, T = 12, B = 34;
  const memory = report.device ? report.device.memory_bytes : 0;
  const top = Math.max(memory, ...points.map((p) => p[1])) * 1.05;
  const x = (seq) => L + ((W - L - R) * Math.log2(seq / points[0][0])) / Math.log2(points[points.length - 1][0] / points[0][0]);
  const y = (bytes) => T + (H - T - B) * (1 - bytes / top);
  const parts = [`<svg viewBox="0 0 ${W} ${H}" xmlns="http://www.w3.org/2000/svg" role="img" aria-label="memory against sequence length">`];
  for (let i = 0; i <= 4; i += 1) {
    const b = (top * i) / 4;
    parts.push(`<line x1="${L}" x2="${W - R}" y1="${y(b)}" y2="${y(b)}" stroke="#e6e9ef"/>`,
               `<text x="${L - 6}" y="${y(b) + 4}" text-anchor="end" fill="#6b7587">${iec(Math.round(b))}</text>`);
  }
  for (const [seq] of points) {
    parts.push(`<text x="${x(seq)}" y="${H - B + 16}" text-anchor="middle" fill="#6b7587">${seq}</text>`);
  }
  parts.push(`<text x="${(L + W - R) / 2}" y="${H - 3}" text-anchor="middle" fill="#4a5568">sequence length (tokens)</text>`);
  if (memory) {
    parts.push(`<line x1="${L}" x2="${W - R}" y1="${y(memory)}" y2="${y(memory)}" stroke="#8f1d1d" stroke-dasharray="5 4"/>`,
               `<text x="${W - R}" y="${y(memory) - 5}" text-anchor="end" fill="#8f1d1d">${report.device.name}</text>`);
  }
  const line = points.map(([seq, bytes]) => `${x(seq).toFixed(1)},${y(bytes).toFixed(1)}`).join(" ");
  parts.push(`<polyline points="${line}" fill="none" stroke="#4c78a8" stroke-width="2.5"/>`);
  for (const [seq, bytes] of points) {
    parts.push(`<circle cx="${x(seq)}" cy="${y(bytes)}" r="3.5" fill="#4c78a8"><title>${seq} tokens: ${iec(bytes)}</title></circle>`);
  }
  parts.push("</svg>");
  chart.innerHTML = parts.join("");
}

function update() {
  let request;
  try {
    request = currentRequest();
  } catch (e) {
    showError(e.message);
    return;
  }
  const report = estimate(request);
  if (report.error) {
    showError(`memplan: error: ${report.error}`);
    return;
  }
  $("answer").classList.remove("stale");
  render(report, request);
  window.memplanReport = report;  // for the browser test: the page's answer as the core gave it
}

// Recomputes once the user pauses; body[data-busy] says an answer is pending.
function schedule() {
  clearTimeout(timer);
  document.body.dataset.busy = "true";
  timer = setTimeout(() => {
    update();
    document.body.dataset.busy = "false";
  }, 120);
}

function addOptionRow() {
  const row = document.createElement("div");
  row.className = "extra-row";
  const select = document.createElement("select");
  for (const o of catalog.options) {
    if (FORM_KEYS.has(o.key)) continue;
    const choice = new Option(o.flag, o.key);
    choice.title = `${o.help}${o.default ? ` (default: ${o.default})` : ""} [${o.applies}]`;
    select.append(choice);
  }
  const remove = document.createElement("button");
  remove.type = "button";
  remove.textContent = "×";
  remove.title = "Remove this option";
  remove.onclick = () => {
    row.remove();
    schedule();
  };
  const setInput = () => {
    const option = optionByKey(select.value);
    select.title = option.help;
    const input = document.createElement("input");
    if (option.kind === "flag") input.type = "checkbox";
    else input.placeholder = option.default || option.kind;
    const old = row.querySelector("input");
    if (old) old.replaceWith(input);
    else row.insertBefore(input, remove);
  };
  select.onchange = () => {
    setInput();
    schedule();
  };
  row.append(select, remove);
  setInput();
  $("extra").append(row);
}

createMemplan().then((module) => {
  core = module;
  catalog = JSON.parse(core.catalog());
  for (const m of catalog.models) {
    $("model").append(new Option(`${m.name} (${(m.params / 1e9).toFixed(m.params < 1e9 ? 2 : 1)}B)`, m.name));
  }
  $("model").value = "llama-2-7b";
  for (const w of catalog.workloads) $("workload").append(new Option(w, w));
  $("workload").value = "inference";
  for (const g of catalog.gpus) $("gpu").append(new Option(`${g.name} (${iec(g.memory_bytes)})`, g.name));
  $("version").textContent = `memplan ${catalog.version}`;
  $("plan").addEventListener("input", schedule);
  $("plan").addEventListener("change", schedule);
  $("add-option").onclick = () => {
    addOptionRow();
    schedule();
  };
  update();
  const ms = performance.now();
  window.memplanFirstResultMs = ms;
  $("timing").textContent = `first result ${ms.toFixed(0)} ms after the page started loading`;
  document.body.dataset.busy = "false";
});
