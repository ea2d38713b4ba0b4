// knowmeter view's compare page: a changed task's detail, fetched from both runs when its row is
// opened and drawn by detail.js as the report draws a row (run A is the base of the word diff).
(function () {
  "use strict";
  var list = document.getElementById("changed");
  var a = list.getAttribute("data-a"), b = list.getAttribute("data-b");
  var ctx = {
    sides: ["a", "b"], base: "a", other: "b",
    title: function (n) { return n === "a" ? "run A " + a : "run B " + b; },
    names: { control: "run A", treatment: "run B" }
  };
  // a run's row (null: the run has no such row)
  function get(run, id, repeat) {
    var q = new URLSearchParams({ sample: id, repeat: String(repeat) });
    return fetch("/run/" + encodeURIComponent(run) + "/row?" + q.toString()).then(function (r) {
      if (r.status === 404) return null;
      return r.json().then(function (j) { if (!r.ok) throw new Error(j.error || r.status); return j; });
    });
  }
  function show(d) {
    if (!d.open || d.getAttribute("data-fetched")) return;
    d.setAttribute("data-fetched", "1");
    var slot = d.querySelector(".pair-detail"), id = d.getAttribute("data-sample");
    var variant = d.getAttribute("data-variant"), repeat = Number(d.getAttribute("data-repeat"));
    slot.textContent = "fetching the task from both runs…";
    Promise.all([get(a, id, repeat), get(b, id, repeat)]).then(function (rows) {
      var row = { id: id, r: repeat, prompt: (rows[0] || rows[1] || { prompt: ["", 0] }).prompt, v: {} };
      if (rows[0] && rows[0].v[variant]) row.v.a = rows[0].v[variant];
      if (rows[1] && rows[1].v[variant]) row.v.b = rows[1].v[variant];
      slot.textContent = "";
      slot.appendChild(KM.detail(row, ctx));
    }).catch(function (e) {
      slot.textContent = KM.visible("knowmeter view did not answer (" + e.message + "); reload the page to try again");
    });
  }
  list.querySelectorAll("details.pair").forEach(function (d) {
    d.addEventListener("toggle", function () { show(d); });
  });
  document.body.setAttribute("data-ready", "1");
})();
