// Shared by the three figures: the API client (one request = one racksim command, answers cached by URL),
// number formatting with units, and the hover tooltip.
"use strict";

const racksim = (() => {
  const cache = new Map();

  // params: [[key, value], ...] (keys may repeat: alloc). Resolves to {ok, status, json, command, error}.
  function call(command, params) {
    const query = params.map(([k, v]) => encodeURIComponent(k) + "=" + encodeURIComponent(v)).join("&");
    const url = "/api/" + command + "?" + query;
    if (!cache.has(url)) {
      cache.set(url, fetch(url).then(async (res) => {
        const body = await res.json();
        const answer = {ok: res.ok, status: res.status, command: res.headers.get("X-Racksim-Command") || "", url};
        if (res.ok) answer.json = body; else answer.error = body.error;
        if (!res.ok && res.status >= 500) cache.delete(url);  // a busy or failed server may answer later
        return answer;
      }).catch((e) => { cache.delete(url); return {ok: false, status: 0, error: "no answer: " + e, url}; }));
    }
    return cache.get(url);
  }

  // nccl-tests' size names: 1024 -> "1K", 2^30 -> "1G"; other values as plain bytes.
  function sizeName(bytes) {
    const units = [["T", 2 ** 40], ["G", 2 ** 30], ["M", 2 ** 20], ["K", 2 ** 10]];
    for (const [u, f] of units) if (bytes >= f && bytes % f === 0) return (bytes / f) + u;
    return String(bytes);
  }
  function sizeLabel(bytes) {
    const units = [["TiB", 2 ** 40], ["GiB", 2 ** 30], ["MiB", 2 ** 20], ["KiB", 2 ** 10]];
    for (const [u, f] of units) if (bytes >= f) return +(bytes / f).toPrecision(4) + " " + u;
    return bytes + " B";
  }
  function timeLabel(us) {
    if (us >= 1e6) return +(us / 1e6).toPrecision(4) + " s";
    if (us >= 1e3) return +(us / 1e3).toPrecision(4) + " ms";
    return +us.toPrecision(4) + " us";
  }
  function gbLabel(bytes) { return +(bytes / 1e9).toFixed(1) + " GB"; }

  const tip = () => document.getElementById("tooltip");
  function showTip(event, html) {
    const t = tip();
    t.innerHTML = html;
    t.hidden = false;
    // Left of the pointer in the right half of the window, so that it never leaves the figure.
    const x = event.clientX > window.innerWidth / 2 ? Math.max(4, event.clientX - t.offsetWidth - 14) : event.clientX + 14;
    const y = event.clientY + 14 + t.offsetHeight > window.innerHeight ? event.clientY - t.offsetHeight - 10 : event.clientY + 14;
    t.style.left = x + "px";
    t.style.top = y + "px";
  }
  function hideTip() { tip().hidden = true; }
  function escape(text) {
    return String(text).replace(/[&<>"]/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c]));
  }
  // The shell form of an argument list, quoted like the server's X-Racksim-Command.
  function commandLine(args) {
    return "racksim " + args.map((a) => /^[A-Za-z0-9_=.,:@%+-]+$/.test(a) ? a : "'" + a.replace(/'/g, "'\\''") + "'").join(" ");
  }
  function setStatus(id, text, isError) {
    const el = document.getElementById(id);
    el.textContent = text;
    el.classList.toggle("error", !!isError);
  }
  return {call, sizeName, sizeLabel, timeLabel, gbLabel, showTip, hideTip, escape, commandLine, setStatus};
})();
