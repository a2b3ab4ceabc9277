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

  function label(m) {
    const parts = [];
    if (m.latency_ms !== null && m.latency_ms !== undefined) parts.push(mp.number(m.latency_ms, 0) + " ms");
    if (m.lag_records !== null && m.lag_records !== undefined) parts.push("lag " + mp.number(m.lag_records, 0));
    return parts.join(" · ");
  }

  /* Mirrors between the same two clusters are drawn as arcs bending apart, so each stays clickable. */
  function edges(data, at) {
    const seen = {};
    return data.mirrors.filter(function (m) { return at[m.source] && at[m.target]; }).map(function (m) {
      const pair = [m.source, m.target].sort().join("|");
      const index = seen[pair] = (seen[pair] === undefined ? 0 : seen[pair] + 1);
      const [x0, y0] = at[m.source];
      const [x1, y1] = at[m.target];
      const length = Math.hypot(x1 - x0, y1 - y0) || 1;
      const side = m.source < m.target ? 1 : -1;
      const bend = side * (0.12 + 0.14 * index);
      const cx = (x0 + x1) / 2 - ((y1 - y0) / length) * bend;
      const cy = (y0 + y1) / 2 + ((x1 - x0) / length) * bend;
      const xs = [], ys = [];
      for (let t = 0; t <= 1.0001; t += 0.05) {  // quadratic Bezier source -> control -> target
        xs.push((1 - t) * (1 - t) * x0 + 2 * (1 - t) * t * cx + t * t * x1);
        ys.push((1 - t) * (1 - t) * y0 + 2 * (1 - t) * t * cy + t * t * y1);
      }
      return {mirror: m, xs: xs, ys: ys, mid: [xs[10], ys[10]], tip: [xs[17], ys[17]], from: [xs[15], ys[15]]};
    });
  }

  function draw(data) {
    if (!window.Plotly || !topology) return;
    const at = positions(data.clusters);
    const drawn = edges(data, at);
    const many = drawn.length > 12;
    const traces = drawn.map(function (e) {
      return {x: e.xs, y: e.ys, mode: "lines", hoverinfo: "skip", showlegend: false,
              line: {color: COLORS[e.mirror.health] || COLORS.stopped, width: 3}};
    });
    traces.push({
      x: drawn.map(function (e) { return e.mid[0]; }), y: drawn.map(function (e) { return e.mid[1]; }),
      mode: many ? "markers" : "markers+text", textposition: "top center", showlegend: false,
      text: drawn.map(function (e) { return e.mirror.name + (label(e.mirror) ? "<br>" + label(e.mirror) : ""); }),
      customdata: drawn.map(function (e) { return e.mirror.url; }),
      hovertext: drawn.map(function (e) {
        return "<b>" + e.mirror.name + "</b> (" + e.mirror.source + " → " + e.mirror.target + ")<br>" +
          e.mirror.health + ": " + (e.mirror.reason || "") + (label(e.mirror) ? "<br>" + label(e.mirror) : "");
      }),
      hoverinfo: "text", textfont: {size: 11},
      marker: {size: 12, color: drawn.map(function (e) { return COLORS[e.mirror.health] || COLORS.stopped; }),
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
              showarrow: true, arrowhead: 3, arrowsize: 1.4, arrowwidth: 2, text: "",
              arrowcolor: COLORS[e.mirror.health] || COLORS.stopped};
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
        const url = event.points && event.points[0] && event.points[0].customdata;
        if (url && typeof url === "string") window.location.href = url;
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
      return mp.el("tr", {}, [
        cell([mp.el("a", {href: m.url, text: m.name})]),
        cell([m.source + " → " + m.target]),
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
