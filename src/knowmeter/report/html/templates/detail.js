"use strict";
// knowmeter's per-sample detail (outputs side by side with a word diff, assertions, judges, gap
// signals, trace timeline), shared by the report page and the viewer's compare page. Every piece
// of data enters the page through textContent or setAttribute on attributes that never execute;
// never innerHTML.
var KM = (function () {
  // the changed middle of two outputs is diffed when it has at most this many token pairs
  var DIFF_CELLS = 4000000;
  // bidi controls (they reorder the text around them) and control characters other than tab,
  // newline and carriage return (dropped or shown as nothing): shown as their code instead, so a
  // page never shows words the data does not hold (the same set as _text.py's HIDDEN)
  var HIDDEN = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g;

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
  function status(t) {
    if (!t) return "absent";
    if (t.err) return "error";
    return t.ok === true ? "pass" : t.ok === false ? "fail" : "unknown";
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
  // an output with its caption: the base's marks what the other side dropped, the other side's
  // what it added (against null: nothing to compare with); names: what the caption calls them
  function outputEl(parent, out, against, isBase, names) {
    var box = el("div", "out"), d = against === null ? null : isBase ? outputDiff(out, against) : outputDiff(against, out);
    box.setAttribute("data-testid", "output");
    var other = isBase ? names.treatment : names.control;
    parent.appendChild(el("div", "sub", against === null ? "output" : !d ? "output (too long to mark its differences from " + other + ")" :
      isBase ? "output (" + d.unit + " missing from " + names.treatment + " struck)" : "output (" + d.unit + " not in " + names.control + " marked)"));
    if (!d) box.textContent = visible(out);
    else d.ops.forEach(function (op) {
      if (op[0] === 0) box.appendChild(text(op[1]));
      else if (op[0] === 1 && !isBase) box.appendChild(el("ins", null, op[1]));
      else if (op[0] === -1 && isBase) box.appendChild(el("del", null, op[1]));
    });
    parent.appendChild(box);
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

  function side(t, title, out, against, isBase, names) {
    var box = el("div", "side");
    box.appendChild(el("h4", null, title + " · " + status(t) + " · composite " + num(t.c)));
    box.appendChild(el("div", "sub", "latency " + (t.ms === null ? "unknown" : num(t.ms, 0) + " ms") + " · cost " + (t.cost === null ? "unknown" : "$" + num(t.cost, 4)) + (t.cached ? " · cached" : "")));
    if (t.err) box.appendChild(el("div", "bad", "execution error: " + t.err));
    outputEl(box, out, against, isBase, names);
    cutNote(box, t.out[1]);
    box.appendChild(el("div", "sub", "assertions"));
    var ul = el("ul", "asserts");
    t.as.forEach(function (a) {
      var li = el("li");
      li.appendChild(el("span", a[1] === true ? "ok" : a[1] === false ? "bad" : "unk", a[1] === true ? "✓ " : a[1] === false ? "✗ " : "? "));
      li.appendChild(el("b", null, (a[4] ? "not " : "") + a[0]));
      li.appendChild(text(" [" + a[3] + "] " + a[2]));
      ul.appendChild(li);
    });
    if (!t.as.length) ul.appendChild(el("li", "sub", "no assertion"));
    box.appendChild(ul);
    if (t.j.length || t.je) {
      box.appendChild(el("div", "sub", "judges"));
      if (t.je) box.appendChild(el("div", "bad", t.je));
      t.j.forEach(function (j) {
        var jd = el("div");
        jd.appendChild(el("b", null, j.judge));
        jd.appendChild(text(" mean " + num(j.mean) + (j.sd === null ? "" : " (sd " + num(j.sd) + ")") + " · scores " + (j.scores.length ? j.scores.join(", ") : "none")));
        if (j.err) jd.appendChild(el("div", "bad", j.err));
        j.dims.forEach(function (dm) { jd.appendChild(el("div", "sub", dm[0] + ": " + num(dm[1]) + (dm[2] ? " — " + dm[2] : ""))); });
        if (j.why) jd.appendChild(el("div", "out", j.why));
        box.appendChild(jd);
      });
    }
    if (t.gaps.length) {
      box.appendChild(el("div", "sub", "gap signals"));
      var gl = el("ul", "asserts");
      t.gaps.forEach(function (g) { gl.appendChild(el("li", "gapmark", g)); });
      box.appendChild(gl);
    }
    if (t.tl === null) {
      box.appendChild(el("div", "sub", "trace not on this page (left out to keep the page small; report.json holds it)"));
    } else {
      box.appendChild(el("div", "sub", "trace (" + t.tl.length + " steps)"));
      box.appendChild(timeline(t.tl));
    }
    return box;
  }

  // a row's detail: its prompt, then one side per name of ctx.sides (in order) that the row holds.
  // ctx: sides (keys of row.v), base (the side the others are diffed against, or null), other
  // (the side diffed against the base), title(name), names ({control, treatment}: how captions
  // call the base and the other side)
  function detail(row, ctx) {
    var wrap = el("div");
    if (row.prompt[0]) {
      wrap.appendChild(el("div", "sub", "prompt"));
      wrap.appendChild(el("div", "out", row.prompt[0])); cutNote(wrap, row.prompt[1]);
    }
    var sides = el("div", "sides");
    sides.setAttribute("data-testid", "side-by-side");
    var base = ctx.other && row.v[ctx.base] ? row.v[ctx.base].out[0] : null;
    var other = ctx.other && row.v[ctx.other] ? row.v[ctx.other].out[0] : null;
    ctx.sides.forEach(function (n) {
      var t = row.v[n];
      if (!t) return;
      sides.appendChild(side(t, ctx.title(n), t.out[0], n === ctx.base ? other : base, n === ctx.base, ctx.names));
    });
    wrap.appendChild(sides);
    return wrap;
  }

  return { visible: visible, text: text, el: el, num: num, status: status, detail: detail };
})();
