"use strict";
// knowmeter report: per-sample table, filters, side-by-side detail. Every piece of data enters
// the page through textContent or setAttribute on attributes that never execute; never innerHTML.
(function () {
  var PAGE = 200;
  var data = JSON.parse(document.getElementById("km-data").textContent);
  var variants = data.variants, control = data.control, treatment = variants.length > 1 ? variants[1] : null;
  var body = document.getElementById("sample-body"), more = document.getElementById("more");
  var fVariant = document.getElementById("f-variant"), fStatus = document.getElementById("f-status");
  var fText = document.getElementById("f-text"), fCount = document.getElementById("f-count");
  var sortDir = 0, shown = 0, current = [];

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
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
  data.rows.forEach(function (r) { r.d = delta(r); });

  var head = document.getElementById("sample-head");
  variants.forEach(function (name) {
    head.appendChild(el("th", null, name + (name === control ? " (control)" : "")));
    var o = el("option", null, name); o.value = name; fVariant.appendChild(o);
  });
  var dHead = el("th", "sortable", "Δ composite ⇅");
  dHead.title = "sort by score difference";
  dHead.setAttribute("data-testid", "sort-delta");
  head.appendChild(dHead);
  head.appendChild(el("th", null, "gap signals"));

  function matches(row) {
    var text = fText.value.trim().toLowerCase();
    if (text && row.id.toLowerCase().indexOf(text) < 0) return false;
    var want = fStatus.value, names = fVariant.value ? [fVariant.value] : variants;
    if (fVariant.value && !row.v[fVariant.value]) return false;
    if (!want) return true;
    return names.some(function (n) {
      var t = row.v[n];
      if (!t) return false;
      if (want === "gap") return t.gaps.length > 0;
      return status(t) === want;
    });
  }

  function apply() {
    current = data.rows.filter(matches);
    if (sortDir !== 0) {
      current.sort(function (a, b) {
        if (a.d === null) return b.d === null ? 0 : 1;
        if (b.d === null) return -1;
        return sortDir * (a.d - b.d);
      });
    }
    body.textContent = "";
    shown = 0;
    fCount.textContent = current.length + " of " + data.rows.length + " rows";
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
    var tr = el("tr", "row");
    tr.setAttribute("data-sample", row.id);
    tr.appendChild(el("td", null, row.id));
    tr.appendChild(el("td", null, row.r));
    var gaps = 0;
    variants.forEach(function (n) {
      var t = row.v[n], st = status(t), td = el("td");
      td.appendChild(el("span", st === "pass" ? "ok" : st === "fail" || st === "error" ? "bad" : "unk", st));
      if (t) td.appendChild(el("span", "sub", " " + num(t.c)));
      if (t) gaps += t.gaps.length;
      tr.appendChild(td);
    });
    tr.appendChild(el("td", null, row.d === null ? "unknown" : (row.d >= 0 ? "+" : "") + row.d.toFixed(2)));
    tr.appendChild(el("td", gaps ? "gapmark" : "sub", gaps ? String(gaps) : "none"));
    tr.addEventListener("click", function () { toggle(tr, row); });
    return tr;
  }

  function toggle(tr, row) {
    var next = tr.nextSibling;
    if (next && next.classList && next.classList.contains("detail")) {
      next.parentNode.removeChild(next); tr.classList.remove("open"); return;
    }
    tr.classList.add("open");
    var d = el("tr", "detail"), td = el("td");
    td.colSpan = variants.length + 4;
    td.appendChild(detail(row));
    d.appendChild(td);
    tr.parentNode.insertBefore(d, tr.nextSibling);
  }

  function cutNote(parent, left) {
    if (left > 0) parent.appendChild(el("div", "cut", "… " + left + " more characters not shown (full text in report.json)"));
  }

  // word diff: longest common subsequence over words and whitespace runs
  function tokens(s) { return s.match(/\s+|[^\s]+/g) || []; }
  function wordDiff(a, b) {
    var x = tokens(a), y = tokens(b), n = x.length, m = y.length;
    if (n * m > 4000000) return null;
    var w = m + 1, L = new Uint32Array((n + 1) * w);
    for (var i = n - 1; i >= 0; i--)
      for (var j = m - 1; j >= 0; j--)
        L[i * w + j] = x[i] === y[j] ? L[(i + 1) * w + j + 1] + 1 : Math.max(L[(i + 1) * w + j], L[i * w + j + 1]);
    var ops = [], p = 0, q = 0;
    while (p < n && q < m) {
      if (x[p] === y[q]) { ops.push([0, x[p]]); p++; q++; }
      else if (L[(p + 1) * w + q] >= L[p * w + q + 1]) { ops.push([-1, x[p]]); p++; }
      else { ops.push([1, y[q]]); q++; }
    }
    for (; p < n; p++) ops.push([-1, x[p]]);
    for (; q < m; q++) ops.push([1, y[q]]);
    return ops;
  }
  // the control's output marks words the treatment dropped; a treatment's marks words it added
  function outputEl(text, against, isControl) {
    var box = el("div", "out");
    box.setAttribute("data-testid", "output");
    var ops = against === null ? null : isControl ? wordDiff(text, against) : wordDiff(against, text);
    if (!ops) { box.textContent = text; return box; }
    ops.forEach(function (op) {
      if (op[0] === 0) box.appendChild(document.createTextNode(op[1]));
      else if (op[0] === 1 && !isControl) box.appendChild(el("ins", null, op[1]));
      else if (op[0] === -1 && isControl) box.appendChild(el("del", null, op[1]));
    });
    return box;
  }

  function detail(row) {
    var wrap = el("div");
    if (row.prompt[0]) {
      wrap.appendChild(el("div", "sub", "prompt"));
      var p = el("div", "out", row.prompt[0]); wrap.appendChild(p); cutNote(wrap, row.prompt[1]);
    }
    var sides = el("div", "sides");
    sides.setAttribute("data-testid", "side-by-side");
    var base = row.v[control] ? row.v[control].out[0] : null;
    var other = treatment && row.v[treatment] ? row.v[treatment].out[0] : null;
    variants.forEach(function (n) {
      var t = row.v[n];
      if (!t) return;
      var side = el("div", "side");
      side.appendChild(el("h4", null, n + (n === control ? " (control)" : "") + " · " + status(t) + " · composite " + num(t.c)));
      side.appendChild(el("div", "sub", "latency " + num(t.ms, 0) + " ms · cost " + (t.cost === null ? "unknown" : "$" + num(t.cost, 4)) + (t.cached ? " · cached" : "")));
      if (t.err) side.appendChild(el("div", "bad", "execution error: " + t.err));
      side.appendChild(el("div", "sub", n === control ? "output (words missing from the treatment struck)" : "output (words not in the control marked)"));
      side.appendChild(outputEl(t.out[0], n === control ? other : base, n === control));
      cutNote(side, t.out[1]);
      side.appendChild(el("div", "sub", "assertions"));
      var ul = el("ul", "asserts");
      t.as.forEach(function (a) {
        var li = el("li");
        li.appendChild(el("span", a[1] === true ? "ok" : a[1] === false ? "bad" : "unk", a[1] === true ? "✓ " : a[1] === false ? "✗ " : "? "));
        li.appendChild(el("b", null, (a[4] ? "not " : "") + a[0]));
        li.appendChild(document.createTextNode(" [" + a[3] + "] " + a[2]));
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
          jd.appendChild(document.createTextNode(" mean " + num(j.mean) + (j.sd === null ? "" : " (sd " + num(j.sd) + ")") + " · scores " + (j.scores.length ? j.scores.join(", ") : "none")));
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
      side.appendChild(el("div", "sub", "trace (" + t.tl.length + " steps)"));
      side.appendChild(timeline(t.tl));
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
        li.appendChild(el("span", s.fail ? "bad" : "sub", " · " + s.st + (s.fs ? " · failed search" : "")));
        li.appendChild(el("div", "tl-in", s.in[0])); cutNote(li, s.in[1]);
        if (s.out[0]) { li.appendChild(el("div", "tl-out", s.out[0])); cutNote(li, s.out[1]); }
      }
      ol.appendChild(li);
    });
    return ol;
  }

  function openSample(id) {
    fText.value = id; fStatus.value = ""; fVariant.value = "";
    apply();
    var tr = body.querySelector("tr.row");
    if (tr) { toggle(tr, current[0]); tr.scrollIntoView(); }
  }
  function fromHash() {
    var m = /^#sample=(.*)$/.exec(location.hash);
    if (m) openSample(decodeURIComponent(m[1]));
  }

  dHead.addEventListener("click", function () { sortDir = sortDir === -1 ? 1 : -1; apply(); });
  [fVariant, fStatus].forEach(function (f) { f.addEventListener("change", apply); });
  fText.addEventListener("input", apply);
  more.addEventListener("click", renderMore);
  window.addEventListener("hashchange", fromHash);
  apply();
  fromHash();
  document.body.setAttribute("data-ready", "1");
})();
