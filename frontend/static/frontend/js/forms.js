/* Dashboard forms: the API's 400s shown next to their fields, key=value properties, debouncing. */
"use strict";
window.mpForms = (function () {
  /* A DRF error body as [path, message] pairs: {"connectors": {"source": {"tasks_max": ["..."]}}} gives
     ["connectors.source.tasks_max", "..."]. */
  function flatten(data, prefix, out) {
    out = out || [];
    if (data === null || data === undefined) return out;
    if (Array.isArray(data)) {
      data.forEach(function (item) {
        if (item !== null && typeof item === "object") flatten(item, prefix, out);
        else out.push([prefix, String(item)]);
      });
    } else if (typeof data === "object") {
      Object.entries(data).forEach(function ([key, value]) {
        const path = key === "non_field_errors" ? prefix : (prefix ? prefix + "." + key : key);
        flatten(value, path, out);
      });
    } else {
      out.push([prefix, String(data)]);
    }
    return out;
  }

  function slot(root, path) {
    return root.querySelector('[data-error-for="' + CSS.escape(path) + '"]');
  }

  /* The error's place and text: its field; the property's own field for "prop: reason" inside a config
     (then just the reason); else the nearest enclosing field ("connectors.source.auto_restart.enabled"
     -> "connectors.source.auto_restart" -> ...). */
  function placeOf(root, path, message) {
    const prop = /^([\w.\-]+): /.exec(message);
    if (prop && path) {
      const exact = slot(root, path + "." + prop[1]);
      if (exact) return {place: exact, message: message.slice(prop[0].length)};
    }
    const parts = path ? path.split(".") : [];
    for (let n = parts.length; n > 0; n--) {
      const found = slot(root, parts.slice(0, n).join("."));
      if (found) return {place: found, message: message};
    }
    return {place: null, message: message};
  }

  function fieldOf(errorSlot) {
    return document.querySelector('[aria-describedby~="' + CSS.escape(errorSlot.id) + '"]');
  }

  function labelOf(field, path) {
    const label = field && field.labels && field.labels[0];
    return label ? label.textContent.replace(/\s+/g, " ").trim() : (path || "form");
  }

  /* Empty the error slots (all, or those whose path starts with one of `prefixes`). */
  function clearErrors(root, prefixes) {
    root.querySelectorAll("[data-error-for]").forEach(function (node) {
      const path = node.getAttribute("data-error-for");
      if (prefixes && !prefixes.some(function (p) { return path === p || path.startsWith(p + "."); })) return;
      node.textContent = "";
      const field = fieldOf(node);
      if (field) field.removeAttribute("aria-invalid");
    });
  }

  /* Shows each error next to its field and lists them all in `summary` (links to the fields);
     returns how many there were. */
  function showErrors(root, data, summary) {
    const errors = flatten(data, "");
    const items = [];
    errors.forEach(function ([path, text]) {
      const {place, message} = placeOf(root, path, text);
      const field = place ? fieldOf(place) : null;
      if (place) {
        place.textContent = place.textContent ? place.textContent + " " + message : message;
        if (field) field.setAttribute("aria-invalid", "true");
      }
      const name = field ? labelOf(field, path) : (path && path !== "detail" ? path : "");
      items.push({text: name ? name + ": " + message : message, field: field});
    });
    if (summary) showSummary(summary, items);
    return errors.length;
  }

  function showSummary(summary, items) {
    if (!items.length) { summary.hidden = true; summary.replaceChildren(); return; }
    const list = mp.el("ul", {}, items.map(function (item) {
      if (!item.field || !item.field.id) return mp.el("li", {text: item.text});
      return mp.el("li", {}, [mp.el("a", {href: "#" + item.field.id, text: item.text, onclick: function (event) {
        event.preventDefault();
        item.field.focus();
      }})]);
    }));
    summary.replaceChildren(mp.el("p", {text: items.length === 1 ? "Please fix this:" : "Please fix these " +
                                                items.length + " problems:"}), list);
    summary.hidden = false;
    summary.focus();
  }

  function hideSummary(summary) {
    if (summary) { summary.hidden = true; summary.replaceChildren(); }
  }

  /* "key=value" lines (blank lines and # comments skipped) -> {config, errors}. */
  function parseProperties(text) {
    const config = {};
    const errors = [];
    (text || "").split(/\r?\n/).forEach(function (line, index) {
      const trimmed = line.trim();
      if (!trimmed || trimmed.startsWith("#") || trimmed.startsWith("!")) return;
      const at = trimmed.search(/[=:]/);
      if (at <= 0) { errors.push("line " + (index + 1) + ": expected key=value, got " + JSON.stringify(trimmed)); return; }
      config[trimmed.slice(0, at).trim()] = trimmed.slice(at + 1).trim();
    });
    return {config: config, errors: errors};
  }

  function debounce(fn, ms) {
    let timer = null;
    return function () {
      const args = arguments;
      clearTimeout(timer);
      timer = setTimeout(function () { fn.apply(null, args); }, ms);
    };
  }

  /* Runs `work` with the button disabled and aria-busy, whatever happens. */
  async function busy(button, work) {
    button.disabled = true;
    button.setAttribute("aria-busy", "true");
    try { return await work(); } finally {
      button.disabled = false;
      button.removeAttribute("aria-busy");
    }
  }

  return {flatten: flatten, clearErrors: clearErrors, showErrors: showErrors, hideSummary: hideSummary,
          parseProperties: parseProperties, debounce: debounce, busy: busy};
})();
