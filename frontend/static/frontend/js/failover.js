/* Failover and failback of one mirror: readiness, a confirm step before each verb, the per-group result. */
"use strict";
(function () {
  const root = document.getElementById("failover");
  const mirror = root.dataset.mirror;
  const source = root.dataset.source;
  const target = root.dataset.target;
  const base = "/api/v1/mirrors/" + encodeURIComponent(mirror) + "/";
  const form = document.getElementById("failover-form");
  const failbackButton = document.getElementById("failback-button");
  const loop = document.getElementById("loop");
  let busy = false;
  let current = null;  // the failover as the API last showed it

  function value(id, fallback) {
    const input = document.getElementById(id);
    return input && input.value ? Number(input.value) : fallback;
  }

  function yes(ok, good, bad) { return mp.el("span", {class: ok ? "ok" : "no", text: ok ? good : bad}); }

  function table(caption, head, rows) {
    return mp.el("table", {class: "grid"}, [
      mp.el("caption", {class: "sr-only", text: caption}),
      mp.el("thead", {}, [mp.el("tr", {}, head.map(function (h) { return mp.el("th", {scope: "col", text: h}); }))]),
      mp.el("tbody", {}, rows)]);
  }

  // -- 1. readiness ---------------------------------------------------------------------------

  async function refreshReadiness() {
    const box = document.getElementById("readiness");
    const answer = await mp.request("GET", base + "readiness/?idle_seconds=" + value("idle-seconds", 30));
    if (!answer.ok) {
      box.replaceChildren(mp.el("p", {class: "error", text: "readiness unavailable: " + mp.errorText(answer.data)}));
      return;
    }
    const r = answer.data;
    const caught = r.topics.filter(function (t) { return t.caught_up; }).length;
    const onTarget = r.groups.filter(function (g) { return g.on_target; }).length;
    box.replaceChildren(...[
      mp.el("p", {}, [mp.el("span", {id: "drained", class: "drained " + (r.drained ? "yes" : "not"),
                                     text: r.drained ? "Drained" : "Not drained"})]),
      mp.el("ul", {class: "facts", id: "readiness-figures"}, [
        mp.el("li", {id: "caught-up", text: "topics caught up: " + caught + " of " + r.topics.length}),
        mp.el("li", {id: "groups-drained", text: "groups on " + target + ": " + onTarget + " of " + r.groups.length}),
        mp.el("li", {text: "source idle: " + (r.source_idle_seconds === null ? "–" : mp.number(r.source_idle_seconds) + " s")})]),
      mp.el("p", {class: "muted", id: "readiness-summary", text: r.summary}),
      r.topics.length ? table("Topics", ["Topic", "Remote topic", "Lag (records)", ""], r.topics.map(function (t) {
        return mp.el("tr", {}, [mp.el("td", {text: t.topic}), mp.el("td", {text: t.remote_topic || "–"}),
          mp.el("td", {text: mp.number(t.lag_records, 0)}), mp.el("td", {}, [yes(t.caught_up, "caught up", "behind")])]);
      })) : null,
      r.groups.length ? table("Consumer groups", ["Group", "Checkpointed", "On " + target, "Note"], r.groups.map(function (g) {
        return mp.el("tr", {}, [mp.el("td", {text: g.group}),
          mp.el("td", {text: g.checkpointed_partitions + " of " + g.partitions}),
          mp.el("td", {}, [yes(g.on_target, "yes", "not yet")]), mp.el("td", {text: g.note || ""})]);
      })) : null].filter(Boolean));
  }

  // -- results ------------------------------------------------------------------------------

  function groupsTable(groups, direction) {
    const rows = [];
    groups.filter(function (g) { return g.direction === direction; }).forEach(function (g) {
      const offsets = g.offsets.length ? g.offsets : [null];
      offsets.forEach(function (o, i) {
        rows.push(mp.el("tr", {"data-group": g.group, "data-status": g.status}, [
          mp.el("td", {text: i === 0 ? g.group : ""}),
          mp.el("td", {}, i === 0 ? [mp.el("span", {class: "state state-" + (g.status === "synced" ? "running" : "paused"), text: g.status})] : []),
          mp.el("td", {text: o ? o.topic + "-" + o.partition : "–"}),
          mp.el("td", {text: o ? o.to_topic : "–"}),
          mp.el("td", {text: o ? mp.number(o.committed_offset, 0) : "–"}),
          mp.el("td", {class: "start-offset", text: o ? mp.number(o.offset, 0) : "–"}),
          mp.el("td", {text: o ? mp.number(o.reprocess, 0) : "–"}),
          mp.el("td", {text: (o && o.note) || (i === 0 ? g.note || "" : "")})]));
      });
    });
    if (!rows.length) return mp.el("p", {class: "empty", text: "No consumer group to move."});
    const to = direction === "forward" ? target : source;
    return table("Consumer groups on " + to, ["Group", "Status", "From", "To topic", "Committed offset",
                                             "Starts on " + to + " at", "Read again", "Note"], rows);
  }

  function showState(state) {
    current = state;
    const phase = document.getElementById("phase");
    const pending = state ? state.pending : [];
    if (!state) {
      phase.textContent = "Not failed over.";
    } else {
      phase.textContent = "Failed over on " + new Date(state.failed_over_at).toLocaleString() +
        (state.forced ? " (forced)" : " (drained)") +
        (state.failed_back_at ? ", failed back on " + new Date(state.failed_back_at).toLocaleString() : "") +
        "; source connector " + state.source_connector +
        (pending.length ? "; waiting for groups with members on " + target + ": " + pending.join(", ") : "");
      document.getElementById("failover-result").replaceChildren(groupsTable(state.groups, "forward"));
      if (state.phase === "failed_back") {
        const back = state.pending_back.length ? "waiting for: " + state.pending_back.join(", ") : "every group is back";
        const box = document.getElementById("failback-result");
        box.replaceChildren(
          mp.el("p", {id: "reverse-link"}, ["Reverse mirror ",
            mp.el("a", {href: "/mirrors/" + encodeURIComponent(state.reverse_mirror.name) + "/",
                        text: state.reverse_mirror.name}),
            " (" + target + " → " + source + (state.reverse_mirror.application ?
              ", application " + state.reverse_mirror.application : "") + ")"]),
          mp.el("p", {class: "muted", id: "back-pending", text: "Groups on " + source + ": " + back}),
          groupsTable(state.groups, "back"));
      }
    }
    // A completed cycle (failed back, this mirror's source connector stopped): neither verb applies until
    // the operator resumes the mirror; say so instead of offering buttons the API would refuse.
    const cycleDone = Boolean(state) && state.phase === "failed_back" && state.source_connector === "stopped";
    const next = document.getElementById("cycle-done");
    if (next) next.hidden = !cycleDone;
    if (form) {
      const failedOver = state && state.phase === "failed_over";
      form.querySelector("button").disabled = busy || failedOver || cycleDone;
    }
    if (failbackButton) {
      // Failing back again only resumes the reverse mirror: offered while one of its connectors is held.
      const reverse = state && state.reverse_mirror ? Object.values(state.reverse_mirror.connectors || {}) : [];
      const reverseRunning = reverse.length > 0 && reverse.every((desired) => desired === "running");
      failbackButton.disabled = busy || !state || Boolean(loop) || (state.phase === "failed_back" && reverseRunning);
    }
  }

  async function refreshState() {
    if (busy) return;
    const answer = await mp.request("GET", base + "failover/");
    if (answer.status === 404) showState(null);
    else if (answer.ok) showState(answer.data);
  }

  // -- verbs, each after a confirm step -----------------------------------------------------------

  function confirm(title, text, ok, then) {
    const dialog = document.getElementById("confirm");
    document.getElementById("confirm-title").textContent = title;
    document.getElementById("confirm-text").textContent = text;
    document.getElementById("confirm-ok").textContent = ok;
    dialog.returnValue = "";
    dialog.onclose = function () { if (dialog.returnValue === "ok") then(); };
    dialog.showModal();
  }

  async function run(path, body, resultBox, waiting) {
    busy = true;
    showState(current);
    document.getElementById(resultBox).replaceChildren(mp.el("p", {class: "muted", text: waiting}));
    const answer = await mp.request("POST", base + path, body);
    busy = false;
    if (!answer.ok) {
      document.getElementById(resultBox).replaceChildren(
        mp.el("p", {class: "error", role: "alert", id: resultBox + "-error", text: mp.errorText(answer.data)}));
      mp.announce(mp.errorText(answer.data), "error");
      await refreshState();
      return null;
    }
    showState(answer.data);
    return answer.data;
  }

  if (form) {
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      const force = document.getElementById("force").checked;
      const timeout = value("timeout", 60);
      confirm("Fail over to " + target + "?",
        "The source connector of " + mirror + " is stopped " +
        (force ? "at once, whether or not " + source + " is drained" : "once " + source + " is drained (waiting up to " + timeout + " s)") +
        ", and every consumer group's translated offsets are committed on " + target +
        ". Stop the consumers on " + source + " first; move the producers once it is done.", "Fail over",
        async function () {
          const data = await run("failover/", {force: force, timeout: timeout, idle_seconds: value("idle-seconds", 30)},
                                 "failover-result", force ? "Failing over…" : "Waiting for the source to drain, then failing over…");
          if (data) mp.announce("Failed over to " + target + ": " + data.groups.length + " groups", "info");
        });
    });
  }

  if (failbackButton) {
    failbackButton.addEventListener("click", function () {
      confirm("Fail back to " + source + "?",
        "The reverse mirror " + root.dataset.reverse + " (" + target + " → " + source + ") is created or resumed, " +
        "so that what producers wrote on " + target + " reaches " + source + "; each consumer group returns to " +
        source + " once it has no member on " + target + ".", "Fail back",
        async function () {
          const data = await run("failback/", undefined, "failback-result", "Failing back…");
          if (data) {
            const r = data.reverse_mirror;
            mp.announce("Reverse mirror " + r.name + (r.created ? " created" : " resumed"), "info");
          }
        });
    });
  }

  mp.every(5, refreshReadiness);
  mp.every(3, refreshState);
})();
