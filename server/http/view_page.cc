// The page of server/http/view_pages.h: plain HTML, CSS and JavaScript, compiled into the
// daemon; it loads nothing but this daemon's own routes (/api/histograms, /api/view/,
// /render/). "/" lists the histograms with their counters (refreshed every 5 s);
// "/histogram/<name>" shows one: its heatmap (a bare render the size of the view, refreshed
// every 2 s), its column and row projections as line plots (pooled views of 1 x width and
// height x 1 cells), a log/linear and a sum/max toggle, and zoom by dragging a rectangle on
// the heatmap (the region goes into the URL's fragment: #rows=a:b&cols=c:d&scale=log).
// For tests and scripts the page records what it shows: body[data-histograms] (rows
// listed), img#heatmap[data-region] (the region of the last render drawn) and
// body[data-renders] (renders drawn).
#include "server/http/view_pages.h"

namespace histd::server {

const char kViewPageHtml[] = R"HTML(<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>histd</title>
<style>
  body { font: 14px/1.4 system-ui, sans-serif; margin: 16px 24px; color: #1d1d1f; }
  h1 { font-size: 20px; margin: 0 0 12px; }
  h1 a { color: inherit; text-decoration: none; }
  h2 { font-size: 14px; margin: 14px 0 4px; font-weight: 600; }
  table { border-collapse: collapse; }
  th, td { padding: 4px 10px; border-bottom: 1px solid #ddd; text-align: right; }
  th:first-child, td:first-child { text-align: left; }
  th { font-weight: 600; background: #f4f4f6; }
  .bar { margin: 6px 0 10px; }
  .bar button { margin-right: 6px; }
  #heat { position: relative; display: inline-block; cursor: crosshair; user-select: none;
          background: #440154; }
  #heatmap { display: block; image-rendering: pixelated; }
  #band { position: absolute; display: none; border: 1px solid #fff; outline: 1px solid #000;
          background: rgba(255, 255, 255, 0.2); pointer-events: none; }
  canvas { display: block; border: 1px solid #ccc; background: #fff; }
  #error { color: #b00020; min-height: 1.4em; }
  .muted { color: #666; }
</style>
</head>
<body>
<h1><a href="/">histd</a> <span id="title" class="muted"></span></h1>
<div id="error"></div>
<section id="list-view" hidden>
  <table id="histograms">
    <thead><tr><th>histogram</th><th>rows x cols</th><th>cap</th><th>x axis</th><th>y axis</th>
      <th>samples applied</th><th>samples rejected</th><th>messages</th><th>outside axes</th></tr></thead>
    <tbody></tbody>
  </table>
</section>
<section id="histogram-view" hidden>
  <div class="bar">
    <button id="scale" type="button">log scale</button>
    <button id="pool" type="button">max pooling</button>
    <button id="unzoom" type="button">whole histogram</button>
    <span id="where" class="muted"></span>
  </div>
  <div id="heat"><img id="heatmap" alt="heatmap"><div id="band"></div></div>
  <div id="zrange" class="muted"></div>
  <h2>columns: sum over the region's rows</h2>
  <canvas id="colproj" height="120"></canvas>
  <h2>rows: sum over the region's columns</h2>
  <canvas id="rowproj" height="120"></canvas>
</section>
<script>
"use strict";
const LIST_REFRESH_MS = 5000, HEATMAP_REFRESH_MS = 2000;
const $ = (id) => document.getElementById(id);
const state = { name: null, spec: null, region: null, scale: "linear", pool: "sum",
                width: 0, height: 0, renders: 0, busy: false, objectUrl: null };

function showError(text) { $("error").textContent = text || ""; }

async function getJson(url) {
  const response = await fetch(url, { cache: "no-store" });
  if (!response.ok) throw new Error(url + ": " + (await response.text()));
  return response.json();
}

function axisText(axis) { return axis ? "[" + axis[0] + ", " + axis[1] + ")" : "-"; }

async function refreshList() {
  try {
    const histograms = await getJson("/api/histograms");
    const body = $("histograms").tBodies[0];
    body.replaceChildren();
    for (const h of histograms) {
      const row = body.insertRow();
      row.dataset.name = h.name;
      const link = document.createElement("a");
      link.href = "/histogram/" + encodeURIComponent(h.name);
      link.textContent = h.name;
      row.insertCell().append(link);
      for (const text of [h.rows + " x " + h.cols, h.cap, axisText(h.x), axisText(h.y),
                          h.samples_applied.toLocaleString(), h.samples_rejected.toLocaleString(),
                          h.messages_applied.toLocaleString(), h.samples_outside.toLocaleString()]) {
        row.insertCell().textContent = text;
      }
    }
    document.body.dataset.histograms = String(histograms.length);
    showError("");
  } catch (e) { showError(String(e)); }
}

function parseRange(text, extent) {
  const m = /^(\d*):(\d*)$/.exec(text || "");
  if (!m) return [0, extent];
  const begin = m[1] === "" ? 0 : Math.min(+m[1], extent);
  const end = m[2] === "" ? extent : Math.min(+m[2], extent);
  return end > begin ? [begin, end] : [0, extent];
}

function readFragment() {
  const p = new URLSearchParams(location.hash.slice(1));
  state.region = { rows: parseRange(p.get("rows"), state.spec.rows),
                   cols: parseRange(p.get("cols"), state.spec.cols) };
  state.scale = p.get("scale") === "log" ? "log" : "linear";
  state.pool = p.get("pool") === "max" ? "max" : "sum";
}

function writeFragment() {
  const r = state.region;
  history.replaceState(null, "", "#rows=" + r.rows[0] + ":" + r.rows[1] + "&cols=" + r.cols[0] +
                       ":" + r.cols[1] + "&scale=" + state.scale + "&pool=" + state.pool);
}

function regionQuery() {
  const r = state.region;
  return "rows=" + r.rows[0] + ":" + r.rows[1] + "&cols=" + r.cols[0] + ":" + r.cols[1];
}

// The view's pixel size: as wide as the window allows (at most 1024), height following the
// region's aspect within 128..512.
function layout() {
  const r = state.region;
  state.width = Math.max(64, Math.min(1024, window.innerWidth - 64));
  const aspect = (r.rows[1] - r.rows[0]) / (r.cols[1] - r.cols[0]);
  state.height = Math.round(Math.max(128, Math.min(512, state.width * aspect)));
  $("colproj").width = state.width;
  $("rowproj").width = state.width;
}

function axisRange(axis, begin, end, bins) {
  if (!axis) return "";
  const at = (b) => (axis[0] + b * (axis[1] - axis[0]) / bins).toPrecision(4);
  return " (" + at(begin) + " .. " + at(end) + ")";
}

function describe() {
  const r = state.region, s = state.spec;
  $("where").textContent = "rows " + r.rows[0] + ":" + r.rows[1] +
      axisRange(s.y, r.rows[0], r.rows[1], s.rows) + ", cols " + r.cols[0] + ":" + r.cols[1] +
      axisRange(s.x, r.cols[0], r.cols[1], s.cols) + "; row 0 at the top";
  $("scale").textContent = state.scale === "log" ? "linear scale" : "log scale";
  $("pool").textContent = state.pool === "max" ? "sum pooling" : "max pooling";
}

function plot(canvas, values, label) {
  const g = canvas.getContext("2d"), w = canvas.width, h = canvas.height;
  g.clearRect(0, 0, w, h);
  const f = state.scale === "log" ? (v) => Math.log10(1 + v) : (v) => v;
  let top = 0;
  for (const v of values) top = Math.max(top, f(v));
  g.strokeStyle = "#21918c";
  g.lineWidth = 1.5;
  g.beginPath();
  values.forEach((v, i) => {
    const x = values.length === 1 ? w / 2 : (i + 0.5) * w / values.length;
    const y = h - 4 - (top > 0 ? f(v) / top : 0) * (h - 20);
    if (i === 0) g.moveTo(x, y); else g.lineTo(x, y);
  });
  g.stroke();
  g.fillStyle = "#444";
  g.font = "11px sans-serif";
  g.fillText(label + ", max " + Math.max(0, ...values).toLocaleString() +
             (state.scale === "log" ? " (log)" : ""), 4, 12);
}

async function refreshHeatmap() {
  if (state.busy) return;
  state.busy = true;
  try {
    const name = encodeURIComponent(state.name);
    const url = "/render/" + name + ".png?width=" + state.width + "&height=" + state.height +
                "&" + regionQuery() + "&scale=" + state.scale + "&pool=" + state.pool + "&bare=1";
    const response = await fetch(url, { cache: "no-store" });
    if (!response.ok) throw new Error(await response.text());
    const region = response.headers.get("X-Histd-Region");
    const z = (response.headers.get("X-Histd-Z") || "").split(",");
    const blob = await response.blob();
    const img = $("heatmap");
    const objectUrl = URL.createObjectURL(blob);
    await new Promise((resolve, reject) => {
      img.onload = resolve;
      img.onerror = () => reject(new Error("the render did not decode"));
      img.src = objectUrl;
    });
    if (state.objectUrl) URL.revokeObjectURL(state.objectUrl);
    state.objectUrl = objectUrl;
    img.dataset.region = region;
    $("zrange").textContent = "colour " + state.scale + " from " + z[0] + " to " + z[1] +
        " (" + state.pool + " of each pixel's bins); red: a bin at cap " + state.spec.cap;
    const [cols, rows] = await Promise.all([
      getJson("/api/view/" + name + "?" + regionQuery() + "&out_rows=1&out_cols=" + state.width),
      getJson("/api/view/" + name + "?" + regionQuery() + "&out_rows=" + state.width + "&out_cols=1")]);
    plot($("colproj"), cols.values, "columns " + cols.region[2] + ":" + cols.region[3]);
    plot($("rowproj"), rows.values, "rows " + rows.region[0] + ":" + rows.region[1]);
    state.renders += 1;
    document.body.dataset.renders = String(state.renders);
    showError("");
  } catch (e) { showError(String(e)); }
  finally { state.busy = false; }
}

function setRegion(rows, cols) {
  state.region = { rows: rows, cols: cols };
  layout();
  describe();
  writeFragment();
  refreshHeatmap();
}

function startZoom() {
  const heat = $("heat"), band = $("band");
  let start = null;
  const at = (e) => {
    const box = $("heatmap").getBoundingClientRect();
    return [Math.min(Math.max(e.clientX - box.left, 0), box.width),
            Math.min(Math.max(e.clientY - box.top, 0), box.height)];
  };
  heat.addEventListener("mousedown", (e) => { start = at(e); e.preventDefault(); });
  window.addEventListener("mousemove", (e) => {
    if (!start) return;
    const p = at(e);
    Object.assign(band.style, { display: "block", left: Math.min(start[0], p[0]) + "px",
                                top: Math.min(start[1], p[1]) + "px",
                                width: Math.abs(p[0] - start[0]) + "px",
                                height: Math.abs(p[1] - start[1]) + "px" });
  });
  window.addEventListener("mouseup", (e) => {
    if (!start) return;
    const p = at(e), s = start;
    start = null;
    band.style.display = "none";
    if (Math.abs(p[0] - s[0]) < 3 || Math.abs(p[1] - s[1]) < 3) return;  // a click
    const box = $("heatmap").getBoundingClientRect(), r = state.region;
    const nr = r.rows[1] - r.rows[0], nc = r.cols[1] - r.cols[0];
    const rows = [r.rows[0] + Math.floor(Math.min(s[1], p[1]) / box.height * nr),
                  r.rows[0] + Math.ceil(Math.max(s[1], p[1]) / box.height * nr)];
    const cols = [r.cols[0] + Math.floor(Math.min(s[0], p[0]) / box.width * nc),
                  r.cols[0] + Math.ceil(Math.max(s[0], p[0]) / box.width * nc)];
    if (rows[1] > rows[0] && cols[1] > cols[0]) setRegion(rows, cols);
  });
}

async function openHistogram(name) {
  $("histogram-view").hidden = false;
  $("title").textContent = name;
  document.title = name + " - histd";
  state.name = name;
  try {
    const histograms = await getJson("/api/histograms");
    state.spec = histograms.find((h) => h.name === name);
    if (!state.spec) throw new Error("no histogram named " + name);
  } catch (e) { showError(String(e)); return; }
  readFragment();
  layout();
  describe();
  startZoom();
  $("scale").onclick = () => { state.scale = state.scale === "log" ? "linear" : "log";
                               describe(); writeFragment(); refreshHeatmap(); };
  $("pool").onclick = () => { state.pool = state.pool === "max" ? "sum" : "max";
                              describe(); writeFragment(); refreshHeatmap(); };
  $("unzoom").onclick = () => setRegion([0, state.spec.rows], [0, state.spec.cols]);
  window.addEventListener("resize", () => { layout(); refreshHeatmap(); });
  refreshHeatmap();
  setInterval(refreshHeatmap, HEATMAP_REFRESH_MS);
}

if (location.pathname.startsWith("/histogram/")) {
  openHistogram(decodeURIComponent(location.pathname.slice("/histogram/".length)));
} else {
  $("list-view").hidden = false;
  refreshList();
  setInterval(refreshList, LIST_REFRESH_MS);
}
</script>
</body>
</html>
)HTML";

}  // namespace histd::server
