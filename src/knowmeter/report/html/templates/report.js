// knowmeter report: the per-sample table, its filters, sorts and search (detail.js draws a row's
// detail). Served by `knowmeter view` (the nav names its address), rows the page does not hold are
// searched and fetched there.
(function () {
  "use strict";
  var PAGE = 200;
  var el = KM.el, num = KM.num, status = KM.status, visible = KM.visible;
  var data = JSON.parse(document.getElementById("km-data").textContent);
  var variants = data.variants, control = data.control, roles = data.roles;
  var treatment = control !== null && variants.length > 1 ? variants[1] : null;
  var body = document.getElementById("sample-body"), more = document.getElementById("more");
  var fVariant = document.getElementById("f-variant"), fStatus = document.getElementById("f-status");
  var fText = document.getElementById("f-text"), fCount = document.getElementById("f-count");
  var fNote = document.getElementById("f-note");
  var fMin = document.getElementById("f-min"), fMax = document.getElementById("f-max");
  // a comprehension run's answers: no assertion, so no pass/fail status, no status or score filter
  var comprehension = document.getElementById("km-data").getAttribute("data-kind") === "comprehension";
  // sortKey: a function of a row (null: report order); sortDir 1 ascending, -1 descending
  var sortKey = null, sortDir = 0, sortTh = null, shown = 0, current = [], pinned = null;
  // served by knowmeter view and holding only some rows: the viewer searches, filters and sorts
  // every row of the run (remote.matched rows match; current holds those fetched so far)
  var api = document.querySelector("nav").getAttribute("data-api");
  var remote = api !== null && data.shown < data.total ? { matched: 0, seq: 0, timer: null, answered: false } : null;
  var held = {};
  data.rows.forEach(function (r) { held[r.id + "\n" + r.r] = r; });
  var scope = document.getElementById("f-scope");
  if (remote && scope) scope.textContent = "Search, filters and sorts run in knowmeter view over all " + data.total +
    " rows of the run; a row this page does not hold is fetched when you open it.";

  function delta(row) {
    if (!treatment) return null;
    var c = row.v[control], t = row.v[treatment];
    if (!c || !t || c.c === null || t.c === null) return null;
    return t.c - c.c;
  }
  function label(name) { return name + " (" + roles[name] + ")"; }
  data.rows.forEach(function (r) { r.d = delta(r); });

  var head = document.getElementById("sample-head");
  // ids compare as numbers when both are numbers ("2" before "10"), else as text
  function byId(a, b) {
    var x = Number(a.id), y = Number(b.id);
    if (a.id.trim() !== "" && b.id.trim() !== "" && !isNaN(x) && !isNaN(y)) return x - y;
    return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
  }
  function gapCount(row) {
    var n = 0;
    variants.forEach(function (v) { if (row.v[v]) n += row.v[v].gaps.length; });
    return n;
  }
  // a header that sorts by key (a number per row, or null: unknown, always last) or by compare;
  // server: what the viewer calls that sort
  function sortable(th, title, server, by, compare) {
    var b = el("button", "cellbutton", th.textContent + " ⇅");
    b.type = "button";
    b.title = "sort by " + title;
    th.textContent = "";
    th.appendChild(b);
    th.className = "sortable";
    th.setAttribute("aria-sort", "none");
    th.addEventListener("click", function () {
      sortDir = sortTh === th ? -sortDir : (by === null ? 1 : -1);
      if (sortTh && sortTh !== th) sortTh.setAttribute("aria-sort", "none");
      sortTh = th;
      th.setAttribute("data-sort", server);
      sortKey = compare || function (a, b) {
        var x = by(a), y = by(b);
        if (x === null) return y === null ? 0 : 1 / sortDir;
        if (y === null) return -1 / sortDir;
        return x - y;
      };
      th.setAttribute("aria-sort", sortDir === 1 ? "ascending" : "descending");
      apply();
    });
    return th;
  }
  sortable(head.children[0], "sample id (numbers as numbers)", "id", null, byId).setAttribute("data-testid", "sort-sample");
  sortable(head.children[1], "repeat", "repeat", function (r) { return r.r; });
  variants.forEach(function (name) {
    var th = sortable(el("th", null, label(name)), name + "'s composite", "v:" + name, function (r) { return r.v[name] ? r.v[name].c : null; });
    th.setAttribute("data-testid", "sort-variant");
    head.appendChild(th);
    var o = el("option", null, name); o.value = name; fVariant.appendChild(o);
  });
  // no Δ column when nothing is compared (no control, or no treatment)
  var dHead = treatment === null || comprehension ? null : sortable(el("th", null, "Δ composite"), "score difference", "delta", function (r) { return r.d; });
  if (dHead) {
    dHead.setAttribute("data-testid", "sort-delta");
    head.appendChild(dHead);
  }
  head.appendChild(sortable(el("th", null, "gap signals"), "number of gap signals", "gaps", gapCount)).setAttribute("data-testid", "sort-gaps");
  var columns = head.children.length;

  // the text a search looks in: id, prompt, outputs, assertion messages (built at the first search)
  function haystack(row) {
    if (row.h === undefined) {
      var parts = [row.id, row.prompt[0]];
      variants.forEach(function (n) {
        var t = row.v[n];
        if (!t) return;
        parts.push(t.out[0]);
        if (t.err) parts.push(t.err);
        t.as.forEach(function (a) { parts.push(a[0] + " " + a[2]); });
      });
      row.h = parts.join("\n").toLowerCase();
    }
    return row.h;
  }
  function disagree(row) {
    var seen = {}, errs = {};
    variants.forEach(function (n) { var t = row.v[n]; if (t) { seen[String(t.ok)] = 1; errs[String(!!t.err)] = 1; } });
    return Object.keys(seen).length > 1 || Object.keys(errs).length > 1;
  }
  function bound(input) { var v = input.value.trim(); return v === "" || isNaN(Number(v)) ? null : Number(v); }

  function matches(row) {
    var query = fText.value.trim().toLowerCase();
    if (query && haystack(row).indexOf(query) < 0) return false;
    var want = fStatus ? fStatus.value : "", names = fVariant.value ? [fVariant.value] : variants;
    if (fVariant.value && !row.v[fVariant.value]) return false;
    if (want === "disagree" && !disagree(row)) return false;
    var lo = fMin ? bound(fMin) : null, hi = fMax ? bound(fMax) : null;
    if (lo !== null || hi !== null) {
      var inRange = names.some(function (n) {
        var t = row.v[n];
        return t && t.c !== null && (lo === null || t.c >= lo) && (hi === null || t.c <= hi);
      });
      if (!inRange) return false;
    }
    if (!want || want === "disagree") return true;
    return names.some(function (n) {
      var t = row.v[n];
      if (!t) return false;
      if (want === "gap") return t.gaps.length > 0;
      if (want === "assert") return t.as.some(function (a) { return a[1] === false; });
      return status(t) === want;
    });
  }

  function apply(first) {
    if (remote && !pinned && !first) {
      clearTimeout(remote.timer);
      remote.timer = setTimeout(function () { ask(0); }, 120);
      return;
    }
    current = pinned ? (pinned.missing ? [] : [pinned]) : data.rows.filter(matches);
    if (sortKey) current.sort(function (a, b) { return sortDir * sortKey(a, b); });
    fCount.textContent = current.length + " of " + data.rows.length +
      (data.shown < data.total ? " shown rows (" + data.total + " in the run)" : " rows");
    fill();
  }
  // the viewer's answer to the filters, from row offset on: the rows it holds stand for
  // themselves, the others are light (no detail until opened)
  function query(offset) {
    var q = new URLSearchParams();
    if (fText.value.trim()) q.set("q", fText.value.trim());
    if (fVariant.value) q.set("variant", fVariant.value);
    if (fStatus && fStatus.value) q.set("status", fStatus.value);
    if (fMin && bound(fMin) !== null) q.set("min", String(bound(fMin)));
    if (fMax && bound(fMax) !== null) q.set("max", String(bound(fMax)));
    if (sortTh) { q.set("sort", sortTh.getAttribute("data-sort")); q.set("dir", sortDir === 1 ? "asc" : "desc"); }
    if (offset) q.set("offset", String(offset));
    return api + "/rows?" + q.toString();
  }
  function failed(what, err) { note("knowmeter view did not answer (" + what + "): " + err + "; reload the page to try again"); }
  // first: the page shows the rows it holds at once, and the viewer's rows replace them when they
  // come (unless a row was opened meanwhile)
  function ask(offset, first) {
    var seq = ++remote.seq;
    if (!first && !remote.answered) fCount.textContent = "searching all " + data.total + " rows of the run (the first search reads the whole run once)…";
    else if (!first) fCount.textContent = "searching all " + data.total + " rows of the run…";
    fetch(query(offset)).then(function (r) {
      return r.json().then(function (j) { if (!r.ok) throw new Error(j.error || r.status); return j; });
    }).then(function (found) {
      if (seq !== remote.seq) return;  // a later question is on its way
      if (first && body.querySelector("tr.detail")) return;
      remote.answered = true;
      var rows = found.rows.map(function (r) {
        var mine = held[r.id + "\n" + r.r];
        if (mine) return mine;
        r.light = true; r.d = delta(r);
        return r;
      });
      remote.matched = found.matched;
      fCount.textContent = found.matched + " of " + found.total + " rows (all rows of the run searched)";
      if (offset) { current = current.concat(rows); renderMore(); }
      else { current = rows; fill(); }
    }).catch(function (e) { failed("search", e.message); });
  }

  function fill() {
    body.textContent = "";
    shown = 0;
    if (!current.length) {
      var none = el("tr"), td = el("td", "sub", data.total ? "no row matches these filters" : "no sample row");
      td.colSpan = columns;
      none.setAttribute("data-testid", "no-match");
      none.appendChild(td);
      body.appendChild(none);
    }
    renderMore();
  }

  function renderMore() {
    var end = Math.min(shown + PAGE, current.length);
    for (var i = shown; i < end; i++) body.appendChild(rowEl(current[i]));
    shown = end;
    var left = (remote && remote.answered && !pinned ? remote.matched : current.length) - shown;
    more.hidden = left <= 0;
    more.textContent = "show " + Math.min(PAGE, left) + " more of " + left;
  }
  function moreRows() {
    if (remote && remote.answered && !pinned && shown >= current.length) ask(current.length);
    else renderMore();
  }

  function rowEl(row) {
    var tr = el("tr", "row"), idCell = el("td"), opener = el("button", "cellbutton", row.id);
    tr.setAttribute("data-sample", row.id);
    opener.type = "button";
    opener.setAttribute("aria-expanded", "false");
    opener.title = "show the outputs, assertions, judges and trace";
    idCell.appendChild(opener);
    tr.appendChild(idCell);
    tr.appendChild(el("td", null, row.r));
    var gaps = 0, unrun = 0;  // unrun: variants whose task failed (or is absent): gap signals not looked for
    variants.forEach(function (n) {
      var t = row.v[n], st = status(t), td = el("td");
      if (comprehension) {
        td.appendChild(el("span", st === "error" ? "bad" : st === "absent" ? "unk" : "", st === "error" || st === "absent" ? st : "answered"));
      } else {
        td.appendChild(el("span", st === "pass" ? "ok" : st === "fail" || st === "error" ? "bad" : "unk", st));
        if (t) td.appendChild(el("span", "sub", " " + num(t.c)));
      }
      if (t) gaps += t.gaps.length;
      if (!t || t.err) unrun += 1;
      tr.appendChild(td);
    });
    if (dHead) tr.appendChild(el("td", null, row.d === null ? "unknown" : (row.d >= 0 ? "+" : "") + row.d.toFixed(2)));
    var gapCell = tr.appendChild(el("td", gaps ? "gapmark" : unrun ? "unk" : "sub", gaps ? String(gaps) + (unrun ? "+?" : "") : unrun ? "unknown" : "none"));
    if (unrun) gapCell.title = unrun + " variant(s) did not run here: their gap signals are unknown";
    tr.addEventListener("click", function () { toggle(tr, row); });
    return tr;
  }

  function toggle(tr, row) {
    var next = tr.nextSibling, opener = tr.querySelector("button");
    if (next && next.classList && next.classList.contains("detail")) {
      next.parentNode.removeChild(next); tr.classList.remove("open"); opener.setAttribute("aria-expanded", "false"); return;
    }
    tr.classList.add("open");
    opener.setAttribute("aria-expanded", "true");
    var d = el("tr", "detail"), td = el("td");
    td.colSpan = columns;
    d.appendChild(td);
    tr.parentNode.insertBefore(d, tr.nextSibling);
    // a row the page holds without its traces: the viewer has them
    var cut = api !== null && variants.some(function (n) { return row.v[n] && row.v[n].tl === null; });
    if (!row.light && !cut) { td.appendChild(detail(row)); return; }
    td.appendChild(el("div", "sub", "fetching this row from knowmeter view…"));
    fetchRow(row.id, row.r, function (full) {
      row.light = false; row.prompt = full.prompt; row.v = full.v; row.d = delta(row);
      td.textContent = "";
      td.appendChild(detail(row));
    });
  }
  // a row's whole detail from the viewer
  function fetchRow(id, repeat, then) {
    var q = new URLSearchParams({ sample: id, repeat: String(repeat) });
    fetch(api + "/row?" + q.toString()).then(function (r) {
      return r.json().then(function (j) { if (!r.ok) throw new Error(j.error || r.status); return j; });
    }).then(then).catch(function (e) { failed("sample " + id, e.message); });
  }

  var ctx = {
    sides: variants, base: control, other: treatment, title: label,
    names: { control: "the control", treatment: "the treatment" }
  };
  function detail(row) { return KM.detail(row, ctx); }

  function note(message) { fNote.textContent = message === null ? "" : visible(message); fNote.hidden = message === null; }
  function unpin() { pinned = null; note(null); apply(); }
  // a link names a sample and a repeat: exactly that row is shown and opened (repeat null: the
  // sample's first row); a row the page does not hold is said so
  function openSample(id, repeat) {
    fText.value = id; fVariant.value = "";
    if (fStatus) fStatus.value = "";
    pinned = data.rows.filter(function (r) { return r.id === id && (repeat === null || r.r === repeat); })[0] || { missing: true };
    var which = "sample " + id + (repeat === null ? "" : " (repeat " + repeat + ")");
    if (pinned.missing && remote) {  // the viewer has it
      fetchRow(id, repeat === null ? 0 : repeat, function (full) {
        full.d = delta(full);
        pinned = full;
        note("showing only " + which + " (fetched from knowmeter view); change a filter to see the other rows");
        apply();
        var tr = body.querySelector("tr.row");
        if (tr) { toggle(tr, pinned); tr.scrollIntoView(); }
      });
      return;
    }
    note(pinned.missing ? which + " is not among the " + data.shown + " rows this page holds; report.json holds every task"
      : "showing only " + which + "; change a filter to see the other rows");
    apply();
    var tr = body.querySelector("tr.row");
    if (tr) { toggle(tr, pinned); tr.scrollIntoView(); }
  }
  function fromHash() {
    var m = /^#sample=([^&]*)(?:&repeat=([0-9]+))?$/.exec(location.hash), id;
    if (!m) return;
    try { id = decodeURIComponent(m[1]); } catch (e) { note("the link's sample id is not valid URL encoding: " + m[1]); return; }
    openSample(id, m[2] === undefined ? null : Number(m[2]));
  }

  [fVariant, fStatus].forEach(function (f) { if (f) f.addEventListener("change", unpin); });
  [fText, fMin, fMax].forEach(function (f) { if (f) f.addEventListener("input", unpin); });
  more.addEventListener("click", moreRows);
  window.addEventListener("hashchange", fromHash);
  // the same link again (no hashchange): open its row again
  document.querySelectorAll("a.samplelink").forEach(function (a) {
    a.addEventListener("click", function () { if (a.hash === location.hash) fromHash(); });
  });
  if (comprehension) head.children[0].click();  // cases by id, numbers in numeric order
  else apply(true);
  if (remote && !location.hash) ask(0, true);
  fromHash();
  document.body.setAttribute("data-ready", "1");
})();
