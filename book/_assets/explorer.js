/* rlvr-dynamics explorer: P1's oscillator model over (ηK, μ, K_ref, G), drawn as SVG from precomputed data
   (window.RLVR_EXPLORER, written by rlvr_dynamics.book.build.explorer_data from the library's closed forms).
   No network, no library: plain DOM + SVG. */
(function () {
  "use strict";
  var NS = "http://www.w3.org/2000/svg";
  var COLORS = {overdamped: "#0072B2", critical: "#009E73", underdamped: "#E69F00", unstable: "#D55E00"};
  /* the same colours mixed 60 % with white, for the regime map (opaque: no seams between cells) */
  var TINTS = {overdamped: "#99C7E0", critical: "#99D8C7", underdamped: "#F5D999", unstable: "#EEBF99"};

  function el(name, attrs, parent) {
    var e = document.createElementNS(NS, name);
    for (var k in attrs) { e.setAttribute(k, attrs[k]); }
    if (parent) { parent.appendChild(e); }
    return e;
  }
  function text(parent, x, y, s, attrs) {
    var t = el("text", Object.assign({x: x, y: y}, attrs || {}), parent);
    t.textContent = s;
    return t;
  }
  function fmt(x, d) {
    if (x === null || x === undefined) { return "–"; }
    var a = Math.abs(x);
    if (a !== 0 && (a < 1e-3 || a >= 1e4)) { return x.toExponential(d === undefined ? 2 : d); }
    return Number(x.toPrecision(d === undefined ? 3 : d)).toString();
  }
  function logScale(lo, hi, a, b) {
    var l0 = Math.log10(lo), l1 = Math.log10(hi);
    return function (v) { return a + (Math.log10(v) - l0) / (l1 - l0) * (b - a); };
  }
  function linScale(lo, hi, a, b) { return function (v) { return a + (v - lo) / (hi - lo) * (b - a); }; }
  function niceTicks(hi) {
    var raw = hi / 4, p = Math.pow(10, Math.floor(Math.log10(raw))), steps = [1, 2, 2.5, 5, 10], step = p;
    for (var i = 0; i < steps.length; i++) { if (steps[i] * p >= raw) { step = steps[i] * p; break; } }
    var out = [];
    for (var v = 0; v <= hi + 1e-9; v += step) { out.push(v); }
    return out;
  }

  function init(root) {
    var D = window.RLVR_EXPLORER;
    if (!D) { root.textContent = "Explorer data missing (_static/explorer-data.js)."; return; }
    var G = D.grid;
    var state = {mu: 3, a: 6, k: 3, g: 1};
    var sliders = [
      ["a", "ηK (learning rate × stiffness)", G.eta_k],
      ["mu", "μ (momentum)", G.momentum],
      ["k", "K_ref (refresh interval, steps)", G.refresh_interval],
      ["g", "G (group size)", G.group_size]
    ];
    var controls = document.createElement("div");
    controls.className = "controls";
    root.appendChild(controls);
    var outputs = {};
    sliders.forEach(function (s) {
      var label = document.createElement("label");
      label.textContent = s[1];
      label.htmlFor = "rlvr-slider-" + s[0];
      var input = document.createElement("input");
      input.type = "range"; input.min = 0; input.max = s[2].length - 1; input.step = 1; input.value = state[s[0]];
      input.id = "rlvr-slider-" + s[0];
      input.setAttribute("data-param", s[0]);
      var out = document.createElement("output");
      outputs[s[0]] = out;
      input.addEventListener("input", function () { state[s[0]] = parseInt(input.value, 10); draw(); });
      controls.appendChild(label); controls.appendChild(input); controls.appendChild(out);
    });
    var left = document.createElement("div"); left.className = "panel"; root.appendChild(left);
    var right = document.createElement("div"); right.className = "panel"; root.appendChild(right);
    var readout = document.createElement("div"); readout.className = "readout"; root.appendChild(readout);
    var W = 440, H = 420, m = {l: 62, r: 14, t: 26, b: 118};  /* legend below the axes: it never covers data */

    var phase = el("svg", {viewBox: "0 0 " + W + " " + H, role: "img", "aria-label": "phase diagram",
                           "class": "rlvr-phase"}, left);
    var curve = el("svg", {viewBox: "0 0 " + W + " " + H, role: "img", "aria-label": "reward curve",
                           "class": "rlvr-curve"}, right);

    function axes(svg, xs, ys, xticks, yticks, xlabel, ylabel, title, xfmt, yfmt) {
      var g = el("g", {"class": "axes"}, svg);
      el("line", {x1: m.l, y1: H - m.b, x2: W - m.r, y2: H - m.b, stroke: "#333"}, g);
      el("line", {x1: m.l, y1: m.t, x2: m.l, y2: H - m.b, stroke: "#333"}, g);
      xticks.forEach(function (v) {
        var x = xs(v);
        el("line", {x1: x, y1: H - m.b, x2: x, y2: H - m.b + 5, stroke: "#333"}, g);
        text(g, x, H - m.b + 18, xfmt(v), {"text-anchor": "middle"});
      });
      yticks.forEach(function (v) {
        var y = ys(v);
        el("line", {x1: m.l - 5, y1: y, x2: m.l, y2: y, stroke: "#333"}, g);
        text(g, m.l - 8, y + 4, yfmt(v), {"text-anchor": "end"});
      });
      text(g, (m.l + W - m.r) / 2, H - m.b + 38, xlabel, {"text-anchor": "middle"});
      text(g, 14, (m.t + H - m.b) / 2, ylabel, {"text-anchor": "middle",
           transform: "rotate(-90 14 " + (m.t + H - m.b) / 2 + ")"});
      text(g, m.l, 16, title, {"font-weight": "bold"});
    }

    function drawPhase() {
      while (phase.firstChild) { phase.removeChild(phase.firstChild); }
      var A = D.map_axes.eta_k, K = D.map_axes.refresh_interval;
      var xs = logScale(A[0], A[A.length - 1], m.l, W - m.r);
      var ys = logScale(K[0], K[K.length - 1], H - m.b, m.t);
      var map = D.maps[String(state.mu)];
      var dx = (W - m.l - m.r) / A.length, dy = (H - m.t - m.b) / K.length;
      /* the map's cells go into a detached group, attached once: one DOM mutation, not one per cell (a page
         script that watches the DOM, Font Awesome's, took seconds over thousands of them per redraw) */
      var g = el("g", {"class": "regime-map"});
      for (var r = 0; r < K.length; r++) {
        for (var c = 0; c < A.length; c++) {
          el("rect", {x: m.l + c * dx, y: H - m.b - (r + 1) * dy, width: dx + 0.5, height: dy + 0.5,
                      fill: TINTS[D.regimes[map[r][c]]], "shape-rendering": "crispEdges"}, g);
        }
      }
      phase.appendChild(g);
      function line(vals, cls, color, dash) {
        var pts = [];
        for (var i = 0; i < A.length; i++) {
          var v = vals[i];
          if (v >= K[0] && v <= K[K.length - 1]) { pts.push(xs(A[i]).toFixed(1) + "," + ys(v).toFixed(1)); }
        }
        if (pts.length > 1) {
          el("polyline", {points: pts.join(" "), fill: "none", stroke: color, "stroke-width": 2.2,
                          "stroke-dasharray": dash, "class": cls}, phase);
        }
      }
      line(D.threshold[String(state.mu)], "threshold", "#000", "6 4");
      line(D.onset[String(state.mu)], "regime-boundary", "#0072B2", "");
      axes(phase, xs, ys, [1e-3, 1e-2, 1e-1], [1, 10, 100, 1000], "ηK (learning rate × stiffness)",
           "K_ref (steps)", "Regimes at μ = " + G.momentum[state.mu],
           function (v) { return v.toExponential(0); }, function (v) { return String(v); });
      var px = xs(G.eta_k[state.a]), py = ys(G.refresh_interval[state.k]);
      el("circle", {cx: px, cy: py, r: 6, fill: "#fff", stroke: "#000", "stroke-width": 2, "class": "marker"}, phase);
      var lg = el("g", {"class": "legend"}, phase);
      var ly = H - m.b + 62, lx = m.l, lx2 = m.l + 190;
      [["overdamped", "overdamped (ζ > 1)"], ["underdamped", "oscillating (0 < ζ < 1)"],
       ["unstable", "unstable (ζ ≤ 0)"]].forEach(function (it, i) {
        el("rect", {x: lx, y: ly + i * 17 - 10, width: 12, height: 12, fill: TINTS[it[0]], stroke: "#666",
                    "stroke-width": 0.5}, lg);
        text(lg, lx + 18, ly + i * 17, it[1], {"font-size": "12px"});
      });
      el("line", {x1: lx2, y1: ly - 4, x2: lx2 + 16, y2: ly - 4, stroke: "#000", "stroke-width": 2,
                  "stroke-dasharray": "6 4"}, lg);
      text(lg, lx2 + 22, ly, "threshold K·η·K_ref = 1 − μ", {"font-size": "12px"});
      el("line", {x1: lx2, y1: ly + 13, x2: lx2 + 16, y2: ly + 13, stroke: "#0072B2", "stroke-width": 2}, lg);
      text(lg, lx2 + 22, ly + 17, "regime boundary ζ = 1", {"font-size": "12px"});
      el("circle", {cx: lx2 + 8, cy: ly + 30, r: 5, fill: "#fff", stroke: "#000", "stroke-width": 2}, lg);
      text(lg, lx2 + 22, ly + 34, "chosen (ηK, K_ref)", {"font-size": "12px"});
    }

    function drawCurve(c, ref) {
      while (curve.firstChild) { curve.removeChild(curve.firstChild); }
      var n = c.reward.length, T = c.horizon;
      var xs = linScale(0, T, m.l, W - m.r);
      var sd = c.sd ? c.sd[state.g] : null;
      /* a stable curve is drawn in full: the axis extends past [0, 1] when it overshoots (at most to [-0.5, 1.5]) */
      var yLo = 0, yHi = 1;
      if (c.regime !== "unstable") {
        for (var k = 0; k < n; k++) {
          yLo = Math.min(yLo, c.reward[k] - (sd || 0)); yHi = Math.max(yHi, c.reward[k] + (sd || 0));
        }
        yLo = Math.max(-0.5, yLo); yHi = Math.min(1.5, yHi);
      }
      var ys = linScale(yLo, yHi, H - m.b, m.t);
      var clip = function (v) { return Math.max(yLo - 0.02, Math.min(yHi + 0.02, v)); };
      var step = function (i) { return T * i / (n - 1); };
      if (sd !== null) {
        var up = [], lo = [];
        for (var i = 0; i < n; i++) {
          up.push(xs(step(i)).toFixed(1) + "," + ys(clip(c.reward[i] + sd)).toFixed(1));
          lo.unshift(xs(step(i)).toFixed(1) + "," + ys(clip(c.reward[i] - sd)).toFixed(1));
        }
        el("polygon", {points: up.concat(lo).join(" "), fill: "#0072B2", "fill-opacity": 0.18, stroke: "none",
                       "class": "band"}, curve);
      }
      el("line", {x1: m.l, x2: W - m.r, y1: ys(D.p_star), y2: ys(D.p_star), stroke: "#999", "stroke-dasharray": "4 4"},
         curve);
      text(curve, W - m.r - 4, ys(D.p_star) - 5, "fixed point p*", {"text-anchor": "end", fill: "#555",
           "font-size": "11px"});
      function path(vals, attrs, unstable) {
        /* an unstable curve that leaves [0, 1] has left the linear model's range: stop it there
           (a stable overshoot past 1 is drawn in full, the axis extended) */
        var d = "", exit = null;
        for (var i = 0; i < n; i++) {
          if (unstable && (vals[i] < -0.005 || vals[i] > 1.005)) { exit = i; break; }
          d += (i ? "L" : "M") + xs(step(i)).toFixed(1) + "," + ys(clip(vals[i])).toFixed(1);
        }
        el("path", Object.assign({d: d, fill: "none"}, attrs), curve);
        return exit;
      }
      if (ref) { path(ref.reward, {stroke: "#999", "stroke-width": 1.5, "class": "reference"}, ref.regime === "unstable"); }
      var exit = path(c.reward, {stroke: COLORS[c.regime] || "#000", "stroke-width": 2.5, "class": "curve"},
                      c.regime === "unstable");
      if (exit !== null) {
        var ex = xs(step(Math.max(exit - 1, 0))), ey = ys(clip(c.reward[Math.max(exit - 1, 0)]));
        el("circle", {cx: ex, cy: ey, r: 4, fill: COLORS.unstable}, curve);
        text(curve, Math.min(ex + 6, W - m.r - 4), Math.max(ey + (ey < m.t + 20 ? 16 : -8), m.t + 12),
             "diverges: leaves [0, 1] at step " + Math.round(step(exit)),
             {"font-size": "12px", fill: COLORS.unstable, "text-anchor": ex > W / 2 ? "end" : "start"});
      }
      var yTicks = [];
      for (var t = Math.ceil(yLo * 5) / 5; t <= yHi + 1e-9; t += 0.2) { yTicks.push(Math.round(t * 10) / 10); }
      axes(curve, xs, ys, niceTicks(T), yTicks, "optimizer step", "mean reward p(t)",
           "Reward curve: " + c.regime + ", ζ = " + fmt(c.zeta),
           function (v) { return fmt(v, 4); }, function (v) { return v.toFixed(1); });
      var lg = el("g", {"class": "legend"}, curve);
      var ly = H - m.b + 62, lx = m.l;
      el("line", {x1: lx, y1: ly - 4, x2: lx + 20, y2: ly - 4, stroke: COLORS[c.regime], "stroke-width": 2.5}, lg);
      text(lg, lx + 26, ly, "closed form at these settings", {"font-size": "12px"});
      if (ref) {
        el("line", {x1: lx, y1: ly + 13, x2: lx + 20, y2: ly + 13, stroke: "#999", "stroke-width": 1.5}, lg);
        text(lg, lx + 26, ly + 17, "same ηK and μ at K_ref = 1", {"font-size": "12px"});
      }
      if (sd !== null) {
        el("rect", {x: lx, y: ly + 25, width: 20, height: 10, fill: "#0072B2", "fill-opacity": 0.18}, lg);
        text(lg, lx + 26, ly + 34, "± stationary std of p at G = " + G.group_size[state.g] + " (∝ 1/√G)",
             {"font-size": "12px"});
      }
    }

    function draw() {
      sliders.forEach(function (s) {
        var v = s[2][state[s[0]]];
        outputs[s[0]].textContent = s[0] === "a" ? v.toExponential(2) : String(v);
      });
      var key = state.mu + "_" + state.a + "_" + state.k;
      var c = D.curves[key], ref = D.curves[state.mu + "_" + state.a + "_0"];
      drawPhase();
      drawCurve(c, state.k === 0 ? null : ref);
      var mu = G.momentum[state.mu], a = G.eta_k[state.a], kr = G.refresh_interval[state.k];
      var prod = a * kr, crit = (1 - mu) / a;
      readout.innerHTML = "";
      var p = document.createElement("p");
      p.className = "explorer-readout";
      p.textContent = "ζ = " + fmt(c.zeta) + " (" + c.regime + ") · M = " + fmt(c.M) + ", C = " + fmt(c.C) +
        ", K_eff = " + fmt(c.K) + " · K·η·K_ref = " + fmt(prod) + (prod >= 1 - mu ? " ≥ " : " < ") + "1 − μ = " +
        fmt(1 - mu) + " → " + (prod >= 1 - mu ? "unstable" : "stable") + " · critical K_ref = (1 − μ)/(ηK) = " +
        fmt(crit) + (c.sd ? " · stationary std of p at G = " + G.group_size[state.g] + ": " +
        fmt(c.sd[state.g]) : " · no stationary state (C ≤ 0)");
      readout.appendChild(p);
    }
    draw();
  }

  function start() {
    var root = document.getElementById("rlvr-explorer");
    if (root) { init(root); }
  }
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", start); } else { start(); }
})();
