/* Mirrors: the list kept live from /api/v1/overview/ every 5 s; the create/edit form with its live
   topic preview (POST /api/v1/mirrors/preview/) and the API's field errors. */
"use strict";
(function () {
  const KINDS = ["source", "checkpoint", "heartbeat"];

  // -- the list ---------------------------------------------------------------------------------
  const table = document.getElementById("mirrors");
  if (table) {
    const body = table.tBodies[0];
    const canEdit = table.dataset.canEdit === "true";
    const updated = document.getElementById("updated");
    const failure = document.getElementById("refresh-error");
    const empty = document.getElementById("no-mirrors");

    const cells = {
      health: function (m) {
        return [mp.el("span", {class: "health health-" + m.health, title: m.reason || null, text: m.health})];
      },
      application: function (m) { return [m.application || "–"]; },
      link: function (m) {
        const state = m.link || "unknown";
        return [mp.el("span", {class: "link link-" + state, text: state}), " ",
                m.latency_ms === null || m.latency_ms === undefined ? null
                  : mp.el("small", {text: mp.number(m.latency_ms, 0) + " ms"})];
      },
      lag: function (m) {
        if (m.lag_records === null || m.lag_records === undefined) return ["–"];
        return [String(m.lag_records) + " records ", mp.el("small", {text: mp.number(m.lag_seconds) + " s"})];
      }
    };
    KINDS.forEach(function (kind) {
      cells[kind] = function (m) {
        const c = (m.connectors || {})[kind];
        if (!c) return ["–"];
        return [mp.el("span", {class: "state state-" + String(c.state).toLowerCase(), title: c.error || null, text: c.state}),
                " ", mp.el("small", {text: c.tasks + " task" + (c.tasks === 1 ? "" : "s")})];
      };
    });

    function newRow(m) {
      const link = mp.el("a", {href: m.url || "/mirrors/" + encodeURIComponent(m.name) + "/", text: m.name});
      const row = mp.el("tr", {"data-name": m.name}, [
        mp.el("th", {scope: "row", "data-label": "Mirror"}, [link]),
        mp.el("td", {"data-label": "Flow", "data-cell": "flow"}),
        ...["health", "application", ...KINDS, "link", "lag"].map(function (key) {
          return mp.el("td", {"data-label": key.charAt(0).toUpperCase() + key.slice(1), "data-cell": key});
        })
      ]);
      if (canEdit) {
        row.append(mp.el("td", {"data-label": "Actions"}, [mp.el("a", {
          class: "button small", href: "/mirrors/" + encodeURIComponent(m.name) + "/edit/",
          "aria-label": "Edit mirror " + m.name, text: "Edit"})]));
      }
      return row;
    }

    function fill(row, m) {
      row.querySelector('[data-cell="flow"]').textContent = m.source + " → " + m.target;
      Object.entries(cells).forEach(function ([key, render]) {
        const cell = row.querySelector('[data-cell="' + key + '"]');
        const next = mp.el("td", {}, render(m));
        if (cell.innerHTML !== next.innerHTML) cell.replaceChildren(...next.childNodes);
      });
    }

    function render(data) {
      const mirrors = data.mirrors || [];
      const rows = new Map(Array.from(body.rows).map(function (row) { return [row.dataset.name, row]; }));
      mirrors.forEach(function (m, index) {
        const row = rows.get(m.name) || newRow(m);
        rows.delete(m.name);
        fill(row, m);
        if (body.rows[index] !== row) body.insertBefore(row, body.rows[index] || null);
      });
      rows.forEach(function (row) { row.remove(); });
      table.hidden = mirrors.length === 0;
      empty.hidden = mirrors.length > 0;
    }

    let first = true;
    mp.every(5, async function () {
      if (first) { first = false; updated.textContent = "live, every 5 s"; return; }  // rendered just now
      const answer = await mp.request("GET", "/api/v1/overview/");
      if (!answer.ok) {
        failure.textContent = "Could not refresh: " + mp.errorText(answer.data);
        failure.hidden = false;
        return;
      }
      failure.hidden = true;
      render(answer.data);
      updated.textContent = "updated " + new Date().toLocaleTimeString();
    });
  }

  // -- the form ---------------------------------------------------------------------------------
  const form = document.getElementById("mirror-form");
  if (!form) return;
  const editing = form.dataset.editing === "true";
  const summary = document.getElementById("form-errors");
  const value = function (name) { return form.elements[name].value; };

  function integer(text) {
    const trimmed = String(text).trim();
    return /^-?\d+$/.test(trimmed) ? Number(trimmed) : trimmed;
  }

  /* The API body, and the errors found before sending it (same shape as the API's). */
  function payload() {
    const errors = {};
    const data = {};
    ["source", "target", "topics", "topics_exclude", "groups", "groups_exclude", "replication_policy", "separator"]
      .forEach(function (name) { data[name] = value(name); });
    if (!editing) data.name = value("name").trim();
    if (!data.name && !editing) errors.name = ["give the mirror a name"];
    if (!data.source) errors.source = ["choose the cluster to copy from"];
    if (!data.target) errors.target = ["choose the cluster to copy to"];
    data.connectors = {};
    form.querySelectorAll("fieldset[data-kind]").forEach(function (fieldset) {
      const kind = fieldset.dataset.kind;
      const spec = {config: {}};
      const tasks = fieldset.querySelector("[data-tasks-max]");
      if (tasks) spec.tasks_max = integer(tasks.value);
      const other = mpForms.parseProperties(fieldset.querySelector("[data-other]").value);
      const configErrors = other.errors.slice();
      fieldset.querySelectorAll("[data-property]").forEach(function (field) {
        const text = field.value.trim();
        if (!text) return;
        if (field.dataset.property in other.config) {
          configErrors.push(field.dataset.property + ": set it in its own field above, not in other properties");
        }
        spec.config[field.dataset.property] = text;
      });
      spec.config = Object.assign({}, other.config, spec.config);
      const limit = fieldset.querySelector("[data-max-restarts]").value;
      spec.auto_restart = {enabled: fieldset.querySelector("[data-auto-restart]").checked,
                           max_restarts: limit.trim() === "" ? null : integer(limit)};
      if (configErrors.length) errors.connectors = Object.assign(errors.connectors || {}, {[kind]: {config: configErrors}});
      data.connectors[kind] = spec;
    });
    // spark: the stored resources as they were, with the properties of the textarea
    const spark = JSON.parse(document.getElementById("mirror-spark").textContent || "{}");
    const sparkConf = mpForms.parseProperties(form.querySelector("[data-spark-conf]").value);
    if (sparkConf.errors.length) errors.spark = {conf: sparkConf.errors};
    if (Object.keys(sparkConf.config).length || "conf" in spark) spark.conf = sparkConf.config;
    data.spark = spark;
    return {data: data, errors: Object.keys(errors).length ? errors : null};
  }

  // live topic preview
  const status = document.getElementById("preview-status");
  const previewArea = document.getElementById("preview-body");
  let sequence = 0;

  function previewTable(result) {
    const target = result.target || "the target";
    return mp.el("div", {class: "scroll", tabindex: "0", role: "region", "aria-label": "Matching topics"}, [
      mp.el("table", {class: "grid compact"}, [
        mp.el("caption", {class: "sr-only", text: "Topics that would be replicated, with their names on " + target}),
        mp.el("thead", {}, [mp.el("tr", {}, [
          mp.el("th", {scope: "col", text: "Topic on " + result.source}),
          mp.el("th", {scope: "col", text: "Remote topic on " + target}),
          mp.el("th", {scope: "col", class: "num", text: "Partitions"})])]),
        mp.el("tbody", {}, result.topics.map(function (t) {
          return mp.el("tr", {}, [mp.el("td", {text: t.topic}), mp.el("td", {}, [mp.el("code", {text: t.remote_topic})]),
                                  mp.el("td", {class: "num", text: String(t.partitions)})]);
        }))])]);
  }

  function renderPreview(result) {
    const left = result.total - result.matched;
    status.className = "";
    status.textContent = result.matched + " of " + result.total + " topic" + (result.total === 1 ? "" : "s") + " on " +
      result.source + (result.matched === 1 ? " matches" : " match") + (result.target ? " (→ " + result.target + ")" : "") + ".";
    const parts = [];
    if (result.topics.length) parts.push(previewTable(result));
    else parts.push(mp.el("p", {class: "empty", text: "No topic matches yet: new topics that match will be picked up."}));
    if (left) {
      parts.push(mp.el("details", {class: "excluded"}, [
        mp.el("summary", {text: left + " topic" + (left === 1 ? "" : "s") + " left out"}),
        mp.el("ul", {}, result.excluded.map(function (t) {
          return mp.el("li", {}, [mp.el("code", {text: t.topic}), mp.el("span", {class: "muted", text: " — " + t.reason})]);
        }))]));
    }
    if (result.truncated) parts.push(mp.el("p", {class: "muted", text: "Showing the first " + result.limit + " of each list."}));
    previewArea.replaceChildren(...parts);
  }

  let lastAsked = null;  // the body of the newest preview request: the same fields are not asked twice
  let previewErrors = [];  // the fields whose errors the preview placed (a save's errors stay)

  function previewRequest() {
    return {source: value("source"), target: value("target") || null, topics: value("topics"),
            topics_exclude: value("topics_exclude"), replication_policy: value("replication_policy"),
            separator: value("separator")};
  }

  async function preview() {
    const asked = previewRequest();
    if (JSON.stringify(asked) === lastAsked) return;
    lastAsked = JSON.stringify(asked);
    const mine = ++sequence;
    mpForms.clearErrors(form, previewErrors);
    previewErrors = [];
    if (!asked.source) {
      status.className = "muted";
      status.textContent = "Choose a source cluster to see which of its topics match.";
      previewArea.replaceChildren();
      return;
    }
    status.className = "muted";
    status.textContent = "Listing the topics of " + asked.source + "…";
    const answer = await mp.request("POST", "/api/v1/mirrors/preview/", asked);
    if (mine !== sequence) return;  // a newer preview is on its way
    if (answer.ok) { renderPreview(answer.data); return; }
    previewArea.replaceChildren();
    status.className = "error";
    if (answer.status === 400) {
      previewErrors = Object.keys(answer.data);
      mpForms.showErrors(form, answer.data, null);
      status.textContent = "Fix the highlighted " + (previewErrors.length === 1 ? "field" : "fields") +
        " to see the preview.";
    } else {
      lastAsked = null;  // worth asking again (the cluster may be back)
      status.textContent = mp.errorText(answer.data);
    }
  }

  const schedule = mpForms.debounce(preview, 400);
  form.querySelectorAll("[data-preview]").forEach(function (field) {
    field.addEventListener("input", schedule);
    field.addEventListener("change", schedule);
  });
  if (value("source")) preview();

  // submit
  const saveButton = document.getElementById("save");
  const saveStatus = document.getElementById("save-status");
  async function save() {
    mpForms.clearErrors(form);
    mpForms.hideSummary(summary);
    const built = payload();
    if (built.errors) { mpForms.showErrors(form, built.errors, summary); return; }
    saveStatus.textContent = "Saving…";
    const name = editing ? form.dataset.name : built.data.name;
    const answer = editing
      ? await mp.request("PATCH", "/api/v1/mirrors/" + encodeURIComponent(name) + "/", built.data)
      : await mp.request("POST", "/api/v1/mirrors/", built.data);
    saveStatus.textContent = "";
    if (answer.ok) { window.location.assign("/mirrors/" + encodeURIComponent(answer.data.name || name) + "/"); return; }
    mpForms.showErrors(form, answer.status === 400 ? answer.data : {detail: mp.errorText(answer.data)}, summary);
  }
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    mpForms.busy(saveButton, save);
  });
})();
