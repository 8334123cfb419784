/* mbt results viewer (mbt.report.site): the list of result sets, a set's case list, a case's page.
   Every text from the store is put on the page as a text node (textContent), never as markup.
   The page reports what it did on <body>: data-ready="1" once the first rows are shown, data-loaded="1" while every
   case the filters need is read (a set's list: its rows, and its texts while a search is typed), and
   window.mbtViewer.timings (milliseconds since the navigation started; `filterFirst` and `filter`: from an input to
   its first rows drawn and to its whole result drawn). */
(function () {
  "use strict";
  var body = document.body;
  var timings = {};
  window.mbtViewer = {timings: timings};
  var WORDS = {pass: "pass", fail: "fail", not_judged: "not judged", error: "error"};
  var CODES = {p: "pass", f: "fail", n: "not_judged", e: "error", "-": ""};
  var PAGE = 50;

  /* A search as `mbt results show --search` folds it: NFC, lower case, then Python's case folding beyond that. */
  var FOLD = window.MBT_FOLD || {};
  function fold(text) {
    var lower = text.normalize("NFC").toLowerCase(), out = "";
    for (var ch of lower) { out += FOLD[ch] || ch; }
    return out;
  }

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    if (attrs) { Object.keys(attrs).forEach(function (k) { node.setAttribute(k, attrs[k]); }); }
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    return node;
  }

  function badge(verdict) {
    return el("span", {"class": "verdict " + (verdict || "none")}, WORDS[verdict] || verdict || "—");
  }

  function pageData() {
    var node = document.getElementById("set-data");
    return node ? JSON.parse(node.textContent) : null;
  }

  function loadScript(src, done, failed) {
    var s = document.createElement("script");
    s.src = src;
    s.onload = function () { s.remove(); done(); };
    s.onerror = function () { s.remove(); (failed || function () {})(); };
    document.head.appendChild(s);
  }

  /* The hash keeps a list's filters (#q=...&turns=multi&result=fail,error&page=2): back, forward and links keep
     them. */
  function readHash() {
    var out = {};
    location.hash.replace(/^#/, "").split("&").forEach(function (part) {
      if (!part) { return; }
      var at = part.indexOf("=");
      var key = decodeURIComponent(at < 0 ? part : part.slice(0, at));
      out[key] = at < 0 ? "" : decodeURIComponent(part.slice(at + 1).replace(/\+/g, " "));
    });
    return out;
  }

  function writeHash(values) {
    var parts = [];
    Object.keys(values).forEach(function (k) {
      if (values[k] !== "" && values[k] !== null && values[k] !== undefined) {
        parts.push(encodeURIComponent(k) + "=" + encodeURIComponent(values[k]));
      }
    });
    history.replaceState(null, "", location.pathname + location.search + (parts.length ? "#" + parts.join("&") : ""));
  }

  function checked(form, name) {
    return Array.prototype.filter.call(form.querySelectorAll("input[name='" + name + "']"), function (i) {
      return i.checked && i.value;
    }).map(function (i) { return i.value; });
  }

  function setChecked(form, name, values) {
    form.querySelectorAll("input[name='" + name + "']").forEach(function (i) {
      i.checked = i.type === "radio" ? (values[0] || "") === i.value : values.indexOf(i.value) >= 0;
    });
  }

  // ------------------------------------------------------------------ the list of result sets

  function setsPage() {
    var form = document.getElementById("set-filters");
    var rows = Array.prototype.slice.call(document.querySelectorAll("#sets tbody tr"));
    var count = document.getElementById("set-count");
    var keys = rows.map(function (r) {
      return {name: fold(r.dataset.name), status: r.dataset.status, type: r.dataset.type,
              executor: fold(r.dataset.executor), started: r.dataset.started};
    });
    function apply() {
      var t0 = performance.now();
      var name = fold(form.q.value.trim()), who = fold(form.executor.value.trim());
      var statuses = checked(form, "status"), types = checked(form, "type");
      var since = form.since.value, until = form.until.value, shown = 0;
      rows.forEach(function (row, i) {
        var k = keys[i];
        var keep = (!name || k.name.indexOf(name) >= 0) && (!who || k.executor.indexOf(who) >= 0)
          && (!statuses.length || statuses.indexOf(k.status) >= 0) && (!types.length || types.indexOf(k.type) >= 0)
          && (!since || k.started >= since) && (!until || k.started <= until);
        row.hidden = !keep;
        shown += keep ? 1 : 0;
      });
      count.textContent = shown === rows.length ? rows.length + " result set(s)"
        : shown + " of " + rows.length + " result set(s) match";
      writeHash({q: form.q.value, status: statuses.join(","), type: types.join(","), executor: form.executor.value,
                 since: since, until: until});
      timings.filter = performance.now() - t0;
    }
    var start = readHash();
    form.q.value = start.q || "";
    form.executor.value = start.executor || "";
    form.since.value = start.since || "";
    form.until.value = start.until || "";
    setChecked(form, "status", (start.status || "").split(",").filter(Boolean));
    setChecked(form, "type", (start.type || "").split(",").filter(Boolean));
    form.addEventListener("input", apply);
    form.addEventListener("change", apply);
    form.addEventListener("submit", function (e) { e.preventDefault(); });
    apply();
    timings.firstRender = performance.now();
    body.dataset.ready = "1";
    body.dataset.loaded = "1";
  }

  // ------------------------------------------------------------------ a set's case list

  var ROW = {seq: 0, key: 1, multi: 2, overall: 3, erred: 4, question: 5, answer: 6, codes: 7};

  /* The list of a set's cases. `rows` come from rows/NNNNN.js, read one chunk after another from the start; `texts`
     (every question and answer of a case, folded as the store folds them) from search/NNNNN.js, read the same way
     after the rows, or at once when a search is typed before. A filter goes over the cases read so far (`matched`: their places in `rows`) and
     goes on as more arrive; with a search, over the cases whose texts are read. */
  function setPage() {
    var data = pageData();
    var form = document.getElementById("case-filters");
    var tbody = document.querySelector("#cases tbody");
    var count = document.getElementById("case-count");
    var at = document.getElementById("page-at");
    var prev = document.getElementById("page-prev"), next = document.getElementById("page-next");
    var rows = [], texts = [], matched = [], scanned = 0, page = 0;
    var rowChunks = 0, textChunks = 0, textsAsked = false;
    var filter = {turns: "", results: [], needle: ""};
    var pendingInput = null;

    function keep(index) {
      var row = rows[index];
      if (filter.turns === "single" && row[ROW.multi]) { return false; }
      if (filter.turns === "multi" && !row[ROW.multi]) { return false; }
      if (filter.results.length) {
        var ok = filter.results.indexOf(row[ROW.overall]) >= 0 || (filter.results.indexOf("ok") >= 0 && !row[ROW.erred]);
        if (!ok) { return false; }
      }
      return !filter.needle || texts[index].indexOf(filter.needle) >= 0;
    }

    function readable() {  // how many cases the filter can decide now
      return filter.needle ? Math.min(rows.length, texts.length) : rows.length;
    }

    function complete() {
      return rowChunks === data.rowChunks && (!filter.needle || textChunks === data.rowChunks);
    }

    function scan() {  // the cases read since the last scan
      for (var limit = readable(); scanned < limit; scanned++) {
        if (keep(scanned)) { matched.push(scanned); }
      }
    }

    function caseLink(index) {
      return "case.html?i=" + index + location.hash;
    }

    function render() {
      var pages = Math.max(1, Math.ceil(matched.length / PAGE));
      if (page >= pages) { page = pages - 1; }
      var fragment = document.createDocumentFragment();
      matched.slice(page * PAGE, page * PAGE + PAGE).forEach(function (index) {
        var row = rows[index], tr = el("tr");
        tr.appendChild(el("td", {"class": "num"}, row[ROW.seq]));
        tr.appendChild(el("td", {"class": "text"}, row[ROW.question]));
        tr.appendChild(el("td", {"class": "text"}, row[ROW.answer]));
        tr.appendChild(el("td", null, row[ROW.multi] ? "multi-turn" : "single-turn"));
        var overall = el("td");
        overall.appendChild(badge(row[ROW.overall]));
        tr.appendChild(overall);
        for (var c = 0; c < data.criteria.length; c++) {
          var cell = el("td"), code = row[ROW.codes].charAt(c);
          if (code && code !== "-") { cell.appendChild(badge(CODES[code])); }
          tr.appendChild(cell);
        }
        var link = el("a", {href: caseLink(index), "aria-label": "Details of case " + row[ROW.seq] + " (" + row[ROW.key] + ")"},
                      "Details");
        var td = el("td");
        td.appendChild(link);
        tr.appendChild(td);
        fragment.appendChild(tr);
      });
      tbody.replaceChildren(fragment);
      var done = complete();
      var loading = done ? "" : " (" + (filter.needle ? "searching: " : "") + readable() + " of " + data.cases
        + " read so far)";
      var filtered = filter.turns || filter.results.length || filter.needle;
      count.textContent = (filtered ? matched.length + " of " + data.cases + " case(s) match" : data.cases + " case(s)")
        + loading;
      at.textContent = matched.length ? "Page " + (page + 1) + " of " + pages : (done ? "No case matches" : "");
      prev.disabled = page === 0;
      next.disabled = page + 1 >= pages;
      body.dataset.loaded = done ? "1" : "0";
      if (pendingInput !== null && timings.filterFirst === undefined && (matched.length || done)) {
        // from the input to its first matching rows drawn (or to "no case matches")
        timings.filterFirst = performance.now() - pendingInput;
      }
      if (done && pendingInput !== null) {  // ... and to the whole result drawn
        timings.filter = performance.now() - pendingInput;
        pendingInput = null;
      }
    }

    function apply() {
      filter.turns = checked(form, "turns")[0] || "";
      filter.results = checked(form, "result");
      filter.needle = fold(form.q.value.trim());
      matched = [];
      scanned = 0;
      page = 0;
      if (filter.needle) { askTexts(); }
      scan();
      writeHash({q: form.q.value, turns: filter.turns, result: filter.results.join(","), page: ""});
      render();
    }

    function changed() {
      pendingInput = performance.now();
      timings.filterFirst = timings.filter = undefined;
      apply();
    }

    function writePage() {
      writeHash({q: form.q.value, turns: filter.turns, result: filter.results.join(","), page: page ? page + 1 : ""});
    }

    function failed() {
      count.textContent = "A part of the cases could not be read: write the site again (mbt results site).";
      body.dataset.ready = "1";
      body.dataset.loaded = "1";
    }

    function arrived(first) {  // a chunk of rows or of texts: filter the cases it makes readable
      var before = matched.length;
      scan();
      var chunks = rowChunks + textChunks;
      if (first || matched.length !== before || complete() || chunks % 5 === 0) { render(); }
    }

    window.mbtRows = function (index, chunk) {
      Array.prototype.push.apply(rows, chunk);
      rowChunks += 1;
      arrived(rowChunks === 1);
      if (rowChunks === 1) {
        timings.firstRender = performance.now();
        body.dataset.ready = "1";
      }
      if (rowChunks < data.rowChunks) {
        loadScript("rows/" + String(rowChunks).padStart(5, "0") + ".js", function () {}, failed);
      } else {
        timings.loaded = performance.now();
        askTexts();  // read ahead: a search typed later finds them read
      }
    };

    window.mbtSearch = function (index, chunk) {
      Array.prototype.push.apply(texts, chunk);
      textChunks += 1;
      arrived(false);
      if (textChunks < data.rowChunks) {
        loadScript("search/" + String(textChunks).padStart(5, "0") + ".js", function () {}, failed);
      } else {
        timings.textsLoaded = performance.now();
      }
    };

    function askTexts() {  // the texts are read once: after the rows, or as soon as a search is typed
      if (textsAsked || data.rowChunks === 0) { return; }
      textsAsked = true;
      loadScript("search/00000.js", function () {}, failed);
    }

    var start = readHash();
    form.q.value = start.q || "";
    setChecked(form, "turns", [start.turns || ""]);
    setChecked(form, "result", (start.result || "").split(",").filter(Boolean));
    filter.turns = start.turns || "";
    filter.results = (start.result || "").split(",").filter(Boolean);
    filter.needle = fold(form.q.value.trim());
    page = Math.max(0, parseInt(start.page || "1", 10) - 1) || 0;
    form.addEventListener("input", changed);
    form.addEventListener("submit", function (e) { e.preventDefault(); });
    prev.addEventListener("click", function () { page -= 1; render(); writePage(); });
    next.addEventListener("click", function () { page += 1; render(); writePage(); });
    if (filter.needle) { askTexts(); }
    if (data.rowChunks === 0) {
      render();
      timings.firstRender = timings.loaded = performance.now();
      body.dataset.ready = "1";
    } else {
      loadScript("rows/00000.js", function () {}, failed);
    }
  }

  // ------------------------------------------------------------------ one case

  function section(parent, title) {
    var s = el("section");
    s.appendChild(el("h2", null, title));
    parent.appendChild(s);
    return s;
  }

  function textBlock(text, missing) {
    if (text === null || text === undefined) { return el("p", {"class": "missing"}, missing); }
    return el("p", {"class": "text"}, text);
  }

  function casePage() {
    var data = pageData();
    var params = new URLSearchParams(location.search);
    var index = parseInt(params.get("i") || "", 10);
    var holder = document.getElementById("case-body");
    var back = document.getElementById("back");
    back.href = "index.html" + location.hash;
    var prev = document.getElementById("case-prev"), next = document.getElementById("case-next");
    if (isNaN(index) || index < 0 || index >= data.cases) {
      holder.replaceChildren(el("p", null, "No such case: open one from the set's list."));
      body.dataset.ready = body.dataset.loaded = "1";
      return;
    }
    function around(link, to) {
      if (to < 0 || to >= data.cases) { link.hidden = true; } else { link.href = "case.html?i=" + to + location.hash; }
    }
    around(prev, index - 1);
    around(next, index + 1);
    var chunk = Math.floor(index / data.detailChunk);
    window.mbtCases = function (at, cases) {
      if (at === chunk) { show(cases[index - chunk * data.detailChunk]); }
    };
    loadScript("cases/" + String(chunk).padStart(5, "0") + ".js", function () {}, function () {
      holder.replaceChildren(el("p", null, "This case could not be read: write the site again (mbt results site)."));
      body.dataset.ready = body.dataset.loaded = "1";
    });

    function show(c) {
      var out = document.createDocumentFragment();
      var title = document.getElementById("case-title");
      title.textContent = "Case " + c.seq + ": " + c.key + " ";
      title.appendChild(badge(c.overall));
      document.getElementById("crumb-case").textContent = "Case " + c.seq;
      document.title = "Case " + c.seq + " (" + c.key + ") of " + data.set + " — mbt results";
      out.appendChild(el("p", null, (c.kind === "multi" ? "Multi-turn" : "Single-turn") + " conversation, "
                         + c.turns + " turn(s)."));

      var why = section(out, "Explanation");
      var table = el("table", {"class": "explain"});
      table.appendChild(el("caption", {"class": "sr"}, "The verdict of each criterion, with its reason"));
      var head = el("tr");
      ["Criterion", "Verdict", "Reason", "Judge"].forEach(function (h) { head.appendChild(el("th", {scope: "col"}, h)); });
      var thead = el("thead");
      thead.appendChild(head);
      table.appendChild(thead);
      var tbody = el("tbody");
      c.verdicts.forEach(function (v) {
        var tr = el("tr");
        tr.appendChild(el("th", {scope: "row"}, v[0]));
        var td = el("td");
        td.appendChild(badge(v[1]));
        tr.appendChild(td);
        tr.appendChild(el("td", {"class": "text"}, v[2]));
        tr.appendChild(el("td", null, v[3]));
        tbody.appendChild(tr);
      });
      table.appendChild(tbody);
      why.appendChild(table);
      if (c.reason) { why.appendChild(el("p", {"class": "text"}, "Overall: " + c.reason)); }

      var qa = section(out, "Questions and answers");
      if (!c.qa.length) { qa.appendChild(el("p", {"class": "missing"}, "No turn recorded.")); }
      c.qa.forEach(function (turn, n) {
        var box = el("div", {"class": "turn"});
        box.appendChild(el("h3", null, "Turn " + (n + 1) + (turn[3] ? "" : " (context, not judged)")));
        box.appendChild(el("h4", null, "Question"));
        box.appendChild(textBlock(turn[0], "(none)"));
        var pair = el("div", {"class": "answers"});  // side by side: the answers are compared
        var expected = el("div");
        expected.appendChild(el("h4", null, "Expected answer"));
        if (turn[1].length) {
          turn[1].forEach(function (e) { expected.appendChild(textBlock(e, "")); });
        } else {
          expected.appendChild(el("p", {"class": "missing"}, "(none given)"));
        }
        var actual = el("div");
        actual.appendChild(el("h4", null, "Actual answer"));
        actual.appendChild(textBlock(turn[2], "(no answer recorded)"));
        pair.appendChild(expected);
        pair.appendChild(actual);
        box.appendChild(pair);
        qa.appendChild(box);
      });

      var history = section(out, "History");
      if (!c.history) {
        history.appendChild(el("p", {"class": "missing"}, "No session recorded: no run answered this case."));
      } else {
        var details = el("details");
        details.appendChild(el("summary", null, "The recorded session, " + c.history.length + " turn(s)"));
        c.history.forEach(function (t, n) {
          var box = el("div", {"class": "turn"});
          box.appendChild(el("h3", null, "Turn " + (n + 1)));
          var dl = el("dl", {"class": "facts stacked"});
          [["Prompt", t.prompt], ["Answer", t.answer], ["Tool calls", (t.calls || []).join("\n")],
           ["Matched tools", t.matched_tools ? t.matched_tools.join(", ") : null],
           ["Commands", t.commands ? t.commands.join(", ") : null], ["Stop reason", t.stop_reason],
           ["Tokens in / out", t.tokens ? t.tokens.input + " / " + t.tokens.output : null]].forEach(function (f) {
            if (f[1] === null || f[1] === undefined || f[1] === "") { return; }
            var div = el("div");
            div.appendChild(el("dt", null, f[0]));
            div.appendChild(el("dd", {"class": "text"}, f[1]));
            dl.appendChild(div);
          });
          box.appendChild(dl);
          details.appendChild(box);
        });
        history.appendChild(details);
      }

      if (c.facts.length) {
        var about = section(out, "About the run");
        var facts = el("dl", {"class": "facts"});
        c.facts.forEach(function (f) {
          var div = el("div");
          div.appendChild(el("dt", null, f[0]));
          div.appendChild(el("dd", {"class": "text"}, f[1]));
          facts.appendChild(div);
        });
        about.appendChild(facts);
      }
      holder.replaceChildren(out);
      timings.firstRender = timings.loaded = performance.now();
      body.dataset.ready = "1";
      body.dataset.loaded = "1";
    }
  }

  var run = {sets: setsPage, set: setPage, "case": casePage}[body.dataset.page];
  if (run) { run(); }
}());
