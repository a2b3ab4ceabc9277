/* Events timeline (global page and mirror page): who did what, state transitions, errors. */
"use strict";
window.mpEvents = (function () {
  function describe(e) {
    const subject = [e.mirror, e.connector, e.cluster].filter(Boolean).join(" / ");
    if (e.kind === "transition") {
      return subject + ": " + (e.from_state || "?") + " → " + (e.to_state || "?");
    }
    return (e.actor || "someone") + " " + e.action + (subject ? " " + subject : "");
  }

  function item(e) {
    const failed = e.to_state === "FAILED" || /error|fail/i.test(e.action || "");
    const when = new Date(e.at);
    return mp.el("li", {class: (e.kind === "transition" ? "transition-" + (e.to_state || "") : "action") + (failed ? " is-error" : "")}, [
      mp.el("time", {datetime: e.at, title: when.toISOString(), text: when.toLocaleString([], {month: "short", day: "numeric", hour: "2-digit",
                                                                         minute: "2-digit", second: "2-digit"})}),
      mp.el("span", {}, [mp.el("span", {text: describe(e)}),
                         e.detail ? mp.el("span", {class: "detail muted", text: " — " + e.detail}) : null])
    ]);
  }

  /* Keep `list` showing the events at `url`, refreshed every `seconds`. */
  function follow(list, url, seconds) {
    return mp.every(seconds, async function () {
      const answer = await mp.request("GET", url);
      if (!answer.ok) {
        list.replaceChildren(mp.el("li", {class: "error", text: "events unavailable: " + mp.errorText(answer.data)}));
        return;
      }
      const events = Array.isArray(answer.data) ? answer.data : (answer.data.results || []);
      const items = events.map(item);
      if (!items.length) items.push(mp.el("li", {class: "empty", text: "No events yet."}));
      list.replaceChildren.apply(list, items);
    });
  }

  return {follow: follow};
})();
