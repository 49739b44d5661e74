"""Figures of a run: ``res.plot.<kind>()`` returns a matplotlib Figure; ``dsim plot
RESULTS_DIR [KIND ...]`` writes them as PNG (and SVG).

The time series come from a run that recorded them (``[record]``, ``dsim run --record``,
``dsim.run(..., record=True)``): throughput per flow and class, queue lengths, colours
per conditioner, delay and jitter distributions. The TCP series (cwnd, ssthresh) come
from flows with ``tcp = { series = "10ms" }``, the RED / MRED averages from queues with
``series = "10ms"``. With several replications a series is their mean, interval by
interval (they line up); a distribution adds them up; the TCP and RED series, sampled at
instants of their own, are those of the first replication.

Figures are built with matplotlib's object interface (no pyplot state): nothing is shown
or kept open, and they draw the same in a script, a notebook or a headless CI.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import ScenarioError

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["KINDS", "Plotter", "sweep_figure", "write_figures"]

#: Every kind of figure, as `dsim plot` names them; ``Plotter`` has one method each
#: ("class-throughput" is ``class_throughput``).
KINDS = ("throughput", "class-throughput", "queue", "aqm", "cwnd", "delay", "jitter", "colors")

#: Lines one figure draws before it picks the most telling ones (and says so).
MAX_LINES = 8
#: Fill colours of the conditioner colours.
COLOR_FILLS = {"green": "#2ca02c", "yellow": "#e6b800", "red": "#d62728"}
#: What a kind needs, and how to get it.
NEEDS = {
    "throughput": ("flow_series", 'a run that records the "flows" series (dsim run --record, or [record] in the scenario)'),
    "class-throughput": ("flow_series", 'a run that records the "flows" series (dsim run --record, or [record] in the scenario)'),
    "queue": ("port_series", 'a run that records the "ports" series (dsim run --record, or [record] in the scenario)'),
    "aqm": ("queue_series", 'a RED or MRED queue with series = "10ms" (docs/af.md)'),
    "cwnd": ("series", 'a TCP flow with tcp = { series = "10ms" } (docs/tcp.md)'),
    "delay": ("distributions", 'a run that records the "delay" series (dsim run --record, or [record] in the scenario)'),
    "jitter": ("distributions", 'a run that records the "delay" series (dsim run --record, or [record] in the scenario)'),
    "colors": ("conditioner_series", 'conditioners with a meter, recorded (the "conditioners" series of [record])'),
}


def _figure(height: float = 4.2) -> tuple[Figure, Axes]:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8.5, height), layout="constrained")
    return fig, fig.add_subplot()


def _finish(ax: Axes, xlabel: str, ylabel: str, legend_title: str | None = None) -> None:
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    ax.set_ylim(bottom=0)
    handles, _ = ax.get_legend_handles_labels()
    if handles:  # beside the axes, where it hides no data
        ax.legend(title=legend_title, fontsize="small", title_fontsize="small", frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1))


def _mean_over_replications(df: pd.DataFrame, keys: list[str], values: list[str]) -> pd.DataFrame:
    """`values` per `keys` and interval, the mean over the replications."""
    return df.groupby([*keys, "start_s", "end_s"], sort=False)[values].mean().reset_index()


def _stairs(ax: Axes, part: pd.DataFrame, column: str, scale: float = 1.0, **style: Any) -> None:
    """One series over its intervals, as steps."""
    import numpy as np

    part = part.sort_values("start_s")
    edges = np.append(part["start_s"].to_numpy(), part["end_s"].to_numpy()[-1:])
    ax.stairs(part[column].to_numpy() / scale, edges, baseline=None, **style)


class Plotter:
    """The figures of one run's results (``Results.plot``). Each method returns a
    matplotlib Figure with units on its axes, a legend and a title naming the scenario;
    a kind whose data the run did not record raises ScenarioError saying how to record it."""

    def __init__(self, results: Any) -> None:
        self.res = results

    # -- what there is -------------------------------------------------------------------

    def available(self) -> list[str]:
        """The kinds this run has data for."""
        return [k for k in KINDS if self._has(k)]

    def _has(self, kind: str) -> bool:
        table = getattr(self.res, NEEDS[kind][0])
        if kind == "jitter" and len(table):
            return bool((table["metric"] == "jitter").any())
        return len(table) > 0

    def _need(self, kind: str) -> None:
        if not self._has(kind):
            table, how = NEEDS[kind]
            rule = f"the {kind} figure needs {how}"
            raise ScenarioError(f"{kind}: these results have no {table} rows; {rule}", kind, None, rule)

    def draw(self, kind: str) -> Figure:
        """The figure `kind` (one of KINDS)."""
        if kind not in KINDS:
            rule = f"kinds: {', '.join(KINDS)}"
            raise ScenarioError(f"{kind!r}: no such figure; {rule}", "kind", repr(kind), rule)
        method: Callable[[], Figure] = getattr(self, kind.replace("-", "_"))
        return method()

    def _title(self, ax: Axes, what: str, replications: str = "mean of") -> None:
        """The title: the scenario's name, what the figure shows and, with several
        replications, which ("mean of", "all", "first of")."""
        n = self.res.replications
        note = "" if n == 1 else f" ({replications} {n} replications)"
        ax.set_title(f"{self.res.name}: {what}{note}", fontsize="medium", loc="left")

    def _interval_note(self, df: pd.DataFrame) -> str:
        width = float((df["end_s"] - df["start_s"]).max()) * 1e3
        return f"{width:g} ms intervals"

    # -- throughput ----------------------------------------------------------------------

    def throughput(self, flows: list[str] | None = None) -> Figure:
        """Throughput of each flow over time (delivered bits per second, per interval);
        with more than MAX_LINES flows, the MAX_LINES with the highest mean throughput and
        the mean of all flows."""
        self._need("throughput")
        s = _mean_over_replications(self.res.flow_series, ["flow"], ["throughput_bps"])
        names = list(dict.fromkeys(s["flow"])) if flows is None else flows
        fig, ax = _figure()
        shown = names
        if len(names) > MAX_LINES:
            means = s[s["flow"].isin(names)].groupby("flow")["throughput_bps"].mean()
            shown = list(means.nlargest(MAX_LINES).index)
            every = s[s["flow"].isin(names)].groupby(["start_s", "end_s"])["throughput_bps"].mean().reset_index()
            _stairs(ax, every, "throughput_bps", 1e6, color="black", linestyle="--", linewidth=1.5, label=f"mean of all {len(names):,}")
        for name in shown:
            _stairs(ax, s[s["flow"] == name], "throughput_bps", 1e6, linewidth=1.2, label=name)
        which = "throughput per flow" if len(shown) == len(names) else f"throughput of the {len(shown)} fastest of {len(names):,} flows"
        self._title(ax, f"{which}, {self._interval_note(s)}")
        _finish(ax, "time (s)", "throughput (Mbit/s)", "flow")
        return fig

    def class_throughput(self) -> Figure:
        """Throughput of each class (the DSCP its flows' sources set) over time: the sum
        over its flows, per interval; and the total."""
        self._need("class-throughput")
        dscp = self.res.flows[["replication", "flow", "dscp"]]
        s = self.res.flow_series.merge(dscp, on=["replication", "flow"])
        per_rep = s.groupby(["replication", "dscp", "start_s", "end_s"], sort=False)["throughput_bps"].sum().reset_index()
        c = _mean_over_replications(per_rep, ["dscp"], ["throughput_bps"])
        fig, ax = _figure()
        if c["dscp"].nunique() > 1:  # the total, unless it is the one class
            total = c.groupby(["start_s", "end_s"])["throughput_bps"].sum().reset_index()
            _stairs(ax, total, "throughput_bps", 1e6, color="black", linestyle="--", linewidth=1.2, label="all")
        for name in dict.fromkeys(c["dscp"]):
            _stairs(ax, c[c["dscp"] == name], "throughput_bps", 1e6, linewidth=1.6, label=self.res.class_label(name))
        self._title(ax, f"throughput per class, {self._interval_note(c)}")
        _finish(ax, "time (s)", "throughput (Mbit/s)", "DSCP")
        return fig

    # -- queues --------------------------------------------------------------------------

    def queue(self, ports: list[str] | None = None) -> Figure:
        """Time-weighted mean queue length over each interval, per port (per queue of a
        port with several); by default the ports with the longest mean queue."""
        self._need("queue")
        p = self.res.port_series
        per_rep = p.groupby(["replication", "port", "queue", "start_s", "end_s"], sort=False)["mean_len_pkts"].sum().reset_index()
        q = _mean_over_replications(per_rep, ["port", "queue"], ["mean_len_pkts"])
        if ports is None:
            # The ports with the longest mean queues, leaving out those that hardly queue
            # (below 2 % of the longest) and would only lie flat on the axis.
            busiest = q.groupby("port")["mean_len_pkts"].mean()
            ports = list(busiest[busiest >= 0.02 * busiest.max()].nlargest(4).index)
        fig, ax = _figure()
        for port in ports:
            part = q[q["port"] == port]
            queues = sorted(part["queue"].unique())
            for queue in queues:
                label = port if len(queues) == 1 else f"{port} {self.res.queue_label(port, queue)}"
                _stairs(ax, part[part["queue"] == queue], "mean_len_pkts", linewidth=1.4, label=label)
        self._title(ax, f"time-weighted mean queue length, {self._interval_note(q)}")
        _finish(ax, "time (s)", "mean queue length (packets)", "port")
        return fig

    def aqm(self, ports: list[str] | None = None) -> Figure:
        """RED / MRED average queue size over time, per precedence, with the instantaneous
        size it was computed from (thin), as the queues' `series` sampled them."""
        self._need("aqm")
        s = self.res.queue_series
        s = s[s["replication"] == s["replication"].min()]
        if ports is None:  # the queues that ever held a packet
            held = s.groupby("port", sort=False)["len"].max()
            ports = list(held[held > 0].index) or list(held.index[:1])
        from matplotlib.figure import Figure

        fig = Figure(figsize=(8.5, 1.0 + 2.6 * len(ports)), layout="constrained")
        axes = fig.subplots(len(ports), 1, squeeze=False, sharex=True)[:, 0]
        for ax, port in zip(axes, ports, strict=True):
            part = s[s["port"] == port]
            unit = "packets" if (part["unit"] == "pkts").all() else "bytes"
            for i, ((queue, prec), g) in enumerate(part.groupby(["queue", "precedence"], sort=True)):
                color = f"C{i}"
                label = f"{self.res.queue_label(port, queue)} precedence {prec}" if part["queue"].nunique() > 1 else f"precedence {prec}"
                ax.plot(g["time_s"], g["len"], color=color, linewidth=0.6, alpha=0.35)
                ax.plot(g["time_s"], g["avg"], color=color, linewidth=1.6, label=f"{label} average")
            ax.set_title(port, fontsize="small", loc="left")
            _finish(ax, "time (s)" if ax is axes[-1] else "", f"queue size ({unit})", "RED")
        n = self.res.replications
        note = f" (first of {n} replications)" if n > 1 else ""
        fig.suptitle(f"{self.res.name}: RED average (thick) and instantaneous size (thin){note}", x=0.01, ha="left", fontsize="medium")
        return fig

    # -- TCP -----------------------------------------------------------------------------

    def cwnd(self, flows: list[str] | None = None) -> Figure:
        """Congestion window (solid) and slow-start threshold (dashed) of the TCP flows
        that recorded a series, in KB; the first MAX_LINES / 2 of them by default."""
        self._need("cwnd")
        s = self.res.series
        s = s[s["replication"] == s["replication"].min()]
        names = list(dict.fromkeys(s["flow"]))
        shown = names[: MAX_LINES // 2] if flows is None else flows
        fig, ax = _figure()
        for i, name in enumerate(shown):
            g = s[s["flow"] == name]
            ax.step(g["time_s"], g["cwnd_bytes"] / 1e3, where="post", color=f"C{i}", linewidth=1.3, label=f"{name} cwnd")
            ax.step(g["time_s"], g["ssthresh_bytes"] / 1e3, where="post", color=f"C{i}", linewidth=1.0, linestyle="--", label=f"{name} ssthresh")
        which = "congestion window and ssthresh" + ("" if len(shown) == len(names) else f" of {len(shown)} of {len(names)} flows")
        self._title(ax, which, "first of")
        _finish(ax, "time (s)", "bytes (KB)", "flow")
        return fig

    # -- distributions -------------------------------------------------------------------

    def delay(self) -> Figure:
        """Distribution (CDF) of the one-way delay of the packets of each class."""
        return self._cdf("delay", "one-way delay (ms)")

    def jitter(self) -> Figure:
        """Distribution (CDF) of the jitter (RFC 2598 A.3, adjacent packets of a flow) of
        each class."""
        return self._cdf("jitter", "jitter (ms)")

    def _cdf(self, metric: str, xlabel: str) -> Figure:
        import numpy as np

        self._need(metric)
        d = self.res.distributions
        d = d[d["metric"] == metric].merge(self.res.flows[["replication", "flow", "dscp"]], on=["replication", "flow"])
        slots = d.groupby(["dscp", "low_ms", "high_ms"], sort=True)["count"].sum().reset_index()
        counted = "packets" if metric == "delay" else "pairs of packets"
        fig, ax = _figure()
        for name in dict.fromkeys(self.res.flows["dscp"]):
            g = slots[slots["dscp"] == name]
            if g.empty:
                continue
            cdf = g["count"].cumsum().to_numpy() / g["count"].sum()
            x = np.append(g["low_ms"].to_numpy()[:1], g["high_ms"].to_numpy())
            ax.step(x, np.append(0.0, cdf), where="post", linewidth=1.6, label=f"{self.res.class_label(name)}: {int(g['count'].sum()):,} {counted}")
        what = "one-way delay" if metric == "delay" else "jitter"
        self._title(ax, f"{what} per class", "all")
        _finish(ax, xlabel, f"fraction of {counted}", "DSCP")
        ax.set_ylim(0, 1.02)
        ax.set_xlim(left=0)
        return fig

    # -- conditioners --------------------------------------------------------------------

    def colors(self, conditioners: list[str] | None = None) -> Figure:
        """Rate of the packets each conditioner coloured green, yellow and red, stacked,
        per interval (a per-flow conditioner summed over its flows)."""
        import numpy as np

        self._need("colors")
        c = self.res.conditioner_series
        c = c.assign(conditioner=c["conditioner"].str.split("/", n=1).str[0])
        per_rep = c.groupby(["replication", "conditioner", "color", "start_s", "end_s"], sort=False)["rate_bps"].sum().reset_index()
        m = _mean_over_replications(per_rep, ["conditioner", "color"], ["rate_bps"])
        names = list(dict.fromkeys(m["conditioner"])) if conditioners is None else conditioners
        from matplotlib.figure import Figure

        fig = Figure(figsize=(8.5, 1.2 + 2.6 * len(names)), layout="constrained")
        axes = fig.subplots(len(names), 1, squeeze=False, sharex=True)[:, 0]
        for ax, name in zip(axes, names, strict=True):
            part = m[m["conditioner"] == name]
            grid = part.pivot_table(index=["start_s", "end_s"], columns="color", values="rate_bps", aggfunc="sum").sort_index()
            edges = np.append(grid.index.get_level_values(0).to_numpy(), grid.index.get_level_values(1).to_numpy()[-1:])
            below = np.zeros(len(grid))
            for color in ("green", "yellow", "red"):
                if color not in grid:
                    continue
                above = below + grid[color].fillna(0).to_numpy() / 1e6
                ax.stairs(above, edges, baseline=below, fill=True, color=COLOR_FILLS[color], alpha=0.8, label=color)
                below = above
            ax.set_title(name, fontsize="small", loc="left")
            _finish(ax, "time (s)" if ax is axes[-1] else "", "metered (Mbit/s)", "colour")
        n = self.res.replications
        note = f" (mean of {n} replications)" if n > 1 else ""
        fig.suptitle(f"{self.res.name}: packets per colour at each conditioner{note}", x=0.01, ha="left", fontsize="medium")
        return fig


def save(fig: Figure, out: Path, name: str, svg: bool) -> list[Path]:
    """Writes `fig` as out/<name>.png (and .svg), without the matplotlib version and date
    in the files (the same figure gives the same bytes)."""
    written = []
    for ext in ("png", "svg") if svg else ("png",):
        path = out / f"{name}.{ext}"
        fig.savefig(path, dpi=120, metadata={"Software": None} if ext == "png" else {"Date": None, "Creator": None})
        written.append(path)
    return written


def write_sweep_figure(sweep: Any, out: Path, svg: bool = False) -> list[Path]:
    """The sweep's figure (:func:`sweep_figure`) as out/sweep.png (and .svg)."""
    out.mkdir(parents=True, exist_ok=True)
    return save(sweep_figure(sweep), out, "sweep", svg)


def write_figures(results: Any, kinds: list[str] | None, out: Path, svg: bool = False) -> list[Path]:
    """Draws `kinds` (default: every kind the results have data for) into the folder `out`
    as <kind>.png (and <kind>.svg); returns the files written."""
    plotter = Plotter(results)
    kinds = kinds or plotter.available()
    for kind in kinds:
        if kind not in KINDS:
            rule = f"kinds: {', '.join(KINDS)}"
            raise ScenarioError(f"{kind!r}: no such figure; {rule}", "kind", repr(kind), rule)
        plotter._need(kind)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for kind in kinds:
        written += save(plotter.draw(kind), out, kind, svg)
    return written


def _tick(value: object) -> str:
    """A sweep axis value as a tick label: a table value (compact JSON: a whole queue) by
    its `type`, anything else as given, at most 24 characters."""
    text = str(value)
    if text.startswith("{"):
        import json

        try:
            table = json.loads(text)
        except ValueError:
            table = None
        kind = table.get("type") if isinstance(table, dict) else None
        if isinstance(kind, str):
            return kind
    return text if len(text) <= 24 else text[:23] + "…"


def sweep_figure(sweep: Any, columns: tuple[str, ...] = ("throughput_bps", "delay_mean_ms")) -> Figure:
    """A sweep's flows against its points: one panel per column of the flows table (by
    default throughput and mean delay), one line per flow, each point its mean over the
    replications with the 90 % Student-t interval as an error bar. The x axis is the
    sweep's axis (its values as labels; with several axes, every point's values)."""
    from matplotlib.figure import Figure

    s = sweep.summary("flows")
    axes_names = list(sweep.axes)
    points = s.drop_duplicates("point").sort_values("point")
    labels = [", ".join(_tick(row[a]) for a in axes_names) for _, row in points.iterrows()]
    x_of = {p: i for i, p in enumerate(points["point"])}
    fig = Figure(figsize=(8.5, 1.0 + 2.8 * len(columns)), layout="constrained")
    panels = fig.subplots(len(columns), 1, squeeze=False, sharex=True)[:, 0]
    for ax, column in zip(panels, columns, strict=True):
        scale, label = UNITS.get(column, (1.0, column))
        for i, flow in enumerate(dict.fromkeys(s["flow"])):
            g = s[s["flow"] == flow].sort_values("point")
            x = [x_of[p] + (i - 0.5) * 0.04 for p in g["point"]]  # side by side, bars apart
            ax.errorbar(x, g[column] / scale, yerr=g[f"{column}_ci"] / scale, marker="o", capsize=4, linewidth=1.4, label=str(flow))
        _finish(ax, "", label, "flow")
    last = panels[-1]
    last.set_xticks(range(len(labels)), labels)
    last.set_xlabel(" and ".join(axes_names) if axes_names else "point")
    n = int(s["n"].max()) if len(s) else 0
    name = sweep.manifest["scenario"].get("name") or "sweep"
    title = f"{name}: mean and 90 % interval over {n} replications per point"
    panels[0].set_title(title, fontsize="medium", loc="left")
    return fig


#: How a column of the flows table is drawn: its scale and its axis label.
UNITS = {
    "throughput_bps": (1e6, "throughput (Mbit/s)"),
    "goodput_bps": (1e6, "goodput (Mbit/s)"),
    "offered_bps": (1e6, "offered load (Mbit/s)"),
    "delay_mean_ms": (1.0, "mean one-way delay (ms)"),
    "delay_p99_ms": (1.0, "99th percentile of the delay (ms)"),
    "jitter_p90_ms": (1.0, "90th percentile of the jitter (ms)"),
    "dropped_pkts": (1.0, "packets dropped"),
}
