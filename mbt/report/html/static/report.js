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

  function setUpZoom() {
    var box = document.getElementById("diagram");
    if (!box) { return; }
    document.querySelectorAll("[data-zoom]").forEach(function (button) {
      button.addEventListener("click", function () {
        box.classList.toggle("fit", button.getAttribute("data-zoom") === "fit");
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
    highlight();
    window.addEventListener("hashchange", highlight);
    document.body.setAttribute("data-ready", "1");
  });
}());
