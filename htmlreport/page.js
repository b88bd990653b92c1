// The heatmap's details and filter. The cells' data is the JSON in #cells-data:
// strings are indices into its string table s.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("cells-data").textContent);
  var S = data.s, cells = data.cells;
  var heat = document.getElementById("heat");
  var panel = document.getElementById("detail");
  var pinned = null;
  if (!heat || !panel) return;

  function str(i) { return i ? S[i] : ""; }
  function num(v) {
    if (!v) return "";
    return Math.abs(v) >= 1000 ? v.toFixed(0) : v.toPrecision(3);
  }
  function mib(b) { return b ? (b / 1048576).toFixed(1) + " MiB" : ""; }
  function add(dl, name, value, code) {
    if (value === "" || value === undefined || value === null) return;
    var dt = document.createElement("dt"), dd = document.createElement("dd");
    dt.textContent = name;
    if (code) {
      var c = document.createElement("code");
      c.textContent = value;
      dd.appendChild(c);
    } else {
      dd.textContent = value;
    }
    dl.appendChild(dt);
    dl.appendChild(dd);
  }

  function show(td) {
    var c = cells[+td.getAttribute("data-i")];
    if (!c) return;
    panel.textContent = "";
    var close = document.createElement("button");
    close.className = "close";
    close.setAttribute("aria-label", "close");
    close.textContent = "×";
    close.addEventListener("click", hide);
    panel.appendChild(close);
    var h = document.createElement("h3");
    h.textContent = str(c.m) + " on " + str(c.t) + ": " + str(c.s);
    panel.appendChild(h);
    var dl = document.createElement("dl");
    add(dl, "reason", str(c.r), true);
    add(dl, "traced to", str(c.ex), true);
    add(dl, "cause", str(c.c));
    add(dl, "fixture", c.fx ? str(c.fx) + " (its latency and memory are not the real model's)" : "");
    add(dl, "fallback", str(c.fb));
    if (c.p50) {
      add(dl, "latency", "p50 " + num(c.p50) + " ms · p90 " + num(c.p90) + " ms · p99 " + num(c.p99) + " ms");
      add(dl, "throughput", c.thr ? num(c.thr) + " per second" : "");
      add(dl, "load", c.load ? num(c.load) + " ms (session creation)" : "");
    }
    add(dl, "peak memory", c.rss ? mib(c.rss) + (c.scope ? " (" + str(c.scope) + ")" : "") : "");
    add(dl, "model peak", c.mp ? mib(c.mp) + (c.mps ? " (" + str(c.mps) + ")" : "") : str(c.mps));
    add(dl, "placement", str(c.pl));
    add(dl, "run", str(c.run) + (c.at ? " (" + c.at + ")" : ""));
    if (c.pv) {
      var p = c.pv;
      add(dl, "ONNX Runtime", str(p[0]) + (p[1] ? " · library sha256 " + str(p[1]).slice(0, 12) + "…" : ""));
      add(dl, "execution provider", str(p[2]) + (p[3] ? " (" + str(p[3]) + ")" : ""));
      add(dl, "device", str(p[5]) + (p[6] ? " · driver " + str(p[6]) : ""));
      add(dl, "host CPU", str(p[4]));
      add(dl, "model sha256", str(p[7]), true);
      add(dl, "code commit", str(p[8]), true);
      add(dl, "catalog commit", str(p[9]), true);
    }
    if (c.n) add(dl, "history", c.n + (c.n === 1 ? " run" : " runs"));
    (c.ch || []).forEach(function (i) { add(dl, "change", str(i)); });
    panel.appendChild(dl);
    if (c.tr) {
      var a = document.createElement("a");
      a.href = "#" + c.tr;
      a.textContent = "trend chart";
      panel.appendChild(a);
    }
    panel.hidden = false;
  }
  function hide() {
    if (pinned) pinned.classList.remove("sel");
    pinned = null;
    panel.hidden = true;
  }
  function cellOf(ev) {
    var td = ev.target.closest ? ev.target.closest("td[data-i]") : null;
    return td && heat.contains(td) ? td : null;
  }
  heat.addEventListener("mouseover", function (ev) {
    var td = cellOf(ev);
    if (td && !pinned) show(td);
  });
  heat.addEventListener("click", function (ev) {
    var td = cellOf(ev);
    if (!td) return;
    if (pinned) pinned.classList.remove("sel");
    pinned = td;
    td.classList.add("sel");
    show(td);
  });
  heat.addEventListener("keydown", function (ev) {
    var td = cellOf(ev);
    if (td && (ev.key === "Enter" || ev.key === " ")) {
      ev.preventDefault();
      td.click();
    }
  });
  heat.addEventListener("mouseleave", function () { if (!pinned) panel.hidden = true; });
  document.addEventListener("keydown", function (ev) { if (ev.key === "Escape") hide(); });

  var filter = document.getElementById("filter"), shown = document.getElementById("shown");
  var rows = heat.tBodies[0].rows;
  function apply() {
    var q = filter.value.trim().toLowerCase(), n = 0;
    for (var i = 0; i < rows.length; i++) {
      var hit = !q || rows[i].getAttribute("data-f").toLowerCase().indexOf(q) >= 0;
      rows[i].hidden = !hit;
      if (hit) n++;
    }
    shown.textContent = n + " of " + rows.length + " models";
  }
  filter.addEventListener("input", apply);
  apply();
})();
