/* Import: a Strimzi KafkaMirrorMaker2 resource or MM2 properties, previewed (dry run) then applied. */
"use strict";
(function () {
  const form = document.getElementById("import-form");
  const content = document.getElementById("f-content");
  const format = document.getElementById("f-format");
  const replace = document.getElementById("f-replace");
  const adopt = document.getElementById("f-adopt");
  const previewButton = document.getElementById("preview");
  const applyButton = document.getElementById("apply");
  const applyHint = document.getElementById("apply-hint");
  const valuesBox = document.getElementById("values");
  const valuesFields = document.getElementById("values-fields");
  const result = document.getElementById("result");
  const resultTitle = document.getElementById("result-title");
  const resultBody = document.getElementById("result-body");
  const supplied = {};  // "alias/field" -> typed value, kept across previews
  let ready = false;  // a preview of the current content succeeded

  function stale() {
    ready = false;
    applyButton.disabled = true;
    applyHint.textContent = "Preview first.";
  }
  [content, format, replace, adopt].forEach(function (field) {
    field.addEventListener("input", stale);
    field.addEventListener("change", stale);
  });

  document.getElementById("f-file").addEventListener("change", function (event) {
    const file = event.target.files[0];
    if (!file) return;
    const reader = new FileReader();
    reader.onload = function () {
      content.value = reader.result;
      if (/\.properties$/i.test(file.name)) format.value = "properties";
      else if (/\.ya?ml$/i.test(file.name)) format.value = "strimzi";
      stale();
    };
    reader.onerror = function () { mpForms.showErrors(form, {content: ["cannot read " + file.name]}, null); };
    reader.readAsText(file);
  });

  function values() {
    const out = {};
    Object.entries(supplied).forEach(function ([key, value]) {
      if (!value) return;
      const [alias, field] = key.split("/");
      (out[alias] = out[alias] || {})[field] = value;
    });
    return out;
  }

  function request(dryRun) {
    const query = new URLSearchParams();
    if (dryRun) query.set("dry_run", "true");
    if (replace.checked) query.set("replace", "true");
    if (adopt.checked) query.set("adopt", "true");
    const body = {content: content.value, values: values()};
    if (format.value) body.format = format.value;
    return mp.request("POST", "/api/v1/import/" + (query.toString() ? "?" + query : ""), body);
  }

  // -- values the file only refers to -------------------------------------------------------------
  function renderNeeds(needs) {
    valuesFields.replaceChildren(...needs.map(function (need, index) {
      const key = need.cluster + "/" + need.field;
      const id = "v-" + index;
      const secret = need.field === "password" || need.field === "key_pem";
      const multiline = /_pem$/.test(need.field);
      const attributes = {id: id, "aria-describedby": id + "-why", autocomplete: secret ? "new-password" : "off",
                          spellcheck: "false", oninput: function (event) { supplied[key] = event.target.value; }};
      const input = multiline ? mp.el("textarea", Object.assign({rows: "3"}, attributes))
        : mp.el("input", Object.assign({type: secret ? "password" : "text"}, attributes));
      input.value = supplied[key] || "";
      return mp.el("div", {class: "field"}, [
        mp.el("label", {for: id, text: need.cluster + ": " + need.field}),
        input,
        mp.el("small", {id: id + "-why", text: need.reason + (need.secret ? " (" + need.secret + ")" : "")})]);
    }));
    valuesBox.hidden = needs.length === 0;
  }

  // -- the report ---------------------------------------------------------------------------------
  function list(items, render) {
    return mp.el("ul", {class: "report-list"}, items.map(function (item) { return mp.el("li", {}, render(item)); }));
  }

  function section(title, children) {
    return mp.el("section", {class: "report"}, [mp.el("h3", {text: title}), ...children]);
  }

  function actionOf(data, kind, name) {
    if ((data.created[kind] || []).includes(name)) return data.dry_run ? "would be created" : "created";
    if ((data.updated[kind] || []).includes(name)) return data.dry_run ? "would be updated" : "updated";
    if (((data.reused || {})[kind] || []).includes(name)) return "exists already, reused";
    return "";
  }

  function connectorsText(connectors) {
    return ["source", "checkpoint", "heartbeat"].map(function (kind) {
      const c = (connectors || {})[kind];
      if (!c) return kind + ": defaults";
      const parts = [c.state || "running"];
      if (c.tasks_max) parts.push(c.tasks_max + " task" + (c.tasks_max === 1 ? "" : "s"));
      const properties = Object.keys(c.config || {}).length;
      if (properties) parts.push(properties + " propert" + (properties === 1 ? "y" : "ies"));
      return kind + ": " + parts.join(", ");
    }).join("; ");
  }

  function headline(data) {
    const count = function (n, what) { return n + " " + what + (n === 1 ? "" : "s"); };
    const made = count(data.created.clusters.length, "cluster") + " and " + count(data.created.mirrors.length, "mirror");
    const changed = data.updated.clusters.length + data.updated.mirrors.length;
    let text = (data.dry_run ? "Would create " : "Created ") + made;
    if (changed) text += (data.dry_run ? "; would update " : "; updated ") + changed;
    if ((data.reused.clusters || []).length) text += "; " + count(data.reused.clusters.length, "cluster") + " reused";
    return text + ".";
  }

  function adoptedTable(flow) {
    const caption = flow.mirror + ": MM2's offsets in " + flow.offsets_topic + " on " + flow.offsets_cluster +
      " (" + flow.adopted + " adopted, " + flow.fallback + " without a committed offset)";
    return mp.el("table", {class: "grid labelled"}, [
      mp.el("caption", {text: caption}),
      mp.el("thead", {}, [mp.el("tr", {}, ["Topic", "Partition", "Starts at", "From"].map(function (h) {
        return mp.el("th", {scope: "col", text: h});
      }))]),
      mp.el("tbody", {}, flow.partitions.map(function (p) {
        const from = p.start === null ? p.note : "MM2 committed " + p.committed + "; remote end " + p.remote_end;
        return mp.el("tr", {}, [
          mp.el("td", {"data-label": "Topic"}, [mp.el("code", {text: p.topic})]),
          mp.el("td", {"data-label": "Partition", text: String(p.partition)}),
          mp.el("td", {"data-label": "Starts at", text: p.start === null ? "–" : String(p.start)}),
          mp.el("td", {"data-label": "From", class: "wrap", text: from})]);
      }))]);
  }

  function renderReport(data) {
    resultTitle.textContent = data.dry_run ? "Preview (nothing saved yet)" : "Imported";
    const parts = [mp.el("p", {class: "headline", text: headline(data)})];
    if (data.clusters.length) {
      parts.push(section("Clusters", [mp.el("table", {class: "grid labelled"}, [
        mp.el("thead", {}, [mp.el("tr", {}, ["Alias", "Bootstrap servers", "Security", ""].map(function (h) {
          return mp.el("th", {scope: "col"}, h ? [h] : [mp.el("span", {class: "sr-only", text: "Result"})]);
        }))]),
        mp.el("tbody", {}, data.clusters.map(function (c) {
          return mp.el("tr", {}, [
            mp.el("th", {scope: "row", "data-label": "Alias", text: c.alias}),
            mp.el("td", {"data-label": "Bootstrap servers", class: "wrap"}, [mp.el("code", {text: c.bootstrap_servers || "–"})]),
            mp.el("td", {"data-label": "Security", text: (c.security_protocol || "PLAINTEXT") +
                                                          (c.sasl_mechanism ? " " + c.sasl_mechanism : "")}),
            mp.el("td", {"data-label": "Result", text: actionOf(data, "clusters", c.alias)})]);
        }))])]));
    }
    if (data.mirrors.length) {
      parts.push(section("Mirrors", [mp.el("table", {class: "grid labelled"}, [
        mp.el("thead", {}, [mp.el("tr", {}, ["Mirror", "Flow", "Topics", "Connectors", ""].map(function (h) {
          return mp.el("th", {scope: "col"}, h ? [h] : [mp.el("span", {class: "sr-only", text: "Result"})]);
        }))]),
        mp.el("tbody", {}, data.mirrors.map(function (m) {
          const action = actionOf(data, "mirrors", m.name);
          const name = data.dry_run ? m.name : mp.el("a", {href: "/mirrors/" + encodeURIComponent(m.name) + "/", text: m.name});
          return mp.el("tr", {}, [
            mp.el("th", {scope: "row", "data-label": "Mirror"}, [name]),
            mp.el("td", {"data-label": "Flow", text: m.source + " → " + m.target}),
            mp.el("td", {"data-label": "Topics", class: "wrap"}, [mp.el("code", {text: m.topics || ".*"}),
              m.topics_exclude ? mp.el("small", {text: " except " + m.topics_exclude}) : null]),
            mp.el("td", {"data-label": "Connectors", text: connectorsText(m.connectors)}),
            mp.el("td", {"data-label": "Result", text: action})]);
        }))])]));
    }
    if (data.adopted) parts.push(section("Where each adopted mirror starts", data.adopted.map(adoptedTable)));
    if (data.needs_values.length) {
      parts.push(section("Values still needed", [list(data.needs_values, function (n) {
        return [mp.el("strong", {text: n.cluster + ": " + n.field}), " — " + n.reason];
      }), mp.el("p", {class: "hint", text: "Fill them in above the Import button, or later on the cluster's edit page."})]));
    }
    if (data.warnings.length) {
      parts.push(section("Warnings", [list(data.warnings, function (w) { return [w]; })]));
    }
    if ((data.ignored || []).length) {
      parts.push(section("Other resources in the file (ignored)", [list(data.ignored, function (r) {
        return [mp.el("strong", {text: r.kind}), " " + (r.name || "(no name)")];
      })]));
    }
    if (data.unsupported.length) {
      parts.push(section("Not imported (no Mirrorplane meaning)", [list(data.unsupported, function (u) {
        return [mp.el("code", {text: u.path}), " — " + u.reason];
      })]));
    }
    resultBody.replaceChildren(...parts);
    renderNeeds(data.dry_run ? data.needs_values : []);
  }

  function renderErrors(title, errors, hint) {
    resultTitle.textContent = title;
    const items = mpForms.flatten(errors, "");
    resultBody.replaceChildren(
      mp.el("ul", {class: "report-list errors"}, items.map(function ([path, message]) {
        const named = path && path !== "detail";
        return mp.el("li", {}, [named ? mp.el("code", {text: path}) : null, named ? ": " : null, message]);
      })),
      hint ? mp.el("p", {class: "hint", text: hint}) : null);
    mpForms.showErrors(form, {content: errors.content || []}, null);
  }

  function show() {
    result.hidden = false;
    result.focus();
  }

  async function run(dryRun, button) {
    mpForms.clearErrors(form);
    if (!content.value.trim()) {
      mpForms.showErrors(form, {content: ["paste a configuration or upload a file first"]}, null);
      content.focus();
      return;
    }
    previewButton.disabled = applyButton.disabled = true;
    button.setAttribute("aria-busy", "true");
    try {
      const answer = await request(dryRun);
      if (answer.ok) {
        renderReport(answer.data);
        ready = dryRun;
        applyHint.textContent = dryRun ? "Creates what the preview shows." : "Done: preview again to import more.";
      } else if (answer.status === 409) {
        stale();
        const adoptOnly = Object.keys(answer.data).every(function (key) { return key.startsWith("adopt."); });
        renderErrors("Conflicts", answer.data, adoptOnly ? "Nothing was imported: MM2 must have committed offsets " +
          "of the flow; untick “Adopt” to import without them."
          : "Tick “Replace” to update them, or rename them in the file.");
      } else if (answer.status === 400) {
        stale();
        renderErrors("Errors", answer.data, "Nothing was imported.");
      } else {
        stale();
        renderErrors("Error", {detail: [mp.errorText(answer.data)]});
      }
      show();
    } finally {
      previewButton.disabled = false;
      applyButton.disabled = !ready;
      button.removeAttribute("aria-busy");
    }
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    run(true, previewButton);
  });
  applyButton.addEventListener("click", function () { run(false, applyButton); });
})();
