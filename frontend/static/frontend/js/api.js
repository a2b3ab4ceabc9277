/* Mirrorplane dashboard: the REST API from the browser (session cookie + CSRF), and small helpers. */
"use strict";
window.mp = (function () {
  function cookie(name) {
    const match = document.cookie.match(new RegExp("(?:^|; )" + name + "=([^;]*)"));
    return match ? decodeURIComponent(match[1]) : "";
  }

  /* fetch a JSON API: resolves to {ok, status, data}; never throws on HTTP errors. */
  async function request(method, url, body) {
    const options = {method: method, credentials: "same-origin",
                     headers: {"Accept": "application/json", "X-CSRFToken": cookie("csrftoken")}};
    if (body !== undefined) {
      options.headers["Content-Type"] = "application/json";
      options.body = JSON.stringify(body);
    }
    let response;
    try {
      response = await fetch(url, options);
    } catch (error) {
      return {ok: false, status: 0, data: {detail: "the control plane cannot be reached: " + error.message}};
    }
    let data = null;
    const text = await response.text();
    try { data = text ? JSON.parse(text) : null; } catch (e) { data = {detail: text.slice(0, 300)}; }
    return {ok: response.ok, status: response.status, data: data};
  }

  /* A readable message from a DRF error body: "field: reason; field: reason". */
  function errorText(data) {
    if (!data) return "no answer";
    if (typeof data === "string") return data;
    if (data.detail) return String(data.detail);
    return Object.entries(data).map(function ([field, reasons]) {
      return field + ": " + (Array.isArray(reasons) ? reasons.join(" ") : JSON.stringify(reasons));
    }).join("; ");
  }

  /* Call `fn` now and every `seconds` while the page is visible. Returns a stop function. */
  function every(seconds, fn) {
    let timer = null;
    let stopped = false;
    async function tick() {
      if (stopped) return;
      if (!document.hidden) { try { await fn(); } catch (e) { console.error(e); } }
      timer = setTimeout(tick, seconds * 1000);
    }
    tick();
    return function () { stopped = true; clearTimeout(timer); };
  }

  function el(tag, attributes, children) {
    const node = document.createElement(tag);
    Object.entries(attributes || {}).forEach(function ([key, value]) {
      if (value === null || value === undefined || value === false) return;
      if (key === "text") node.textContent = value;
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? "" : value);
    });
    (children || []).forEach(function (child) {
      if (child !== null && child !== undefined) node.append(child);
    });
    return node;
  }

  function number(value, digits) {
    if (value === null || value === undefined) return "–";
    return Number(value).toLocaleString("en-US", {maximumFractionDigits: digits === undefined ? 1 : digits});
  }

  function ago(seconds) {
    if (seconds === null || seconds === undefined) return "never";
    const age = Math.max(0, Date.now() / 1000 - seconds);
    if (age < 90) return Math.round(age) + " s ago";
    if (age < 5400) return Math.round(age / 60) + " min ago";
    if (age < 129600) return Math.round(age / 3600) + " h ago";
    return Math.round(age / 86400) + " d ago";
  }

  let toastTimer = null;
  /* A short message in the page's #toast live region; it fades after 6 s (errors stay 15 s). */
  function announce(message, kind) {
    const region = document.getElementById("toast");
    if (!region) return;
    region.textContent = message;
    region.className = "toast toast-" + (kind || "info");
    clearTimeout(toastTimer);
    toastTimer = setTimeout(function () { region.textContent = ""; }, kind === "error" ? 15000 : 6000);
  }

  return {request: request, errorText: errorText, every: every, el: el, number: number, ago: ago,
          announce: announce, cookie: cookie};
})();
