// kubewhy reference site: small progressive enhancements; every page works without them.
// - In a static export, the search page ranks the prebuilt index (search-index.json) here.
// - The feature-gate table filters as you type and recomputes stages at the chosen version.
// - Clicking an example on the SPARQL page copies it into the query box.
(function () {
  "use strict";
  var body = document.body;
  var root = body.getAttribute("data-root") || "";
  var isStatic = body.getAttribute("data-mode") === "static";
  var STOP = ("a an and are as at be but by for if in into is it no not of on or such that the their then there these " +
    "they this to was will with my why how what i we our do does can get got keeps has have").split(" ");
  var stop = {};
  STOP.forEach(function (w) { stop[w] = true; });

  function stem(w) {
    if (w.length > 5 && /ing$/.test(w)) return w.slice(0, -3);
    if (w.length > 4 && /ed$/.test(w)) return w.slice(0, -2);
    if (w.length > 4 && /es$/.test(w)) return w.slice(0, -2);
    if (w.length > 3 && /s$/.test(w) && !/ss$/.test(w)) return w.slice(0, -1);
    return w;
  }
  function tokens(text) {
    var spaced = String(text || "").replace(/([a-z0-9])([A-Z])/g, "$1 $2");
    var out = [];
    (String(text || "") + " " + spaced).toLowerCase().split(/[^a-z0-9]+/).forEach(function (w) {
      if (w && !stop[w]) out.push(stem(w));
    });
    return out;
  }
  function esc(s) {
    return String(s).replace(/[&<>"']/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c];
    });
  }
  function entityHref(id) {
    var i = id.indexOf("/");
    return root + "e/" + id.slice(0, i) + "/" + encodeURIComponent(id.slice(i + 1)) + "/";
  }
  function params() {
    var p = {};
    location.search.replace(/^\?/, "").split("&").forEach(function (kv) {
      if (!kv) return;
      var i = kv.indexOf("=");
      var k = decodeURIComponent((i < 0 ? kv : kv.slice(0, i)).replace(/\+/g, " "));
      var v = i < 0 ? "" : decodeURIComponent(kv.slice(i + 1).replace(/\+/g, " "));
      if (!(k in p)) p[k] = v;
    });
    return p;
  }

  // Ranks documents: field weights as on the server (title 3, aliases 2.5, text 1, summary 1),
  // inverse document frequency, saturated term frequency, a bonus for the whole phrase in a title
  // or alias; ties by id so the order is stable.
  function rank(docs, q) {
    var qt = tokens(q).filter(function (t, i, a) { return a.indexOf(t) === i; });
    if (!qt.length) return [];
    var fields = [["t", 3], ["a", 2.5], ["x", 1], ["s", 1]];
    var df = {};
    docs.forEach(function (d) {
      if (!d._tok) {
        d._tok = {};
        fields.forEach(function (f) { d._tok[f[0]] = tokens(f[0] === "a" ? (d.a || []).join(" ") : d[f[0]]); });
      }
      var seen = {};
      qt.forEach(function (t) {
        for (var i = 0; i < fields.length; i++) {
          if (d._tok[fields[i][0]].some(function (w) { return w === t || (t.length >= 4 && w.indexOf(t) === 0); })) { seen[t] = true; break; }
        }
      });
      Object.keys(seen).forEach(function (t) { df[t] = (df[t] || 0) + 1; });
    });
    var n = docs.length, phrase = q.trim().toLowerCase();
    var scored = [];
    docs.forEach(function (d) {
      var score = 0, matched = 0;
      qt.forEach(function (t) {
        if (!df[t]) return;
        var idf = Math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)), hit = false;
        fields.forEach(function (f) {
          var tf = d._tok[f[0]].filter(function (w) { return w === t || (t.length >= 4 && w.indexOf(t) === 0); }).length;
          if (tf) { hit = true; score += f[1] * idf * (tf / (tf + 1.2)); }
        });
        if (hit) matched++;
      });
      if (!matched) return;
      score *= matched / qt.length;
      var names = [d.t].concat(d.a || []).map(function (s) { return String(s).toLowerCase(); });
      if (phrase.length > 3 && names.some(function (s) { return s.indexOf(phrase) >= 0; })) score += 4;
      scored.push([score, d]);
    });
    scored.sort(function (a, b) { return b[0] - a[0] || (a[1].id < b[1].id ? -1 : 1); });
    return scored.map(function (s) { return s[1]; });
  }

  function mark(text, q) {
    var out = esc(text);
    q.toLowerCase().split(/[^a-z0-9_-]+/).filter(function (w) { return w.length >= 3; }).forEach(function (w) {
      out = out.replace(new RegExp("(" + w.replace(/[.*+?^${}()|[\]\\-]/g, "\\$&") + ")", "ig"), "<mark>$1</mark>");
    });
    return out;
  }

  function staticSearch() {
    var list = document.getElementById("results");
    var status = document.getElementById("results-status");
    var facets = document.getElementById("facets");
    if (!list || !status || !isStatic) return;
    var p = params(), q = p.q || "", kind = p.kind || "";
    var input = document.getElementById("q"), sel = document.getElementById("q-kind");
    if (input) input.value = q;
    if (sel) sel.value = kind;
    if (!q.trim()) return;
    document.title = "Search: " + q + " · kubewhy";
    var h1 = document.querySelector("main h1");
    if (h1) h1.textContent = "Search: " + q;
    status.textContent = "Searching…";
    fetch(root + "search-index.json").then(function (r) {
      if (!r.ok) throw new Error("HTTP " + r.status);
      return r.json();
    }).then(function (idx) {
      var hits = rank(idx.docs, q).slice(0, 400);
      var counts = {};
      hits.forEach(function (d) { counts[d.k] = (counts[d.k] || 0) + 1; });
      var shown = hits.filter(function (d) { return !kind || d.k === kind; });
      var total = shown.length;
      shown = shown.slice(0, 50);
      var base = root + "search/?q=" + encodeURIComponent(q);
      var f = '<ul><li><a href="' + esc(base) + '"' + (kind ? "" : ' aria-current="page"') + '>all <span class="count">' + hits.length + "</span></a></li>";
      var labels = idx.kinds || {};
      var order = Object.keys(labels);
      Object.keys(counts).sort(function (a, b) { return order.indexOf(a) - order.indexOf(b); }).forEach(function (k) {
        f += '<li><a href="' + esc(base + "&kind=" + encodeURIComponent(k)) + '"' + (kind === k ? ' aria-current="page"' : "") + ">" + esc(labels[k] || k) + ' <span class="count">' + counts[k] + "</span></a></li>";
      });
      facets.innerHTML = f + "</ul>";
      status.textContent = shown.length ? (shown.length < total ? "The best " + shown.length + " of " + total + " matches." : shown.length + " matches.") : "No entity matches these words.";
      list.innerHTML = shown.map(function (d) {
        // A window of the text around the first query word found, else the summary.
        var text = d.x || "", lower = text.toLowerCase(), at = -1;
        q.toLowerCase().split(/[^a-z0-9_-]+/).forEach(function (w) {
          if (w.length < 2) return;
          var i = lower.indexOf(w);
          if (i >= 0 && (at < 0 || i < at)) at = i;
        });
        var snip = at < 0 ? (d.s || text).slice(0, 240) : (at > 80 ? "…" : "") + text.slice(Math.max(0, at - 80), Math.max(0, at - 80) + 240) + (text.length > at + 160 ? "…" : "");
        return '<li><a class="result" href="' + esc(entityHref(d.id)) + '">' + esc(d.t) + '</a> <span class="badge k-' + esc(d.k) + '">' + esc(d.k) +
          '</span> <code class="id">' + esc(d.id) + '</code><p class="snippet">' + mark(snip, q) + "</p></li>";
      }).join("");
    }).catch(function (e) {
      status.textContent = "The search index could not be loaded (" + e.message + "). Serve this folder over HTTP, e.g. python3 -m http.server.";
    });
  }

  function gateFilter() {
    var form = document.getElementById("gate-filter"), table = document.getElementById("gates");
    if (!form || !table) return;
    var ver = document.getElementById("gate-version"), stageSel = document.getElementById("gate-stage"), name = document.getElementById("gate-q");
    var count = document.getElementById("gate-count");
    if (isStatic) {
      var p = params();
      if (p.version) ver.value = p.version;
      if (p.stage) stageSel.value = p.stage;
      if (p.q) name.value = p.q;
    }
    function cmp(a, b) {
      var x = a.split("."), y = b.split(".");
      return (+x[0] - +y[0]) || (+x[1] - +y[1]);
    }
    function apply() {
      var v = ver.value, st = stageSel.value, q = name.value.trim().toLowerCase(), shown = 0;
      var rows = table.tBodies[0].rows;
      for (var i = 0; i < rows.length; i++) {
        var r = rows[i], steps = JSON.parse(r.getAttribute("data-steps") || "[]"), step = null;
        steps.forEach(function (s) { if (!v || cmp(s[0], v) <= 0) step = s; });
        if (!v && steps.length) step = steps[steps.length - 1];
        var stage = step ? step[1] : "not yet";
        r.querySelector(".stage").textContent = stage;
        r.querySelector(".default").textContent = step ? (step[2] === true ? "on" : step[2] === false ? "off" : "unknown") : "";
        r.querySelector(".since").textContent = step ? step[0] : "";
        var ok = (!st || stage.toLowerCase() === st) && (!q || r.getAttribute("data-name").indexOf(q) >= 0);
        r.hidden = !ok;
        if (ok) shown++;
      }
      if (count) count.textContent = shown + " of " + rows.length + " gates shown.";
    }
    [ver, stageSel].forEach(function (el) { el.addEventListener("change", apply); });
    name.addEventListener("input", apply);
    form.addEventListener("submit", function (ev) { if (isStatic) { ev.preventDefault(); apply(); } });
    apply();
  }

  function sparqlExamples() {
    var box = document.getElementById("query");
    if (!box || box.disabled) return;
    Array.prototype.forEach.call(document.querySelectorAll("code.example"), function (c) {
      c.title = "Click to copy into the query box";
      c.style.cursor = "pointer";
      c.addEventListener("click", function () { box.value = c.textContent; box.focus(); });
    });
  }

  staticSearch();
  gateFilter();
  sparqlExamples();
})();
