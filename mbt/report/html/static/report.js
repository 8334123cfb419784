// mbt report: table filters, diagram zoom and source-span highlighting. No dependencies; works from file://.
(function () {
  "use strict";

  function applyFilters(bar) {
    var table = document.getElementById(bar.getAttribute("data-for"));
    if (!table) { return; }
    var wanted = {};
    bar.querySelectorAll("[data-filter]").forEach(function (input) {
      wanted[input.getAttribute("data-filter")] = input.value.trim().toLowerCase();
    });
    var rows = table.tBodies[0] ? table.tBodies[0].rows : [];
    var shown = 0;
    for (var i = 0; i < rows.length; i++) {
      var row = rows[i];
      var ok = true;
      Object.keys(wanted).forEach(function (key) {
        var value = wanted[key];
        if (!ok || !value) { return; }
        if (key === "text") {
          ok = (row.getAttribute("data-text") || "").indexOf(value) !== -1;
        } else if (key === "state" && value === "not-verified") {
          var state = row.getAttribute("data-state");
          ok = state !== "verified" && state !== "infeasible";
        } else {
          ok = (row.getAttribute("data-" + key) || "").toLowerCase() === value;
        }
      });
      row.hidden = !ok;
      if (ok) { shown++; }
    }
    var count = bar.querySelector("[data-count]");
    if (count) { count.textContent = "showing " + shown + " of " + rows.length; }
  }

  function setUpFilters() {
    document.querySelectorAll(".filters").forEach(function (bar) {
      bar.querySelectorAll("[data-filter]").forEach(function (input) {
        input.addEventListener(input.tagName === "SELECT" ? "change" : "input", function () { applyFilters(bar); });
      });
      applyFilters(bar);
    });
  }

  // The diagram starts at its natural size (labels readable), scrolled by dragging; - and + zoom, "fit" fits the width.
  function setUpZoom() {
    var box = document.getElementById("diagram");
    var svg = box && box.querySelector("svg");
    if (!svg) { return; }
    var width = svg.width.baseVal.value, height = svg.height.baseVal.value, scale = 1;
    function apply() {
      box.classList.remove("fit");
      svg.setAttribute("width", Math.round(width * scale) + "pt");
      svg.setAttribute("height", Math.round(height * scale) + "pt");
    }
    document.querySelectorAll("[data-zoom]").forEach(function (button) {
      button.addEventListener("click", function () {
        var how = button.getAttribute("data-zoom");
        if (how === "fit") { box.classList.add("fit"); return; }
        scale = how === "in" ? scale * 1.25 : how === "out" ? scale / 1.25 : 1;
        apply();
      });
    });
    var drag = null;
    box.addEventListener("mousedown", function (e) {
      if (e.button !== 0 || e.target.closest("a")) { return; }
      drag = { x: e.clientX, y: e.clientY, left: box.scrollLeft, top: box.scrollTop };
      box.classList.add("panning");
    });
    window.addEventListener("mousemove", function (e) {
      if (!drag) { return; }
      box.scrollLeft = drag.left - (e.clientX - drag.x);
      box.scrollTop = drag.top - (e.clientY - drag.y);
    });
    window.addEventListener("mouseup", function () { drag = null; box.classList.remove("panning"); });
  }

  // Every table sorts by a column when its header is clicked: numbers (12, 78.6%, 11/14) as numbers, else text.
  function sortKey(cell) {
    var text = (cell ? cell.textContent : "").trim();
    var match = /^-?\d+(?:\.\d+)?/.exec(text);
    return match ? { n: parseFloat(match[0]), t: text } : { n: null, t: text.toLowerCase() };
  }

  function setUpSorting() {
    document.querySelectorAll("table").forEach(function (table) {
      var head = table.tHead && table.tHead.rows[0];
      if (!head || !table.tBodies[0]) { return; }
      Array.prototype.forEach.call(head.cells, function (th, column) {
        if (!th.textContent.trim()) { return; }
        var button = document.createElement("button");
        button.type = "button";
        button.className = "sort";
        while (th.firstChild) { button.appendChild(th.firstChild); }
        th.appendChild(button);
        th.classList.add("sortable-th");
        button.addEventListener("click", function () {
          var descending = th.getAttribute("aria-sort") === "ascending";
          Array.prototype.forEach.call(head.cells, function (other) { other.removeAttribute("aria-sort"); });
          th.setAttribute("aria-sort", descending ? "descending" : "ascending");
          var body = table.tBodies[0];
          var rows = Array.prototype.slice.call(body.rows);
          rows.sort(function (a, b) {
            var x = sortKey(a.cells[column]), y = sortKey(b.cells[column]), order;
            if (x.n !== null && y.n !== null) { order = x.n - y.n; } else { order = x.t < y.t ? -1 : x.t > y.t ? 1 : 0; }
            return descending ? -order : order;
          });
          rows.forEach(function (row) { body.appendChild(row); });
        });
      });
    });
  }

  // #L12 or #L12-L15 highlights those lines of a source document; the banner names the elements citing them.
  function highlight() {
    var match = /^#L(\d+)(?:-L(\d+))?$/.exec(window.location.hash);
    document.querySelectorAll(".line.hl").forEach(function (line) { line.classList.remove("hl"); });
    var banner = document.getElementById("cite-banner");
    if (!match) { if (banner) { banner.hidden = true; } return; }
    var first = parseInt(match[1], 10);
    var last = match[2] ? parseInt(match[2], 10) : first;
    for (var n = first; n <= last; n++) {
      var line = document.getElementById("L" + n);
      if (line) { line.classList.add("hl"); }
    }
    var target = document.getElementById("L" + first);
    if (target) { target.scrollIntoView({ block: "center" }); }
    var data = document.getElementById("citations");
    if (!banner || !data) { return; }
    var citations = JSON.parse(data.textContent || "[]").filter(function (c) {
      return c.line_start <= last && first <= c.line_end;
    });
    banner.textContent = "";
    var head = document.createElement("strong");
    head.textContent = "Lines " + first + (last !== first ? "-" + last : "") + " are cited by: ";
    banner.appendChild(head);
    citations.forEach(function (c, i) {
      if (i) { banner.appendChild(document.createTextNode(", ")); }
      var a = document.createElement("a");
      a.href = c.page + "#" + c.anchor;
      a.textContent = c.element + " (" + c.coverage + ")";
      banner.appendChild(a);
    });
    if (!citations.length) { banner.appendChild(document.createTextNode("no element")); }
    banner.hidden = false;
  }

  document.addEventListener("DOMContentLoaded", function () {
    setUpFilters();
    setUpZoom();
    setUpSorting();
    highlight();
    window.addEventListener("hashchange", highlight);
    document.body.setAttribute("data-ready", "1");
  });
}());
