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
      const point = function (t) {  // on the quadratic Bezier source -> control -> target
        return [(1 - t) * (1 - t) * x0 + 2 * (1 - t) * t * cx + t * t * x1,
                (1 - t) * (1 - t) * y0 + 2 * (1 - t) * t * cy + t * t * y1];
      };
      const outer = Math.abs(ny) >= Math.abs(nx) ? (ny >= 0 ? "top center" : "bottom center")
        : (nx >= 0 ? "middle right" : "middle left");
      return {link: l, control: [cx, cy], mid: point(0.5), tip: point(0.85), from: point(0.75), position: outer};
    });
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

  const SVG = "http://www.w3.org/2000/svg";

  /* An SVG element with attributes (a `text` key sets its text), appended to `parent` when given. */
  function svg(tag, attributes, parent) {
    const node = document.createElementNS(SVG, tag);
    Object.entries(attributes || {}).forEach(function ([key, value]) {
      if (key === "text") node.textContent = value;
      else node.setAttribute(key, value);
    });
    if (parent) parent.append(node);
    return node;
  }

  /* The hover card: a title line and the lines under it, placed beside the pointer within the topology. */
  const tip = mp.el("div", {class: "topology-tip", role: "tooltip", hidden: true});

  function showTip(event, title, lines) {
    tip.replaceChildren(mp.el("b", {text: title}));
    lines.forEach(function (line) { tip.append(mp.el("br"), line); });
    tip.hidden = false;
    const area = topology.getBoundingClientRect();
    const x = event.clientX - area.left, y = event.clientY - area.top;
    tip.style.left = Math.min(x + 12, Math.max(0, area.width - tip.offsetWidth)) + "px";
    tip.style.top = (y + 16 + tip.offsetHeight > area.height ? Math.max(0, y - tip.offsetHeight - 8) : y + 16) + "px";
  }

  function hoverable(node, title, lines) {
    node.addEventListener("mousemove", function (event) { showTip(event, title, lines); });
    node.addEventListener("mouseleave", function () { tip.hidden = true; });
  }

  function linkTip(l) {
    const shown = l.mirrors.slice(0, 10).map(function (m) {
      const reason = (m.reason || "").length > 90 ? m.reason.slice(0, 89) + "…" : (m.reason || "");
      return "● " + m.name + ": " + m.health + (reason ? " (" + reason + ")" : "");
    });
    if (l.mirrors.length > shown.length) shown.push("… and " + (l.mirrors.length - shown.length) + " more: click to list them");
    return [flowOf(l.source, l.target) + ": " + l.count + (l.count === 1 ? " mirror" : " mirrors"), shown];
  }

  /* A label's lines beside its marker at (x, y), on the side `position` names. */
  function label(parent, text, x, y, position) {
    const lines = text.split("\n");
    const height = 13;
    const gap = 11;
    const side = {"top center": [0, -gap - (lines.length - 1) * height, "middle"],
                  "bottom center": [0, gap + height - 3, "middle"],
                  "middle right": [gap, 4 - (lines.length - 1) * height / 2, "start"],
                  "middle left": [-gap, 4 - (lines.length - 1) * height / 2, "end"]}[position];
    const node = svg("text", {class: "edge-label", x: x + side[0], y: y + side[1], "text-anchor": side[2]}, parent);
    lines.forEach(function (line, i) {
      svg("tspan", {x: x + side[0], dy: i ? height : 0, text: line}, node);
    });
  }

  /* The clusters on a circle, one curved edge per link with an arrowhead, a marker at its middle (a square
     for a link of several mirrors) and its label on the arc's outer side; hover cards and clicks on both.
     Plain SVG: the overview is the landing page and needs no charting library. */
  function draw(data) {
    if (!topology) return;
    tip.hidden = true;
    const width = topology.clientWidth || 600, height = topology.clientHeight || 420, margin = 10;
    const px = function (x) { return margin + (x + 1.5) / 3 * (width - 2 * margin); };
    const py = function (y) { return margin + (1.35 - y) / 2.8 * (height - 2 * margin); };
    const at = positions(data.clusters);
    const drawn = edges(data, at);
    const many = drawn.length > 12;
    const color = function (e) { return COLORS[e.link.health] || COLORS.stopped; };
    const root = svg("svg", {class: "topology-graph", width: width, height: height, viewBox: "0 0 " + width + " " + height});
    const layers = ["edges", "markers", "labels", "clusters"].map(function (name) {
      return svg("g", {class: name}, root);
    });
    drawn.forEach(function (e) {
      const [x0, y0] = at[e.link.source], [x1, y1] = at[e.link.target];
      svg("path", {class: "edge", d: "M" + px(x0) + " " + py(y0) + " Q" + px(e.control[0]) + " " + py(e.control[1]) +
                   " " + px(x1) + " " + py(y1), stroke: color(e),
                   "stroke-width": Math.min(3 + (e.link.count - 1), 7), fill: "none"}, layers[0]);
      const tipX = px(e.tip[0]), tipY = py(e.tip[1]);
      const dx = tipX - px(e.from[0]), dy = tipY - py(e.from[1]), length = Math.hypot(dx, dy) || 1;
      const ux = dx / length, uy = dy / length, back = 11, half = 6;
      svg("polygon", {class: "arrow", fill: color(e), points: [
        [tipX, tipY], [tipX - back * ux - half * uy, tipY - back * uy + half * ux],
        [tipX - back * ux + half * uy, tipY - back * uy - half * ux]].map(function (p) { return p.join(","); }).join(" ")},
      layers[0]);
      const mx = px(e.mid[0]), my = py(e.mid[1]);
      const [shape, place] = e.link.count > 1 ? ["rect", {x: mx - 8, y: my - 8, width: 16, height: 16}]
        : ["circle", {cx: mx, cy: my, r: 6}];
      const marker = svg(shape, Object.assign({class: "edge-marker", fill: color(e)}, place), layers[1]);
      const [title, lines] = linkTip(e.link);
      hoverable(marker, title, lines);
      marker.addEventListener("click", function () {
        if (e.link.url) window.location.href = e.link.url;
        else showFlow(flowOf(e.link.source, e.link.target));
      });
      if (!many) label(layers[2], e.link.label, mx, my, e.position);
    });
    data.clusters.forEach(function (c) {
      const x = px(at[c.alias][0]), y = py(at[c.alias][1]);
      const node = svg("circle", {class: "cluster", cx: x, cy: y, r: 17}, layers[3]);
      hoverable(node, c.alias, [c.bootstrap_servers, "out " + c.mirrors_out + ", in " + c.mirrors_in]);
      svg("text", {class: "cluster-name", x: x, y: py(at[c.alias][1] - 0.17) + 4, "text-anchor": "middle",
                   text: c.alias}, layers[3]);
    });
    topology.replaceChildren(root, tip);
  }

  let latest = null;  // the overview last rendered, drawn again when the window is resized
  let resized = null;
  window.addEventListener("resize", function () {
    clearTimeout(resized);
    resized = setTimeout(function () { draw(latest); }, 150);
  });

  function cell(children) { return mp.el("td", {}, children); }

  function render(data) {
    latest = data;
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
