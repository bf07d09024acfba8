// Fig 3: two processes sharing one GPU buffer, on two GB200 NVL72 racks: same process, same tray (POSIX fd),
// another tray of the same NVLink domain (fabric handle through IMEX, a channel needed), another domain.
// `racksim imex-check --share` decides; the page only draws its answer.
"use strict";

(() => {
  const SYSTEM = "gb200-nvl72", RACKS = "2", GPUS_PER_TRAY = 4;
  const CASES = {  // exporter GPU, importer GPU, handle (global GPU indices on 2 racks of 18 trays x 4)
    process: {exporter: 0, importer: 1, handle: "process", what: "one process drives GPUs 0 and 1 of tray 0"},
    tray: {exporter: 0, importer: 1, handle: "auto", what: "process B on the same tray (one Linux kernel)"},
    domain: {exporter: 0, importer: 4, handle: "auto", what: "process B on tray 1 of the same rack (another kernel, same NVLink domain)"},
    other: {exporter: 0, importer: 72, handle: "auto", what: "process B on the other rack (another NVLink domain)"},
  };
  const el = (id) => document.getElementById(id);
  let generation = 0;

  function params() {
    const c = CASES[document.querySelector("input[name=f3-case]:checked").value];
    const te = Math.floor(c.exporter / GPUS_PER_TRAY), ti = Math.floor(c.importer / GPUS_PER_TRAY);
    const p = [["system", SYSTEM], ["racks", RACKS], ["gpus", `${c.exporter},${c.importer}`],
               ["share", `${c.exporter}:${c.importer}:${c.handle}`], ["container-channels", el("f3-channels").value]];
    if (el("f3-imex-stopped").checked) p.push(["imex-stopped", String(ti)]);
    if (el("f3-split-domain").checked && te !== ti) p.push(["imex-domain", String(te)], ["imex-domain", String(ti)]);
    return {c, p};
  }

  function render(c, answer) {
    const out = el("fig3-out");
    if (!answer.ok) {
      out.innerHTML = `<p class="status error">${racksim.escape(answer.error)}</p>`;
      return;
    }
    const d = answer.json, s = d.share;
    const gpu = (i) => d.gpus.find((g) => g.gpu === i) || {name: "gpu" + i};
    const box = (role, i, cls) => {
      const g = gpu(i);
      return `<div class="proc ${cls}"><b>${role}</b><br>GPU ${racksim.escape(g.name)} (tray ${g.tray})<br>` +
        `fabric ${racksim.escape(g.state)}, clique ${g.clique_id}<br><code>${racksim.escape(g.cluster_uuid || "")}</code></div>`;
    };
    const steps = s.steps.map((st) => `<tr><td><b>${racksim.escape(st.step)}</b></td><td>${racksim.escape(st.how)}</td>` +
      `<td>${racksim.escape(st.authority)}</td></tr>`).join("");
    const verdict = s.ok
      ? `<div class="verdict works" data-ok="1"><span class="ok">works</span>: ${racksim.escape(c.what)}; handle: ${s.handle}` +
        `${s.handle_bytes ? " (" + s.handle_bytes + " bytes)" : ""}</div>`
      : `<div class="verdict fails" data-ok="0"><span class="fail">fails</span>: ${racksim.escape(c.what)}; the reader would see: ` +
        `${racksim.escape(s.reason)}</div>`;
    out.innerHTML = `<div class="proc-row">${box(c.handle === "process" ? "process A (exporter side)" : "process A (exporter)", s.exporter_gpu, "")}` +
      `${box(c.handle === "process" ? "the same process A" : "process B (importer)", s.importer_gpu, "importer")}</div>` + verdict +
      (steps ? `<table class="steps"><tr><th>step</th><th>how</th><th>who does or authorizes it</th></tr>${steps}</table>` : "") +
      `<p><b>NCCL on these two GPUs:</b> ${racksim.escape(d.message)}</p>` +
      `<p class="cmd">$ ${racksim.escape(answer.command)}</p>`;
  }

  async function update() {
    const gen = ++generation;
    const {c, p} = params();
    el("fig3").dataset.ready = "0";
    racksim.setStatus("fig3-status", "checking...");
    const answer = await racksim.call("imex-check", p);
    if (gen !== generation) return;
    render(c, answer);
    racksim.setStatus("fig3-status", "");
    el("fig3").dataset.ready = "1";
  }

  for (const input of document.querySelectorAll("#fig3 input, #fig3 select")) input.addEventListener("change", update);
  update();
})();
