"""Plotting helpers for racksim results (matplotlib). Drawing only: every number comes from the model
(racksim.System.collective / sweep / analytic / fig4); nothing here computes a time.

The all-reduce figures draw three *layers* of the same configuration in one colour:

* the course's Fig 4 model (vendor peaks, bandwidth only): a dashed line;
* the discrete-event engine at vendor peaks (calibration "none"): a solid line with hollow markers;
* the engine with the shipped calibration: a dotted line with filled markers.

A configuration (system, racks, algorithm) gets one colour; two legends say which is which.
"""
import math

LAYERS = {
    "course": {"linestyle": "--", "marker": None, "label": "course's Fig 4 model (vendor peaks)"},
    "peak": {"linestyle": "-", "marker": "o", "markerfacecolor": "none",
             "label": "engine, vendor peaks (calibration none)"},
    "calibrated": {"linestyle": ":", "marker": "s", "label": "engine, shipped calibration"},
}

_BINARY = [(1 << 40, "TiB"), (1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")]


def bytes_label(n):
    """'1 GiB', '64 KiB', '8 B' for a byte count (binary units where they divide)."""
    n = int(n)
    for unit, name in _BINARY:
        if n >= unit and n % unit == 0:
            return f"{n // unit} {name}"
    return f"{n} B"


def time_label(us, micro="us"):
    """'12.3 us', '4.56 ms', '1.2 s' for a time in microseconds (micro: the symbol, e.g. "\u00b5s")."""
    if us is None or (isinstance(us, float) and math.isnan(us)):
        return "n/a"
    if us >= 1e6:
        return f"{us / 1e6:.3g} s"
    if us >= 1e3:
        return f"{us / 1e3:.3g} ms"
    return f"{us:.3g} {micro}"


def size_axis(ax, axis="x", label="message size per GPU (bytes, log scale)"):
    """Log-2 axis of byte counts with ticks every factor 32 labelled 1 KiB, 32 KiB, 1 MiB, ..."""
    import matplotlib.ticker as ticker

    set_scale = ax.set_xscale if axis == "x" else ax.set_yscale
    target = ax.xaxis if axis == "x" else ax.yaxis
    set_scale("log", base=2)
    target.set_major_locator(ticker.FixedLocator([2.0 ** k for k in range(0, 61, 5)]))
    target.set_minor_locator(ticker.LogLocator(base=2, subs=(1.0,), numticks=64))
    target.set_minor_formatter(ticker.NullFormatter())
    target.set_major_formatter(ticker.FuncFormatter(lambda v, _: bytes_label(v) if v >= 1 else ""))
    (ax.set_xlabel if axis == "x" else ax.set_ylabel)(label)


def _time_formatter(**kwargs):
    import matplotlib.ticker as ticker

    class TimeFormatter(ticker.LogFormatter):
        """matplotlib's log formatter (it decides which ticks get a label) writing '20 \u00b5s', '1.5 ms'."""

        def _num_to_string(self, x, vmin, vmax):
            return time_label(x, "\u00b5s")

    return TimeFormatter(**kwargs)


def time_axis(ax, axis="y", label="all-reduce time (seconds, log scale)"):
    """Log-10 axis for times given in microseconds, ticks labelled with their unit: 1 \u00b5s, 10 \u00b5s, ...,
    1 ms, ..., 1 s (intermediate ticks labelled too when the data span less than a few decades)."""
    (ax.set_yscale if axis == "y" else ax.set_xscale)("log")
    target = ax.yaxis if axis == "y" else ax.xaxis
    target.set_major_formatter(_time_formatter())
    target.set_minor_formatter(_time_formatter(labelOnlyBase=False, minor_thresholds=(2, 1)))
    (ax.set_ylabel if axis == "y" else ax.set_xlabel)(label)


def gpu_axis(ax, ticks, axis="x", label="GPUs in the all-reduce (log scale)"):
    """Log-2 axis of GPU counts with the given ticks written as plain integers."""
    import matplotlib.ticker as ticker

    (ax.set_xscale if axis == "x" else ax.set_yscale)("log", base=2)
    target = ax.xaxis if axis == "x" else ax.yaxis
    target.set_major_locator(ticker.FixedLocator(list(ticks)))
    target.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    target.set_minor_formatter(ticker.NullFormatter())
    (ax.set_xlabel if axis == "x" else ax.set_ylabel)(label)


def plot_layer(ax, x, y, layer, color, **kwargs):
    """One curve of one layer ('course', 'peak' or 'calibrated') in the configuration's colour. NaN
    points (configurations that cannot run) are left as gaps."""
    style = {"markersize": 4, "linewidth": 1.3}
    style.update({k: v for k, v in LAYERS[layer].items() if k != "label"})
    style.update(kwargs)
    return ax.plot(list(x), list(y), color=color, **style)


def heldout_range(time_us, heldout):
    """The measured times a prediction's held-out error allows (its result's "heldout_error": 90 % of the
    points of its class had |predicted / measured - 1| <= p90): (time / (1 + p90), time / (1 - p90)), the
    upper bound infinite from p90 >= 100 %. (nan, nan) where there is no held-out figure."""
    if not isinstance(heldout, dict) or time_us is None or (isinstance(time_us, float) and math.isnan(time_us)):
        return math.nan, math.nan
    p90 = heldout["p90_abs_pct"] / 100.0
    return time_us / (1 + p90), (time_us / (1 - p90) if p90 < 1 else math.inf)


def heldout_band(ax, x, times_us, heldouts, color, alpha=0.12):
    """Shades around a calibrated curve the measured times its held-out errors allow (heldout_range per
    point): how far the same model was, on 90 % of comparable collectives of systems it had not seen. An
    unbounded top (p90 >= 100 %) is drawn at 10x the prediction."""
    times_us = list(times_us)
    ranges = [heldout_range(t, h) for t, h in zip(times_us, heldouts)]
    low = [lo for lo, _ in ranges]
    high = [hi if not math.isinf(hi) else 10 * t for (_, hi), t in zip(ranges, times_us)]
    return ax.fill_between(list(x), low, high, color=color, alpha=alpha, linewidth=0)


def layer_legends(ax, configurations, layers=("course", "peak", "calibrated"), config_title="configuration",
                  loc_configs="upper left", loc_layers="lower right", fontsize=7, outside=False):
    """Two legends: colours (configurations: {label: colour}) and line styles (the layers). outside=True
    puts both to the right of the axes (leave room: fig.tight_layout() or a wide figure)."""
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], color=c, linewidth=3) for c in configurations.values()]
    place = {"loc": "upper left", "bbox_to_anchor": (1.01, 1.0)} if outside else {"loc": loc_configs}
    first = ax.legend(handles, list(configurations), title=config_title, fontsize=fontsize, title_fontsize=fontsize,
                      **place)
    ax.add_artist(first)
    layer_handles = []
    for name in layers:
        style = {k: v for k, v in LAYERS[name].items() if k != "label"}
        layer_handles.append(Line2D([], [], color="0.3", **style))
    place = {"loc": "lower left", "bbox_to_anchor": (1.01, 0.0)} if outside else {"loc": loc_layers}
    ax.legend(layer_handles, [LAYERS[n]["label"] for n in layers], title="layer", fontsize=fontsize,
              title_fontsize=fontsize, **place)


def results_table(rows, columns):
    """A plain-text table: rows are dicts, columns a list of (header, key or function of the row)."""
    cells = [[h for h, _ in columns]]
    for row in rows:
        cells.append([str(f(row) if callable(f) else row.get(f, "")) for _, f in columns])
    widths = [max(len(r[i]) for r in cells) for i in range(len(columns))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
