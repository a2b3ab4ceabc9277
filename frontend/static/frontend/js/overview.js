/* Overview: topology of clusters and mirrors coloured by health, problems list; live from /api/v1/overview/. */
"use strict";
(function () {
  const COLORS = {running: "#1f9d55", degraded: "#d98b00", failed: "#d0342c", paused: "#8a6d00", stopped: "#7b8794"};
  const topology = document.getElementById("topology");

  function positions(clusters) {
    const placed = {};
    const n = clusters.length;
    clusters.forEach(function (cluster, i) {
      const angle = n === 2 ? Math.PI * i : (2 * Math.PI * i) / n - Math.PI / 2;
      placed[cluster.alias] = [Math.cos(angle), Math.sin(angle)];
    });
    return placed;
  }

  function flowOf(source, target) { return source + " → " + target; }

  /* One edge per pair of clusters and direction (the API's `links`): several mirrors from one cluster to
     another share it, its label summarises them and hovering lists them. The two directions of a pair
     bend to opposite sides, each label on the outer side of its arc. */
  function edges(data, at) {
    return (data.links || []).filter(function (l) { return at[l.source] && at[l.target]; }).map(function (l) {
      const [x0, y0] = at[l.source];
      const [x1, y1] = at[l.target];
      const length = Math.hypot(x1 - x0, y1 - y0) || 1;
      // Left of the direction of travel: the normal turns with the direction, so a -> b and b -> a part.
      const bend = 0.14;
      const nx = -((y1 - y0) / length) * bend, ny = ((x1 - x0) / length) * bend;  // from the chord to the arc
      const cx = (x0 + x1) / 2 + nx, cy = (y0 + y1) / 2 + ny;
      const xs = [], ys = [];
      for (let t = 0; t <= 1.0001; t += 0.05) {  // quadratic Bezier source -> control -> target
        xs.push((1 - t) * (1 - t) * x0 + 2 * (1 - t) * t * cx + t * t * x1);
        ys.push((1 - t) * (1 - t) * y0 + 2 * (1 - t) * t * cy + t * t * y1);
      }
      const outer = Math.abs(ny) >= Math.abs(nx) ? (ny >= 0 ? "top center" : "bottom center")
        : (nx >= 0 ? "middle right" : "middle left");
      return {link: l, xs: xs, ys: ys, mid: [xs[10], ys[10]], tip: [xs[17], ys[17]], from: [xs[15], ys[15]],
              position: outer};
    });
  }

  function hover(l) {
    const shown = l.mirrors.slice(0, 10).map(function (m) {
      const reason = (m.reason || "").length > 90 ? m.reason.slice(0, 89) + "…" : (m.reason || "");
      return "● " + m.name + ": " + m.health + (reason ? " (" + reason + ")" : "");
    });
    if (l.mirrors.length > shown.length) shown.push("… and " + (l.mirrors.length - shown.length) + " more: click to list them");
    return "<b>" + flowOf(l.source, l.target) + "</b>: " + l.count + (l.count === 1 ? " mirror" : " mirrors") +
      "<br>" + shown.join("<br>");
  }

  /* A link of several mirrors lists them: its rows of the mirrors table are marked and scrolled to. */
  let selectedFlow = null;

  function showFlow(flow) {
    selectedFlow = flow;
    const rows = Array.from(document.querySelectorAll("#links tbody tr"));
    rows.forEach(function (row) { row.classList.toggle("selected", row.dataset.flow === flow); });
    const first = rows.find(function (row) { return row.dataset.flow === flow; });
    if (first) {
      first.scrollIntoView({block: "nearest"});
      const anchor = first.querySelector("a");
      if (anchor) anchor.focus({preventScroll: true});
    }
  }

  function draw(data) {
    if (!window.Plotly || !topology) return;
    const at = positions(data.clusters);
    const drawn = edges(data, at);
    const many = drawn.length > 12;
    const color = function (e) { return COLORS[e.link.health] || COLORS.stopped; };
    const traces = drawn.map(function (e) {
      return {x: e.xs, y: e.ys, mode: "lines", hoverinfo: "skip", showlegend: false,
              line: {color: color(e), width: Math.min(3 + (e.link.count - 1), 7)}};
    });
    traces.push({
      x: drawn.map(function (e) { return e.mid[0]; }), y: drawn.map(function (e) { return e.mid[1]; }),
      mode: many ? "markers" : "markers+text", textposition: drawn.map(function (e) { return e.position; }),
      showlegend: false,
      text: drawn.map(function (e) { return e.link.label.split("\n").join("<br>"); }),
      customdata: drawn.map(function (e) { return e.link.url || "flow:" + flowOf(e.link.source, e.link.target); }),
      hovertext: drawn.map(function (e) { return hover(e.link); }),
      hoverinfo: "text", textfont: {size: 11},
      marker: {size: drawn.map(function (e) { return e.link.count > 1 ? 16 : 12; }), color: drawn.map(color),
               symbol: drawn.map(function (e) { return e.link.count > 1 ? "square" : "circle"; }),
               line: {color: "#fff", width: 1}}
    });
    traces.push({
      x: data.clusters.map(function (c) { return at[c.alias][0]; }),
      y: data.clusters.map(function (c) { return at[c.alias][1]; }),
      mode: "markers", hoverinfo: "text", showlegend: false,
      hovertext: data.clusters.map(function (c) {
        return c.alias + "<br>" + c.bootstrap_servers + "<br>out " + c.mirrors_out + ", in " + c.mirrors_in;
      }),
      marker: {size: 34, color: "#1d2733", symbol: "circle"}
    });
    const arrows = drawn.map(function (e) {
      return {x: e.tip[0], y: e.tip[1], ax: e.from[0], ay: e.from[1], xref: "x", yref: "y", axref: "x", ayref: "y",
              showarrow: true, arrowhead: 3, arrowsize: 1.4, arrowwidth: 2, text: "", arrowcolor: color(e)};
    });
    const names = data.clusters.map(function (c) {  // on a white ground, so crossing edges never hide a name
      return {x: at[c.alias][0], y: at[c.alias][1] - 0.17, text: "<b>" + c.alias + "</b>", showarrow: false,
              bgcolor: "rgba(255,255,255,0.9)", font: {size: 13, color: "#1d2733"}};
    });
    const layout = {margin: {l: 10, r: 10, t: 10, b: 10}, annotations: arrows.concat(names), hovermode: "closest",
                    xaxis: {visible: false, range: [-1.5, 1.5]}, yaxis: {visible: false, range: [-1.45, 1.35]},
                    paper_bgcolor: "rgba(0,0,0,0)", plot_bgcolor: "rgba(0,0,0,0)", dragmode: false};
    Plotly.react(topology, traces, layout, {displayModeBar: false, responsive: true});
    if (!topology.dataset.bound) {
      topology.dataset.bound = "1";
      topology.on("plotly_click", function (event) {
        const target = event.points && event.points[0] && event.points[0].customdata;
        if (typeof target !== "string") return;
        if (target.startsWith("flow:")) showFlow(target.slice(5));
        else window.location.href = target;
      });
    }
  }

  function cell(children) { return mp.el("td", {}, children); }

  function render(data) {
    draw(data);
    const counts = document.getElementById("counts");
    counts.replaceChildren.apply(counts, Object.entries(data.counts).map(function ([health, count]) {
      return mp.el("li", {class: "health-" + health, text: count + " " + health});
    }));
    const rows = data.mirrors.map(function (m) {
      const flow = flowOf(m.source, m.target);
      return mp.el("tr", {"data-flow": flow, class: flow === selectedFlow ? "selected" : null}, [
        cell([mp.el("a", {href: m.url, text: m.name})]),
        cell([flow]),
        cell([mp.el("span", {class: "health health-" + m.health, title: m.reason || "", text: m.health})]),
        cell([m.latency_ms === null || m.latency_ms === undefined ? "–" : mp.number(m.latency_ms, 0) + " ms"]),
        cell([m.lag_records === null || m.lag_records === undefined ? "–" : mp.number(m.lag_records, 0) + " records"])
      ]);
    });
    const body = document.querySelector("#links tbody");
    body.replaceChildren.apply(body, rows);
    const problems = document.getElementById("problems");
    const items = data.problems.map(function (p) {
      const title = p.mirror ? p.mirror + ": " + p.title : p.title;
      return mp.el("li", {class: p.severity}, [p.url ? mp.el("a", {href: p.url, text: title}) : title,
                                               mp.el("span", {class: "detail", text: p.detail || ""})]);
    });
    if (!items.length) items.push(mp.el("li", {class: "none", text: "Nothing: every mirror is healthy."}));
    problems.replaceChildren.apply(problems, items);
    document.getElementById("updated").textContent = "updated " + new Date(data.generated_at * 1000).toLocaleTimeString();
  }

  const initial = JSON.parse(document.getElementById("overview-data").textContent);
  render(initial);
  let first = true;
  mp.every(5, async function () {
    if (first) { first = false; return; }  // the page came with fresh data
    const answer = await mp.request("GET", "/api/v1/overview/");
    if (answer.ok) render(answer.data);
    else document.getElementById("updated").textContent = "not updated: " + mp.errorText(answer.data);
  });
})();
