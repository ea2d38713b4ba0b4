"use strict";
// knowmeter report: per-sample table, filters, side-by-side detail. Every piece of data enters
// the page through textContent or setAttribute on attributes that never execute; never innerHTML.
(function () {
  var PAGE = 200;
  // the changed middle of two outputs is diffed when it has at most this many token pairs
  var DIFF_CELLS = 4000000;
  // bidi controls (they reorder the text around them) and control characters other than tab,
  // newline and carriage return (dropped or shown as nothing): shown as their code instead, so a
  // page never shows words the data does not hold (the same set as _text.py's HIDDEN)
  var HIDDEN = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g;
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

  function visible(s) {
    return String(s).replace(HIDDEN, function (c) {
      return "\u27e8U+" + ("000" + c.charCodeAt(0).toString(16).toUpperCase()).slice(-4) + "\u27e9";
    });
  }
  function text(s) { return document.createTextNode(visible(s)); }
  function el(tag, cls, content) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (content !== undefined && content !== null) e.textContent = visible(content);
    return e;
  }
  function num(v, d) { return v === null || v === undefined ? "unknown" : Number(v).toFixed(d === undefined ? 2 : d); }
  function delta(row) {
    if (!treatment) return null;
    var c = row.v[control], t = row.v[treatment];
    if (!c || !t || c.c === null || t.c === null) return null;
    return t.c - c.c;
  }
  function status(t) {
    if (!t) return "absent";
    if (t.err) return "error";
    return t.ok === true ? "pass" : t.ok === false ? "fail" : "unknown";
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
  // a header that sorts by key (a number per row, or null: unknown, always last) or by compare
  function sortable(th, title, by, compare) {
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
  sortable(head.children[0], "sample id (numbers as numbers)", null, byId).setAttribute("data-testid", "sort-sample");
  sortable(head.children[1], "repeat", function (r) { return r.r; });
  variants.forEach(function (name) {
    var th = sortable(el("th", null, label(name)), name + "'s composite", function (r) { return r.v[name] ? r.v[name].c : null; });
    th.setAttribute("data-testid", "sort-variant");
    head.appendChild(th);
    var o = el("option", null, name); o.value = name; fVariant.appendChild(o);
  });
  // no Δ column when nothing is compared (no control, or no treatment)
  var dHead = treatment === null || comprehension ? null : sortable(el("th", null, "Δ composite"), "score difference", function (r) { return r.d; });
  if (dHead) {
    dHead.setAttribute("data-testid", "sort-delta");
    head.appendChild(dHead);
  }
  head.appendChild(sortable(el("th", null, "gap signals"), "number of gap signals", gapCount)).setAttribute("data-testid", "sort-gaps");
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
    if (pinned) return row === pinned;
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

  function apply() {
    current = data.rows.filter(matches);
    if (sortKey) current.sort(function (a, b) { return sortDir * sortKey(a, b); });
    body.textContent = "";
    shown = 0;
    fCount.textContent = current.length + " of " + data.rows.length +
      (data.shown < data.total ? " shown rows (" + data.total + " in the run)" : " rows");
    if (!current.length) {
      var none = el("tr"), td = el("td", "sub", data.rows.length ? "no row matches these filters" : "no sample row");
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
    more.hidden = shown >= current.length;
    more.textContent = "show " + Math.min(PAGE, current.length - shown) + " more of " + (current.length - shown);
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
    var gaps = 0;
    variants.forEach(function (n) {
      var t = row.v[n], st = status(t), td = el("td");
      if (comprehension) {
        td.appendChild(el("span", st === "error" ? "bad" : st === "absent" ? "unk" : "", st === "error" || st === "absent" ? st : "answered"));
      } else {
        td.appendChild(el("span", st === "pass" ? "ok" : st === "fail" || st === "error" ? "bad" : "unk", st));
        if (t) td.appendChild(el("span", "sub", " " + num(t.c)));
      }
      if (t) gaps += t.gaps.length;
      tr.appendChild(td);
    });
    if (dHead) tr.appendChild(el("td", null, row.d === null ? "unknown" : (row.d >= 0 ? "+" : "") + row.d.toFixed(2)));
    tr.appendChild(el("td", gaps ? "gapmark" : "sub", gaps ? String(gaps) : "none"));
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
    td.appendChild(detail(row));
    d.appendChild(td);
    tr.parentNode.insertBefore(d, tr.nextSibling);
  }

  function cutNote(parent, left) {
    if (left > 0) parent.appendChild(el("div", "cut", "… " + left + " more characters not shown (full text in report.json)"));
  }

  // a diff of two token lists: the common start and end kept, the longest common subsequence of
  // the middle between them; null when the middle has more than DIFF_CELLS token pairs
  function diff(x, y) {
    var s = 0, ex = x.length, ey = y.length, i, j;
    while (s < ex && s < ey && x[s] === y[s]) s++;
    while (ex > s && ey > s && x[ex - 1] === y[ey - 1]) { ex--; ey--; }
    var n = ex - s, m = ey - s;
    if (n * m > DIFF_CELLS) return null;
    var w = m + 1, L = new Uint32Array((n + 1) * w), ops = [], p = 0, q = 0;
    for (i = n - 1; i >= 0; i--)
      for (j = m - 1; j >= 0; j--)
        L[i * w + j] = x[s + i] === y[s + j] ? L[(i + 1) * w + j + 1] + 1 : Math.max(L[(i + 1) * w + j], L[i * w + j + 1]);
    for (i = 0; i < s; i++) ops.push([0, x[i]]);
    while (p < n && q < m) {
      if (x[s + p] === y[s + q]) { ops.push([0, x[s + p]]); p++; q++; }
      else if (L[(p + 1) * w + q] >= L[p * w + q + 1]) { ops.push([-1, x[s + p]]); p++; }
      else { ops.push([1, y[s + q]]); q++; }
    }
    for (; p < n; p++) ops.push([-1, x[s + p]]);
    for (; q < m; q++) ops.push([1, y[s + q]]);
    for (i = ex; i < x.length; i++) ops.push([0, x[i]]);
    return ops;
  }
  // words (and whitespace runs) when their changed middle is small enough, else whole lines,
  // else null: too long to diff
  var UNITS = [["words", /\s+|[^\s]+/g], ["lines", /[^\n]*\n|[^\n]+$/g]];
  function outputDiff(a, b) {
    for (var k = 0; k < UNITS.length; k++) {
      var ops = diff(a.match(UNITS[k][1]) || [], b.match(UNITS[k][1]) || []);
      if (ops) return { ops: ops, unit: UNITS[k][0] };
    }
    return null;
  }
  // an output with its caption: the control's marks what the treatment dropped, a treatment's
  // what it added (against null: nothing to compare with)
  function outputEl(parent, out, against, isControl) {
    var box = el("div", "out"), d = against === null ? null : isControl ? outputDiff(out, against) : outputDiff(against, out);
    box.setAttribute("data-testid", "output");
    var other = isControl ? "the treatment" : "the control";
    parent.appendChild(el("div", "sub", against === null ? "output" : !d ? "output (too long to mark its differences from " + other + ")" :
      isControl ? "output (" + d.unit + " missing from the treatment struck)" : "output (" + d.unit + " not in the control marked)"));
    if (!d) box.textContent = visible(out);
    else d.ops.forEach(function (op) {
      if (op[0] === 0) box.appendChild(text(op[1]));
      else if (op[0] === 1 && !isControl) box.appendChild(el("ins", null, op[1]));
      else if (op[0] === -1 && isControl) box.appendChild(el("del", null, op[1]));
    });
    parent.appendChild(box);
  }

  function detail(row) {
    var wrap = el("div");
    if (row.prompt[0]) {
      wrap.appendChild(el("div", "sub", "prompt"));
      var p = el("div", "out", row.prompt[0]); wrap.appendChild(p); cutNote(wrap, row.prompt[1]);
    }
    var sides = el("div", "sides");
    sides.setAttribute("data-testid", "side-by-side");
    var base = treatment && row.v[control] ? row.v[control].out[0] : null;
    var other = treatment && row.v[treatment] ? row.v[treatment].out[0] : null;
    variants.forEach(function (n) {
      var t = row.v[n];
      if (!t) return;
      var side = el("div", "side");
      side.appendChild(el("h4", null, label(n) + " · " + status(t) + " · composite " + num(t.c)));
      side.appendChild(el("div", "sub", "latency " + (t.ms === null ? "unknown" : num(t.ms, 0) + " ms") + " · cost " + (t.cost === null ? "unknown" : "$" + num(t.cost, 4)) + (t.cached ? " · cached" : "")));
      if (t.err) side.appendChild(el("div", "bad", "execution error: " + t.err));
      outputEl(side, t.out[0], n === control ? other : base, n === control);
      cutNote(side, t.out[1]);
      side.appendChild(el("div", "sub", "assertions"));
      var ul = el("ul", "asserts");
      t.as.forEach(function (a) {
        var li = el("li");
        li.appendChild(el("span", a[1] === true ? "ok" : a[1] === false ? "bad" : "unk", a[1] === true ? "✓ " : a[1] === false ? "✗ " : "? "));
        li.appendChild(el("b", null, (a[4] ? "not " : "") + a[0]));
        li.appendChild(text(" [" + a[3] + "] " + a[2]));
        ul.appendChild(li);
      });
      if (!t.as.length) ul.appendChild(el("li", "sub", "no assertion"));
      side.appendChild(ul);
      if (t.j.length || t.je) {
        side.appendChild(el("div", "sub", "judges"));
        if (t.je) side.appendChild(el("div", "bad", t.je));
        t.j.forEach(function (j) {
          var jd = el("div");
          jd.appendChild(el("b", null, j.judge));
          jd.appendChild(text(" mean " + num(j.mean) + (j.sd === null ? "" : " (sd " + num(j.sd) + ")") + " · scores " + (j.scores.length ? j.scores.join(", ") : "none")));
          if (j.err) jd.appendChild(el("div", "bad", j.err));
          j.dims.forEach(function (dm) { jd.appendChild(el("div", "sub", dm[0] + ": " + num(dm[1]) + (dm[2] ? " — " + dm[2] : ""))); });
          if (j.why) jd.appendChild(el("div", "out", j.why));
          side.appendChild(jd);
        });
      }
      if (t.gaps.length) {
        side.appendChild(el("div", "sub", "gap signals"));
        var gl = el("ul", "asserts");
        t.gaps.forEach(function (g) { gl.appendChild(el("li", "gapmark", g)); });
        side.appendChild(gl);
      }
      if (t.tl === null) {
        side.appendChild(el("div", "sub", "trace not on this page (left out to keep the page small; report.json holds it)"));
      } else {
        side.appendChild(el("div", "sub", "trace (" + t.tl.length + " steps)"));
        side.appendChild(timeline(t.tl));
      }
      sides.appendChild(side);
    });
    wrap.appendChild(sides);
    return wrap;
  }

  function timeline(steps) {
    var ol = el("ol", "timeline");
    ol.setAttribute("data-testid", "timeline");
    if (!steps.length) ol.appendChild(el("li", "msg sub", "no trace recorded"));
    steps.forEach(function (s) {
      var li;
      if (s.k === "msg") {
        li = el("li", "msg");
        li.appendChild(el("b", null, s.role + " message"));
        li.appendChild(el("div", "tl-in", s.text[0]));
        cutNote(li, s.text[1]);
      } else {
        li = el("li", (s.fail ? "fail" : "ok-step") + (s.fs ? " failed-search" : ""));
        li.appendChild(el("b", null, s.tool));
        li.appendChild(el("span", s.fail ? "bad" : "sub", " · " + s.st + (s.fs && s.st.indexOf("failed") !== 0 ? " · failed search" : "")));
        li.appendChild(el("div", "tl-in", s.in[0])); cutNote(li, s.in[1]);
        if (s.out[0]) { li.appendChild(el("div", "tl-out", s.out[0])); cutNote(li, s.out[1]); }
      }
      ol.appendChild(li);
    });
    return ol;
  }

  function note(message) { fNote.textContent = message === null ? "" : visible(message); fNote.hidden = message === null; }
  function unpin() { pinned = null; note(null); apply(); }
  // a link names a sample and a repeat: exactly that row is shown and opened (repeat null: the
  // sample's first row); a row the page does not hold is said so
  function openSample(id, repeat) {
    fText.value = id; fVariant.value = "";
    if (fStatus) fStatus.value = "";
    pinned = data.rows.filter(function (r) { return r.id === id && (repeat === null || r.r === repeat); })[0] || { missing: true };
    var which = "sample " + id + (repeat === null ? "" : " (repeat " + repeat + ")");
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
  more.addEventListener("click", renderMore);
  window.addEventListener("hashchange", fromHash);
  // the same link again (no hashchange): open its row again
  document.querySelectorAll("a.samplelink").forEach(function (a) {
    a.addEventListener("click", function () { if (a.hash === location.hash) fromHash(); });
  });
  if (comprehension) head.children[0].click();  // cases by id, numbers in numeric order
  else apply();
  fromHash();
  document.body.setAttribute("data-ready", "1");
})();
