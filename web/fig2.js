// Fig 2: one GB200 tray in NUMA mode and in CDMM side by side. The reader's allocations go, in order, to
// `racksim place` once per mode; the bars draw where every byte landed (nodes[].by_allocation), to scale.
"use strict";

(() => {
  const SYSTEM = "gb200-nvl72";
  const PRESET = ["train0:cuda:100GB:gpu0", "prep:cpu:1100GB", "x:cuda:40GB:gpu0"];  // the course's self-check 1
  const NODES = ["", "cpu0", "cpu1", "gpu0", "gpu1", "gpu2", "gpu3", "interleave=all"];
  const CPU_DATA = new Set(["cpu", "pinned", "egm"]);  // data the program meant for CPU memory
  const COLORS = {os: "#b9b9b9", mine: "#2a9d8f", focus: "#f4842b", spill: "#f2c12e"};
  const el = (id) => document.getElementById(id);
  let allocs = PRESET.slice();
  let generation = 0;

  el("f2-node").innerHTML = NODES.map((n) => `<option value="${n}">${n || "(default: local / first touch)"}</option>`).join("");
  el("f2-node").value = "gpu0";

  function renderList() {
    el("f2-list").innerHTML = allocs.map((a, i) =>
      `<li><code>--alloc ${racksim.escape(a)}</code><button data-i="${i}">remove</button></li>`).join("");
    for (const b of el("f2-list").querySelectorAll("button"))
      b.addEventListener("click", () => { allocs.splice(+b.dataset.i, 1); update(); });
  }

  function drawTray(containerId, mode, answer) {
    const box = el(containerId);
    if (!answer.ok) {
      box.innerHTML = `<div class="tray-title">${mode}</div><p class="status error">${racksim.escape(answer.error)}</p>`;
      return;
    }
    const d = answer.json;
    const last = allocs.length ? allocs[allocs.length - 1].split(":")[0] : null;
    const kindOf = Object.fromEntries(d.allocations.map((a) => [a.name, a.kind]));
    box.innerHTML = `<div class="tray-title">${mode === "numa" ? "NUMA mode: HBM onlined to the kernel" : "CDMM: the driver keeps HBM"}</div>`;
    const W = Math.max(box.getBoundingClientRect().width - 8, 520), rowH = 34, labelW = 150, right = 110;
    const maxCap = d3.max(d.nodes, (n) => n.capacity_bytes);
    const x = d3.scale.linear().domain([0, maxCap]).range([0, W - labelW - right]);
    const svg = d3.select(box).append("svg").attr("width", W).attr("height", d.nodes.length * rowH + 46).attr("class", "mem-node");
    d.nodes.forEach((n, i) => {
      const g = svg.append("g").attr("transform", `translate(${labelW},${i * rowH + 8})`);
      svg.append("text").attr("class", "bar-label").attr("x", 4).attr("y", i * rowH + 26)
        .text(`${n.id} ${n.memory} ${racksim.gbLabel(n.capacity_bytes)}`);
      const segments = [];
      if (n.os_reserved_bytes) segments.push({bytes: n.os_reserved_bytes, color: COLORS.os, what: "the OS and other processes"});
      if (n.driver_reserved_bytes) segments.push({bytes: n.driver_reserved_bytes, color: COLORS.os, what: "driver reserved"});
      for (const [name, bytes] of Object.entries(n.by_allocation)) {
        const spill = n.kind === "gpu" && CPU_DATA.has(kindOf[name]);
        segments.push({bytes, name, color: spill ? COLORS.spill : name === last ? COLORS.focus : COLORS.mine,
                       what: spill ? `${name}: CPU pages the kernel spilled onto this GPU's HBM` : name});
      }
      let at = 0;
      for (const s of segments) {
        g.append("rect").attr("x", x(at)).attr("y", 0).attr("width", Math.max(1, x(s.bytes))).attr("height", rowH - 12)
          .attr("fill", s.color).attr("data-node", n.id).attr("data-alloc", s.name || "")
          .on("mousemove", () => racksim.showTip(d3.event, `<b>${n.id}</b> (${mode}): ${racksim.escape(s.what)}<br>${racksim.gbLabel(s.bytes)}` +
              `<span class="cmd">$ ${racksim.escape(answer.command)}</span>`))
          .on("mouseout", racksim.hideTip);
        at += s.bytes;
      }
      g.append("rect").attr("x", 0).attr("y", 0).attr("width", x(n.capacity_bytes)).attr("height", rowH - 12)
        .attr("fill", "none").attr("stroke", "#333").attr("stroke-dasharray", n.kernel_visible ? null : "5,3");
      g.append("text").attr("x", x(n.capacity_bytes) + 6).attr("y", rowH - 18).attr("class", "bar-label")
        .text(`${racksim.gbLabel(n.free_bytes)} free`);
    });
    svg.append("text").attr("x", labelW).attr("y", d.nodes.length * rowH + 30).attr("class", "bar-label")
      .text("bars to scale (GB = 1e9 bytes); dashed: memory the kernel cannot see");
    const rows = d.allocations.map((a) => {
      const where = Object.entries(a.placed).map(([node, b]) => `${node} ${racksim.gbLabel(b)}`).join(", ") || "-";
      return `<tr data-alloc="${racksim.escape(a.name)}"><td><code>${racksim.escape(a.request)}</code><br>${racksim.escape(a.description)}</td>` +
        `<td class="${a.failed ? "fail" : "ok"}">${racksim.escape(a.outcome)}</td><td>${racksim.escape(where)}</td>` +
        `<td>${racksim.escape(a.reason)}</td></tr>`;
    });
    box.insertAdjacentHTML("beforeend", `<table class="outcomes"><tr><th>allocation</th><th>outcome</th><th>where it landed</th><th>why</th></tr>${rows.join("")}</table>` +
      `<p class="cmd">$ ${racksim.escape(answer.command)}</p>`);
  }

  async function update() {
    const gen = ++generation;
    renderList();
    el("fig2").dataset.ready = "0";
    racksim.setStatus("fig2-status", "placing...");
    const params = (mode) => [["system", SYSTEM], ["mode", mode], ...allocs.map((a) => ["alloc", a]), ["no-checklist", "1"]];
    const [numa, cdmm] = await Promise.all([racksim.call("place", params("numa")), racksim.call("place", params("cdmm"))]);
    if (gen !== generation) return;
    drawTray("fig2-numa", "numa", numa);
    drawTray("fig2-cdmm", "cdmm", cdmm);
    racksim.setStatus("fig2-status", numa.ok ? "one GB200 tray (2 Grace + 4 B200); hover a bar for its numbers" : "", !numa.ok);
    el("fig2").dataset.ready = "1";
  }

  el("f2-add").addEventListener("click", () => {
    const name = el("f2-name").value.trim() || "a" + (allocs.length + 1);
    const node = el("f2-node").value;
    allocs.push(`${name}:${el("f2-kind").value}:${el("f2-size").value}GB` + (node ? ":" + node : ""));
    update();
  });
  el("f2-preset").addEventListener("click", () => { allocs = PRESET.slice(); update(); });
  el("f2-clear").addEventListener("click", () => { allocs = []; update(); });
  update();
})();
