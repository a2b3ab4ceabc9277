/* Clusters: reachability of each listed cluster, checked from the page; the add/edit form with its
   connection check before saving. */
"use strict";
(function () {
  function describe(result) {
    if (result.reachable) {
      const brokers = result.brokers === null || result.brokers === undefined ? "?" : result.brokers;
      return "reachable, " + brokers + " broker" + (result.brokers === 1 ? "" : "s");
    }
    return result.error || "unreachable";
  }

  async function check(url, body) {
    const answer = await mp.request("POST", url, body);
    if (answer.ok) return {ok: true, result: answer.data};
    return {ok: false, status: answer.status, data: answer.data};
  }

  // -- the list: one check per cluster, a few at a time ------------------------------------------
  const table = document.getElementById("clusters");
  if (table && table.dataset.check === "true") {
    const rows = Array.from(table.querySelectorAll("tbody tr[data-alias]"));

    async function checkRow(row) {
      const cell = row.querySelector(".reach");
      cell.replaceChildren(mp.el("span", {class: "checking", text: "checking…"}));
      const alias = row.dataset.alias;
      const answer = await check("/api/v1/clusters/" + encodeURIComponent(alias) + "/check/");
      if (!answer.ok) {
        cell.replaceChildren(mp.el("span", {class: "error", text: "check failed: " + mp.errorText(answer.data)}));
      } else if (answer.result.reachable) {
        cell.replaceChildren(mp.el("span", {class: "reachable", text: describe(answer.result),
          title: answer.result.cluster_id ? "cluster id " + answer.result.cluster_id : null}));
      } else {
        cell.replaceChildren(mp.el("span", {class: "unreachable", text: "unreachable"}), " ",
                             mp.el("span", {class: "reason", text: describe(answer.result)}));
      }
    }

    async function checkAll() {
      const queue = rows.slice();
      const workers = Array.from({length: Math.min(4, queue.length)}, async function () {
        while (queue.length) await checkRow(queue.shift());
      });
      await Promise.all(workers);
    }

    checkAll();
    const again = document.getElementById("recheck");
    if (again) again.addEventListener("click", function () { mpForms.busy(again, checkAll); });
  }

  // -- the form ---------------------------------------------------------------------------------
  const form = document.getElementById("cluster-form");
  if (!form) return;
  const editing = form.dataset.editing === "true";
  const summary = document.getElementById("form-errors");
  const resultBox = document.getElementById("check-result");
  const protocol = form.elements.security_protocol;

  function showSections() {
    const value = protocol.value;
    document.getElementById("sasl").hidden = !value.startsWith("SASL");
    document.getElementById("tls").hidden = !value.endsWith("SSL");
  }
  protocol.addEventListener("change", showSections);
  showSections();

  /* The API body: what the visible sections say. Empty secret fields are left out (the stored value
     is kept) unless "remove" is ticked; sections the protocol does not use are cleared. */
  function body() {
    const value = function (name) { return form.elements[name].value; };
    const sasl = protocol.value.startsWith("SASL");
    const tls = protocol.value.endsWith("SSL");
    const data = {alias: value("alias").trim(), bootstrap_servers: value("bootstrap_servers").trim(),
                  security_protocol: protocol.value, sasl_mechanism: sasl ? value("sasl_mechanism") : "",
                  username: sasl ? value("username").trim() : "", ca_pem: tls ? value("ca_pem") : "",
                  cert_pem: tls ? value("cert_pem") : ""};
    form.querySelectorAll("[data-secret]").forEach(function (field) {
      const name = field.dataset.secret;
      const used = name === "password" ? sasl : tls;
      const clear = form.querySelector('[data-clears="' + name + '"]');
      if (!used || (clear && clear.checked)) {
        if (field.dataset.stored === "true") data[name] = "";
      } else if (field.value) {
        data[name] = field.value;
      }
    });
    const parsed = mpForms.parseProperties(value("config"));
    data.config = parsed.config;
    return {data: data, errors: parsed.errors.length ? {config: parsed.errors} : null};
  }

  function reset() {
    mpForms.clearErrors(form);
    mpForms.hideSummary(summary);
  }

  /* Runs the unsaved check; shows the result. Returns the result, or null after a 400. */
  async function testConnection() {
    reset();
    const built = body();
    if (built.errors) { mpForms.showErrors(form, built.errors, summary); return null; }
    resultBox.className = "check-result";
    resultBox.replaceChildren(mp.el("span", {class: "checking", text: "checking the connection…"}));
    const answer = await check("/api/v1/clusters/check/", built.data);
    if (!answer.ok) {
      resultBox.replaceChildren();
      if (answer.status === 400) mpForms.showErrors(form, answer.data, summary);
      else resultBox.replaceChildren(mp.el("span", {class: "error", text: "check failed: " + mp.errorText(answer.data)}));
      return null;
    }
    const result = answer.result;
    resultBox.className = "check-result " + (result.reachable ? "is-ok" : "is-bad");
    resultBox.replaceChildren(
      mp.el("strong", {text: result.reachable ? "Reachable" : "Unreachable"}), " ",
      mp.el("span", {text: result.reachable
        ? describe(result).replace(/^reachable, /, "") + (result.controller != null ? ", controller " + result.controller : "") +
          (result.cluster_id ? ", cluster id " + result.cluster_id : "")
        : describe(result)}));
    return result;
  }

  function confirmSave(error) {
    const dialog = document.getElementById("confirm");
    document.getElementById("confirm-text").textContent = error;
    return new Promise(function (resolve) {
      dialog.addEventListener("close", function () { resolve(dialog.returnValue === "ok"); }, {once: true});
      dialog.showModal();
    });
  }

  async function save() {
    const result = await testConnection();
    if (result === null) return;
    if (!result.reachable && !(await confirmSave(describe(result)))) return;
    const built = body();
    const url = editing ? "/api/v1/clusters/" + encodeURIComponent(form.dataset.alias) + "/" : "/api/v1/clusters/";
    const answer = await mp.request(editing ? "PATCH" : "POST", url, built.data);
    if (answer.ok) { window.location.assign(form.dataset.after); return; }
    if (answer.status === 400) mpForms.showErrors(form, answer.data, summary);
    else mpForms.showErrors(form, {detail: mp.errorText(answer.data)}, summary);
  }

  const testButton = document.getElementById("test");
  const saveButton = document.getElementById("save");
  testButton.addEventListener("click", function () { mpForms.busy(testButton, testConnection); });
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    mpForms.busy(saveButton, function () { return mpForms.busy(testButton, save); });
  });
})();
