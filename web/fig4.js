// Fig 4: all-reduce time vs message size (one NVLink domain) and vs racks, for the course's machines, as
// the course's model, the engine at vendor peaks or the engine calibrated. Each curve is one racksim
// request; each point carries the single command that reproduces it (data-command, shown on hover).
"use strict";

(() => {
  const MACHINES = {
    "rtx4090-pcie": {label: "RTX 4090 PCIe box", color: "#8c564b"},
    "hgx-h100": {label: "HGX H100", color: "#2ca02c"},
    "gb200-nvl72": {label: "GB200 NVL72", color: "#1f77b4"},
    "gb300-nvl72": {label: "GB300 NVL72", color: "#d62728", hollow: true},  // drawn over GB200: GB200 shows through
  };
  const ALGOS = {
    ring: {label: "ring", dash: null, symbol: "circle"},
    nvls: {label: "NVLS", dash: "9,4", symbol: "triangle-up"},
    hierarchical: {label: "hierarchical", dash: "2,4", symbol: "square"},
  };
  const LAYERS = {course: "course model", peak: "engine at vendor peaks", calibrated: "engine calibrated"};
  const el = (id) => document.getElementById(id);
  let generation = 0;

  function state() {
    const checked = (name) => [...document.querySelectorAll(`#fig4 input[name=${name}]:checked`)].map((i) => i.value);
    const minExp = +el("f4-min").value, maxExp = Math.max(+el("f4-max").value, +el("f4-min").value);
    return {
      machines: checked("machine"), algos: checked("algo"), layer: checked("layer")[0] || "course",
      minBytes: 2 ** minExp, maxBytes: 2 ** maxExp, stepFactor: maxExp - minExp > 12 ? 4 : 2,
      racks: +el("f4-racks").value, size: 2 ** +el("f4-size").value,
      nic: +el("f4-nic").value, efficiency: +el("f4-eff").value,
    };
  }

  function updateOutputs() {
    const s = state();
    el("f4-min-out").textContent = racksim.sizeLabel(2 ** +el("f4-min").value);
    el("f4-max-out").textContent = racksim.sizeLabel(2 ** +el("f4-max").value);
    el("f4-racks-out").textContent = s.racks;
    el("f4-size-out").textContent = racksim.sizeLabel(s.size);
    el("f4-nic-out").textContent = s.nic > 0 ? s.nic + " GB/s" : "each system's";
    el("f4-eff-out").textContent = Math.round(s.efficiency * 100) + " %";
    el("f4-eff").disabled = s.layer !== "course";
  }

  // The single-size command of one point, and the API parameters of the request behind it.
  function pointArgs(s, machine, algo, racks, gpus, bytes) {
    if (s.layer === "course") {
      const a = ["fig4", "--system", machine, "--racks", String(racks), "--gpus", String(gpus), "--bytes", racksim.sizeName(bytes)];
      if (algo !== "ring") a.push("--nvls");
      if (s.nic > 0) a.push("--nic-GBps", String(s.nic));
      if (s.efficiency !== 1) a.push("--efficiency", String(s.efficiency));
      return a;
    }
    const a = ["collective", "--system", machine, "--racks", String(racks), "--op", "all_reduce", "--gpus", String(gpus),
               "--bytes", racksim.sizeName(bytes), "--algo", algo, "--calibration", s.layer === "peak" ? "none" : "default"];
    if (s.nic > 0) a.push("--nic-GBps", String(s.nic));
    return a;
  }
  function toParams(args) {  // ["fig4", "--system", "x", "--nvls"] -> [["system", "x"], ["nvls", "1"]]
    const p = [];
    for (let i = 1; i < args.length; i++) {
      const key = args[i].slice(2);
      if (i + 1 < args.length && !args[i + 1].startsWith("--")) p.push([key, args[++i]]);
      else p.push([key, "1"]);
    }
    return p;
  }

  async function gpusPerRack(machine) {
    const r = await racksim.call("show", [["system", machine]]);
    return r.ok ? r.json.gpus : 0;
  }

  // Why a case has no point, known before asking, or null: NVLS reduces inside one NVLink domain (the CLI
  // refuses it across domains), and the course's model has no flat ring across racks.
  function scope(layer, algo, racks) {
    if (algo === "nvls" && racks > 1) return "NVLS reduces inside one NVLink domain; across racks it is the hierarchical curve";
    if (layer === "course" && algo === "ring" && racks > 1)
      return "the course's model has no flat ring across racks (its multi-rack form is hierarchical)";
    return null;
  }

  // Notes under the plot, one per distinct reason, naming every case it applies to.
  // A message's numbers are masked in its key, so that one reason covers every rack count; the first
  // message of its kind is shown whole (its numbers are that case's).
  class Notes {
    constructor() { this.byReason = new Map(); this.firstOfKind = new Map(); }
    add(message, where) {
      const key = message.replace(/\d+/g, "N");
      if (!this.firstOfKind.has(key)) this.firstOfKind.set(key, message);
      const reason = this.firstOfKind.get(key);
      if (!this.byReason.has(reason)) this.byReason.set(reason, []);
      if (where && !this.byReason.get(reason).includes(where)) this.byReason.get(reason).push(where);
    }
    html() {
      return [...this.byReason].sort((a, b) => a[0].localeCompare(b[0])).map(  // same order whatever answers first
        ([reason, where]) =>
        `<li>${where.length ? "<b>" + racksim.escape(where.join("; ")) + "</b>: " : ""}${racksim.escape(reason)}</li>`).join("");
    }
  }


  // Panel (a): one rack / node, time vs size. One request per curve (fig4 or sweep over sizes).
  async function sizeSeries(s, machine, algo, notes) {
    const gpus = await gpusPerRack(machine);
    if (gpus < 2) {
      notes.add("one GPU, so an all-reduce moves nothing (time 0 on every layer): no curve", MACHINES[machine].label);
      return null;
    }
    let answer;
    if (s.layer === "course") {
      const p = [["system", machine], ["gpus", String(gpus)], ["min-bytes", String(s.minBytes)], ["max-bytes", String(s.maxBytes)],
                 ["step-factor", String(s.stepFactor)]];
      if (algo !== "ring") p.push(["nvls", "1"]);
      if (s.efficiency !== 1) p.push(["efficiency", String(s.efficiency)]);
      answer = await racksim.call("fig4", p);
    } else {
      answer = await racksim.call("sweep", [["system", machine], ["op", "all_reduce"], ["gpus", String(gpus)], ["algo", algo],
        ["min-bytes", String(s.minBytes)], ["max-bytes", String(s.maxBytes)], ["step-factor", String(s.stepFactor)],
        ["calibration", s.layer === "peak" ? "none" : "default"]]);
    }
    if (!answer.ok) {
      notes.add(answer.error, `${MACHINES[machine].label}, ${ALGOS[algo].label}, one ${gpus === 8 ? "node" : "rack"}`);
      return null;
    }
    const rows = Array.isArray(answer.json) ? answer.json : [answer.json];
    return {machine, algo, curveCommand: answer.command, points: rows.map((r) => ({
      x: r.bytes, row: r, racks: 1, gpus, command: racksim.commandLine(pointArgs(s, machine, algo, 1, gpus, r.bytes))}))};
  }

  // Panel (b): time vs racks at one size. One request per point (collective or fig4 at one size).
  async function racksSeries(s, machine, algo, notes) {
    const perRack = await gpusPerRack(machine);
    if (perRack < 2) return null;  // noted by panel (a)
    const racksList = [1, 2, 4, 8, 16, 32, 64].filter((r) => r <= s.racks);
    if (!racksList.includes(s.racks)) racksList.push(s.racks);
    const points = await Promise.all(racksList.map(async (racks) => {
      const why = scope(s.layer, algo, racks);
      if (why) {
        notes.add(why, `${ALGOS[algo].label} beyond 1 rack`);
        return null;
      }
      const args = pointArgs(s, machine, algo, racks, perRack * racks, s.size);
      const answer = await racksim.call(args[0], toParams(args));
      if (!answer.ok) {
        notes.add(answer.error, `${MACHINES[machine].label} ${ALGOS[algo].label} at ${racks} racks`);
        return null;
      }
      return {x: racks, row: answer.json, racks, gpus: perRack * racks, command: racksim.commandLine(args)};
    }));
    return {machine, algo, points: points.filter((p) => p)};
  }

  function tooltipHtml(s, series, p) {
    const r = p.row;
    let html = `<b>${MACHINES[series.machine].label}, ${ALGOS[series.algo].label}</b> (${LAYERS[s.layer]})<br>` +
      `${p.gpus} GPUs on ${p.racks} rack(s)/node(s), ${racksim.sizeLabel(r.bytes)} per GPU<br>` +
      `time <b>${racksim.timeLabel(r.time_us)}</b>, algbw ${r.algbw_GBps} GB/s, busbw ${r.busbw_GBps} GB/s` +
      (r.algo && s.layer !== "course" ? `<br>ran: ${racksim.escape(r.algo)}${r.algo_note ? " (" + racksim.escape(r.algo_note) + ")" : ""}` : "") +
      `<span class="cmd">$ ${racksim.escape(p.command)}</span>`;
    if (series.curveCommand) html += `<span class="cmd">curve: $ ${racksim.escape(series.curveCommand)}</span>`;
    return html;
  }

  function draw(svgId, s, seriesList, opts) {
    const svg = d3.select("#" + svgId);
    svg.selectAll("*").remove();
    const box = svg.node().getBoundingClientRect();
    const W = Math.max(box.width, 500), H = Math.max(box.height, 360);
    const m = {top: 34, right: 18, bottom: 52, left: 78};
    const w = W - m.left - m.right, h = H - m.top - m.bottom;
    const g = svg.append("g").attr("transform", `translate(${m.left},${m.top})`);
    svg.append("text").attr("class", "plot-title").attr("x", m.left).attr("y", 20).text(opts.title);
    const all = [].concat(...seriesList.map((c) => c.points)).filter((p) => p.row.time_us > 0);
    if (!all.length) {
      g.append("text").attr("x", w / 2).attr("y", h / 2).attr("text-anchor", "middle").text("nothing to draw for this selection");
      return;
    }
    const ys = all.map((p) => p.row.time_us);
    const x = d3.scale.log().base(2).domain(opts.xDomain).range([0, w]);
    const y = d3.scale.log().domain([d3.min(ys) / 1.6, d3.max(ys) * 1.6]).range([h, 0]);
    const xAxis = d3.svg.axis().scale(x).orient("bottom").tickValues(opts.xTicks).tickFormat(opts.xFormat);
    // Powers of ten; with less than two decades on the axis, 2x and 5x too.
    const decades = Math.log10(y.domain()[1] / y.domain()[0]);
    const mantissas = decades < 2 ? [1, 2, 5] : [1];
    const yTicks = y.ticks().filter((t) => mantissas.some((m) => Math.abs(t / 10 ** Math.floor(Math.log10(t) + 1e-9) - m) < 1e-6));
    const yAxis = d3.svg.axis().scale(y).orient("left").tickValues(yTicks).tickFormat(racksim.timeLabel);
    g.append("g").attr("class", "grid").attr("transform", `translate(0,${h})`)
      .call(d3.svg.axis().scale(x).orient("bottom").tickValues(opts.xTicks).tickSize(-h).tickFormat(""));
    g.append("g").attr("class", "grid").call(d3.svg.axis().scale(y).orient("left").tickValues(yTicks).tickSize(-w).tickFormat(""));
    g.append("g").attr("class", "axis").attr("transform", `translate(0,${h})`).call(xAxis);
    g.append("g").attr("class", "axis").call(yAxis);
    g.append("text").attr("class", "axis-title").attr("x", w / 2).attr("y", h + 42).attr("text-anchor", "middle").text(opts.xTitle);
    g.append("text").attr("class", "axis-title").attr("transform", "rotate(-90)").attr("x", -h / 2).attr("y", -62)
      .attr("text-anchor", "middle").text("all-reduce time (log scale)");
    const line = d3.svg.line().x((p) => x(p.x)).y((p) => y(p.row.time_us));
    for (const c of seriesList) {
      const pts = c.points.filter((p) => p.row.time_us > 0);
      const color = MACHINES[c.machine].color;
      if (pts.length > 1)
        g.append("path").datum(pts).attr("class", "curve").attr("d", line).attr("stroke", color)
          .attr("stroke-dasharray", ALGOS[c.algo].dash);
      g.selectAll(null).data(pts).enter().append("path")
        .attr("class", "point").attr("fill", MACHINES[c.machine].hollow ? "none" : color)
        .style("stroke", MACHINES[c.machine].hollow ? color : null).style("stroke-width", MACHINES[c.machine].hollow ? "2px" : null)
        .attr("d", d3.svg.symbol().type(ALGOS[c.algo].symbol).size(64))
        .attr("transform", (p) => `translate(${x(p.x)},${y(p.row.time_us)})`)
        .attr("data-machine", c.machine).attr("data-algo", c.algo).attr("data-layer", s.layer)
        .attr("data-time-us", (p) => p.row.time_us).attr("data-command", (p) => p.command)
        .on("mousemove", (p) => racksim.showTip(d3.event, tooltipHtml(s, c, p)))
        .on("mouseout", racksim.hideTip);
    }
  }

  function legend(s) {
    const items = s.machines.map((mc) => `<span><span class="swatch" style="border-color:${MACHINES[mc].color}"></span>` +
      `${MACHINES[mc].label}${MACHINES[mc].hollow ? " (hollow markers)" : ""}</span>`);
    const algoItems = s.algos.map((a) =>
      `<span><svg width="34" height="12"><line x1="0" y1="6" x2="34" y2="6" stroke="#444" stroke-width="2.2" ${ALGOS[a].dash ? `stroke-dasharray="${ALGOS[a].dash}"` : ""}/></svg> ${ALGOS[a].label}</span>`);
    el("fig4-legend").innerHTML = items.join("") + "<span>&nbsp;|&nbsp;</span>" + algoItems.join("") +
      `<span>&nbsp;|&nbsp;layer: <b>${LAYERS[s.layer]}</b></span>`;
  }

  async function redraw() {
    const gen = ++generation;
    const s = state();
    updateOutputs();
    legend(s);
    const notes = new Notes();
    const cases = [];
    for (const mc of s.machines) for (const a of s.algos) cases.push([mc, a]);
    racksim.setStatus("fig4-status", `computing ${cases.length * 2} curve(s) (${LAYERS[s.layer]})...`);
    el("fig4").dataset.ready = "0";
    const started = performance.now();
    const [bySize, byRacks] = await Promise.all([
      Promise.all(cases.map(([mc, a]) => sizeSeries(s, mc, a, notes))),
      Promise.all(cases.map(([mc, a]) => racksSeries(s, mc, a, notes))),
    ]);
    if (gen !== generation) return;  // a newer redraw started
    const exps = d3.range(Math.log2(s.minBytes), Math.log2(s.maxBytes) + 1);
    const every = Math.max(1, Math.ceil(exps.length / 9));
    draw("fig4-size", s, bySize.filter((c) => c), {
      title: "(a) inside one NVLink domain (all GPUs of one rack / node)",
      xDomain: [s.minBytes / 1.5, s.maxBytes * 1.5], xTicks: exps.filter((e, i) => i % every === 0).map((e) => 2 ** e),
      xFormat: racksim.sizeName, xTitle: "message size per GPU (bytes, log scale)"});
    const racksTicks = [1, 2, 4, 8, 16, 32, 64].filter((r) => r <= s.racks);
    draw("fig4-racks", s, byRacks.filter((c) => c), {
      title: `(b) ${racksim.sizeLabel(s.size)} per GPU on 1-${s.racks} racks (HGX: nodes of 8 GPUs), NIC ${s.nic > 0 ? s.nic + " GB/s" : "as shipped"}`,
      xDomain: [0.8, s.racks * 1.25], xTicks: racksTicks.includes(s.racks) ? racksTicks : racksTicks.concat([s.racks]),
      xFormat: String, xTitle: "racks joined by InfiniBand (log scale)"});
    if (s.machines.includes("gb200-nvl72") && s.machines.includes("gb300-nvl72"))
      notes.add("GB300 NVL72 has GB200's NVLink 5: inside one rack its curves are GB200's; GB300 is drawn last with hollow markers, so where the two are equal (panel a; panel b when the NIC is hidden) GB200's filled markers show inside GB300's");
    el("fig4-notes").innerHTML = notes.html();
    racksim.setStatus("fig4-status", `${LAYERS[s.layer]}: drawn in ${((performance.now() - started) / 1000).toFixed(1)} s. Hover a point for its numbers and command.`);
    el("fig4").dataset.ready = "1";
  }

  for (const input of document.querySelectorAll("#fig4-controls input")) {
    input.addEventListener("input", updateOutputs);
    input.addEventListener("change", redraw);
  }
  window.addEventListener("resize", () => { clearTimeout(window.fig4Resize); window.fig4Resize = setTimeout(redraw, 300); });
  updateOutputs();
  redraw();
})();
