/* Mirror detail: live connector cards with their verbs, graphs, migration readiness and events. */
"use strict";
(function () {
  const cards = document.getElementById("cards");
  const mirror = cards.dataset.mirror;
  const canOperate = cards.dataset.canOperate === "true";
  const base = "/api/v1/mirrors/" + encodeURIComponent(mirror) + "/";
  const KINDS = [["source", "Source"], ["checkpoint", "Checkpoint"], ["heartbeat", "Heartbeat"]];
  const busy = {};  // connector kind -> a verb is on its way

  // -- connector cards ----------------------------------------------------------------------

  function taskSummary(tasks) {
    if (!tasks || !tasks.length) return "none";
    const byState = {};
    tasks.forEach(function (t) { byState[t.state] = (byState[t.state] || 0) + 1; });
    return tasks.length + " (" + Object.entries(byState).map(function ([s, n]) { return n + " " + s; }).join(", ") + ")";
  }

  function button(kind, text, onclick, options) {
    return mp.el("button", Object.assign({type: "button", "data-verb": text.toLowerCase().replace(/ /g, "-"),
                                          "aria-label": text + " the " + kind + " connector", onclick: onclick,
                                          disabled: busy[kind]}, options || {}), [text]);
  }

  function actions(kind, c) {
    if (!canOperate) return null;
    const failed = c.state === "FAILED" || (c.tasks || []).some(function (t) { return t.state === "FAILED"; });
    return mp.el("div", {class: "actions"}, [
      button(kind, "Pause", function () { verb(kind, "PUT", "pause/"); }, {disabled: busy[kind] || c.desired_state === "paused"}),
      button(kind, "Resume", function () { verb(kind, "PUT", "resume/"); }, {disabled: busy[kind] || c.desired_state === "running"}),
      button(kind, "Stop", function () { confirmStop(kind); }, {class: "danger", disabled: busy[kind] || c.desired_state === "stopped"}),
      button(kind, "Restart failed", function () { verb(kind, "POST", "restart/?include_tasks=true&only_failed=true"); },
             {disabled: busy[kind] || !failed, title: failed ? "" : "no failed task"}),
      button(kind, "Restart all", function () { verb(kind, "POST", "restart/?include_tasks=true"); })
    ]);
  }

  /* The source connector's replication mode: micro-batch or real-time, with the setting and why. */
  function modeFacts(kind, progress) {
    const mode = kind === "source" ? (progress || {}).replication_mode : null;
    if (!mode || !mode.mode) return [];
    return [mp.el("dt", {text: "mode"}),
            mp.el("dd", {id: "replication-mode", title: mode.reason || "",
                         text: mode.mode + (mode.setting === "auto" ? " (auto)" : "")})];
  }

  function card(kind, title, c, progress) {
    const state = c.state || "UNASSIGNED";
    return mp.el("article", {class: "card connector", id: "connector-" + kind, "data-state": state, "aria-labelledby": "title-" + kind}, [
      mp.el("h3", {id: "title-" + kind}, [title, mp.el("span", {class: "state state-" + state.toLowerCase(), "data-role": "state", text: state})]),
      mp.el("dl", {}, [
        mp.el("dt", {text: "desired"}), mp.el("dd", {text: c.desired_state || "–"}),
        mp.el("dt", {text: "tasks"}), mp.el("dd", {text: taskSummary(c.tasks)})
      ].concat(modeFacts(kind, progress), [
        mp.el("dt", {text: "restarts"}), mp.el("dd", {text: String(c.restarts || 0)}),
        mp.el("dt", {text: "since"}), mp.el("dd", {text: c.state_changed_at ? new Date(c.state_changed_at).toLocaleString() : "–"})
      ])),
      c.error ? mp.el("pre", {class: "last-error", "aria-label": "last error of the " + kind + " connector", text: c.error}) : null,
      actions(kind, c)
    ]);
  }

  function renderStatus(s) {
    const keep = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.verb : null;
    const keepKind = keep && document.activeElement.closest(".connector") ? document.activeElement.closest(".connector").id : null;
    cards.replaceChildren.apply(cards, KINDS.filter(function ([kind]) { return s.connectors[kind]; }).map(function ([kind, title]) {
      return card(kind, title, s.connectors[kind], s.progress);
    }));
    if (keep && keepKind) {  // the cards are redrawn: keep keyboard focus on the same button
      const again = document.querySelector("#" + keepKind + " [data-verb='" + keep + "']");
      if (again) again.focus();
    }
    document.getElementById("app-state").textContent = s.application.state + (s.application.restarts ? " (" + s.application.restarts + " restarts)" : "");
    engine(s.application);
    const link = document.getElementById("link-state");
    link.textContent = s.link.state;
    link.className = "link link-" + s.link.state;
    document.getElementById("link-reason").textContent = s.link.reason || "";
    const error = document.getElementById("app-error");
    error.textContent = s.application.last_error || "";
    error.hidden = !s.application.last_error;
    topics((s.progress || {}).topics || []);
  }

  function engine(app) {
    // Where the application runs and its id there (a YARN application links to YARN's tracking page).
    const item = document.getElementById("app-engine");
    item.hidden = !app.engine;
    document.getElementById("app-engine-name").textContent = app.engine || "";
    const id = app.tracking_url ? mp.el("a", {text: app.id || "", href: app.tracking_url}) : mp.el("span", {text: app.id || ""});
    id.id = "app-id";
    document.getElementById("app-id").replaceWith(id);
  }

  let fastUntil = 0;
  async function refreshStatus() {
    const answer = await mp.request("GET", base + "status/");
    if (answer.ok) renderStatus(answer.data);
  }
  function statusLoop() {
    setTimeout(async function () {
      if (!document.hidden) { try { await refreshStatus(); } catch (e) { console.error(e); } }
      statusLoop();
    }, Date.now() < fastUntil ? 700 : 2500);
  }

  async function verb(kind, method, path) {
    busy[kind] = true;
    refreshButtons();
    const answer = await mp.request(method, base + "connectors/" + kind + "/" + path);
    busy[kind] = false;
    if (answer.ok) {
      mp.announce(answer.data.detail || kind + " connector: desired " + answer.data.desired_state, "info");
      fastUntil = Date.now() + 15000;  // follow the transition closely
    } else {
      mp.announce(kind + " connector: " + mp.errorText(answer.data), "error");
    }
    await refreshStatus();
  }

  function refreshButtons() {
    Object.keys(busy).forEach(function (kind) {
      document.querySelectorAll("#connector-" + kind + " .actions button").forEach(function (b) { b.disabled = busy[kind]; });
    });
  }

  function confirmStop(kind) {
    const dialog = document.getElementById("confirm");
    document.getElementById("confirm-text").textContent = "The " + kind + " connector of " + mirror +
      " stops and releases its tasks; nothing is replicated by it until you resume it.";
    dialog.returnValue = "";
    dialog.onclose = function () { if (dialog.returnValue === "ok") verb(kind, "PUT", "stop/"); };
    dialog.showModal();
  }

  // -- graphs ---------------------------------------------------------------------------------

  const topicSelect = document.getElementById("topic");
  function topics(names) {
    const known = Array.from(topicSelect.options).map(function (o) { return o.value; });
    names.filter(function (t) { return known.indexOf(t) < 0; }).forEach(function (t) {
      topicSelect.append(mp.el("option", {value: t, text: "partitions of " + t}));
    });
  }

  function range() { return document.querySelector("input[name=range]:checked").value; }

  function drawGraph(key, g) {
    const box = document.getElementById("graph-" + key);
    if (!box || !g) return;
    const plot = box.querySelector(".plot");
    const why = box.querySelector(".why");
    const points = g.traces.reduce(function (sum, t) { return sum + t.y.filter(function (y) { return y !== null; }).length; }, 0);
    box.dataset.points = String(points);
    box.dataset.scale = g.scale || "linear";
    if (g.title) box.querySelector("h3").textContent = g.title + (g.unit ? " (" + g.unit + ")" : "");
    if (!points) {
      why.textContent = g.empty || "No data in this range yet.";
      why.hidden = false;
      plot.hidden = true;
      return;
    }
    why.hidden = true;
    plot.hidden = false;
    const traces = g.traces.map(function (t) {
      return {name: t.name, x: t.x.map(function (s) { return new Date(s * 1000); }), y: t.y, type: "scatter",
              mode: t.x.length > 1 ? "lines" : "markers", line: {width: t.name === "total" ? 3 : 1.5}};
    });
    Plotly.react(plot, traces, {
      margin: {l: 55, r: 10, t: traces.length > 1 ? 28 : 5, b: 40}, showlegend: traces.length > 1,
      legend: {orientation: "h", x: 0, y: 1.02, yanchor: "bottom", font: {size: 11}},
      // a log axis when the points span too much for a linear one (see the graphs API's `scale`)
      yaxis: g.scale === "log" ? {type: "log", title: {text: (g.unit || "") + " (log scale)"}}
        : {rangemode: "tozero", title: {text: g.unit || ""}},
      xaxis: {type: "date"},
      paper_bgcolor: "rgba(0,0,0,0)", plot_bgcolor: "rgba(0,0,0,0)"
    }, {displayModeBar: false, responsive: true});
  }

  async function refreshGraphs() {
    const query = new URLSearchParams({range: range()});
    if (topicSelect.value) query.set("topic", topicSelect.value);
    const answer = await mp.request("GET", base + "graphs/?" + query.toString());
    const stamp = document.getElementById("graphs-updated");
    if (!answer.ok) {
      stamp.textContent = "graphs not updated: " + mp.errorText(answer.data);
      return;
    }
    Object.entries(answer.data.graphs).forEach(function ([key, g]) { drawGraph(key, g); });
    stamp.textContent = "updated " + new Date().toLocaleTimeString();
  }

  // -- migration readiness --------------------------------------------------------------------

  function yes(value, good, bad) { return mp.el("span", {class: value ? "ok" : "no", text: value ? good : bad}); }

  async function refreshReadiness() {
    const box = document.getElementById("readiness");
    const answer = await mp.request("GET", base + "readiness/");
    if (!answer.ok) {
      box.replaceChildren(mp.el("p", {class: "error", text: "readiness unavailable: " + mp.errorText(answer.data)}));
      return;
    }
    const r = answer.data;
    const topicRows = r.topics.map(function (t) {
      return mp.el("tr", {}, [mp.el("td", {text: t.topic}), mp.el("td", {text: t.remote_topic || "–"}),
        mp.el("td", {text: mp.number(t.lag_records, 0)}), mp.el("td", {}, [yes(t.caught_up, "caught up", "behind")])]);
    });
    const groupRows = r.groups.map(function (g) {
      return mp.el("tr", {}, [mp.el("td", {text: g.group}),
        mp.el("td", {text: (g.checkpointed_partitions || 0) + " / " + (g.partitions || 0)}),
        mp.el("td", {}, [yes(g.on_target, "on target", g.checkpointed ? "checkpointed only" : "not yet")]),
        mp.el("td", {class: "muted", text: g.note || ""})]);
    });
    box.replaceChildren(
      mp.el("p", {}, [mp.el("span", {class: "drained " + (r.drained ? "yes" : "not"), id: "drained",
                                     text: r.drained ? "Drained: safe to move the consumers" : "Not drained"}),
                      " ", mp.el("span", {class: "muted", text: r.summary || ""})]),
      mp.el("table", {class: "grid stack"}, [
        mp.el("caption", {class: "sr-only", text: "Topics"}),
        mp.el("thead", {}, [mp.el("tr", {}, ["Topic", "Remote topic", "Lag", "Target"].map(function (h) { return mp.el("th", {scope: "col", text: h}); }))]),
        mp.el("tbody", {}, topicRows.length ? topicRows : [mp.el("tr", {}, [mp.el("td", {colspan: 4, class: "empty", text: "No topic replicated yet."})])])
      ]),
      mp.el("table", {class: "grid stack", style: "margin-top:.8rem"}, [
        mp.el("caption", {class: "sr-only", text: "Consumer groups"}),
        mp.el("thead", {}, [mp.el("tr", {}, ["Group", "Checkpointed partitions", "Offsets", "Note"].map(function (h) { return mp.el("th", {scope: "col", text: h}); }))]),
        mp.el("tbody", {}, groupRows.length ? groupRows : [mp.el("tr", {}, [mp.el("td", {colspan: 4, class: "empty", text: "No consumer group to migrate yet."})])])
      ]));
  }

  // -- start ----------------------------------------------------------------------------------

  renderStatus(JSON.parse(document.getElementById("status-data").textContent));
  statusLoop();
  // A point every 2 s in the short ranges, one a minute or an hour in the long ones: refresh accordingly.
  const REFRESH_SECONDS = {"15m": 5, "1h": 5, "24h": 30, "7d": 60, "30d": 60};
  let stopGraphs = mp.every(REFRESH_SECONDS[range()] || 5, refreshGraphs);
  function restartGraphs() { stopGraphs(); stopGraphs = mp.every(REFRESH_SECONDS[range()] || 5, refreshGraphs); }
  document.querySelectorAll("input[name=range]").forEach(function (r) { r.addEventListener("change", restartGraphs); });
  topicSelect.addEventListener("change", restartGraphs);
  mp.every(10, refreshReadiness);
  mpEvents.follow(document.getElementById("events"), base + "events/?limit=50", 5);
})();
