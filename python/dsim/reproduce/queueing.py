"""Queueing experiments whose answers are known analytically.

They check the engine itself (time, transmission, propagation, FIFO service, drop-tail
admission, random sources) against results that do not depend on any DiffServ document.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .framework import Context, experiment

LINK_RATE = 10e6  # bit/s of the M/D/1 link
PACKET_BITS = 8000  # 1000 B


@experiment(
    "dd1",
    "D/D/1 across three hops: delay is transmission plus propagation",
    "analytic (deterministic queue)",
    families=("queueing",),
)
def dd1(ctx: Context) -> None:
    """One CBR flow at 2 Mbit/s through links of 10, 5 and 10 Mbit/s (1, 10 and 2 ms): no
    packet waits, so each one-way delay is 3 x transmission + propagation, exactly."""
    sc = ctx.scenario("queueing/dd1.toml")
    res = ctx.run(sc, replications=1, duration=ctx.pick("20s", "200s"))
    f = res.flows.iloc[0]
    tx = (PACKET_BITS / 10e6 + PACKET_BITS / 5e6 + PACKET_BITS / 10e6) * 1e3
    expected = tx + 1 + 10 + 2
    ctx.number("delay-mean", "mean one-way delay = 3.2 ms transmission + 13 ms propagation", published=expected, simulated=f["delay_mean_ms"], unit="ms", abs_tol=1e-6)
    ctx.number("delay-max", "maximum one-way delay (no packet ever waits)", published=expected, simulated=f["delay_max_ms"], unit="ms", abs_tol=1e-6)
    ctx.number("jitter", "largest RFC 2598 jitter between adjacent packets", published=0.0, simulated=f["jitter_max_ms"], unit="ms", abs_tol=1e-6)
    ctx.number("throughput", "throughput = offered load (below every capacity)", published=2.0, simulated=f["throughput_bps"] / 1e6, unit="Mbit/s", rel_tol=1e-3)
    ctx.claim("no-loss", "no packet is dropped", int(f["dropped_pkts"]) == 0, published=0, simulated=int(f["dropped_pkts"]))


def _residual_survival(period: float, variation: float, grid: np.ndarray) -> np.ndarray:
    """P(R > r) for the time R from a random instant to the next packet of a source whose
    gaps are uniform on [(1-v)T, (1+v)T] (the renewal equilibrium residual: density
    P(G > r) / E[G])."""
    lo, hi = (1 - variation) * period, (1 + variation) * period
    gap_survival = np.clip((hi - grid) / (hi - lo), 0.0, 1.0) if hi > lo else (grid < period).astype(float)
    density = gap_survival / period
    dr = grid[1] - grid[0]
    cdf = np.concatenate([[0.0], np.cumsum((density[1:] + density[:-1]) / 2) * dr])
    return 1.0 - cdf


def first_arrival_share(period_x: float, period_y: float, variation: float) -> float:
    """P(x's next packet comes before y's), both residuals at equilibrium and independent."""
    hi = (1 + variation) * max(period_x, period_y)
    grid = np.linspace(0.0, hi, 200_001)
    sx = _residual_survival(period_x, variation, grid)
    sy = _residual_survival(period_y, variation, grid)
    fx = -np.gradient(sx, grid)
    return float(np.trapezoid(fx * sy, grid))


@experiment(
    "fifo-overload",
    "Two sources overloading a drop-tail FIFO: who gets the freed places",
    "analytic (drop-tail race; PASTA)",
    families=("queueing",),
)
def fifo_overload(ctx: Context) -> None:
    """6 + 4 Mbit/s of 1000 B packets into a 5 Mbit/s link with 50 packets of buffer. The
    queue is always full, so every departure frees one place and the next arrival takes it.
    With near-periodic (CBR +-10 %) sources the faster one wins the race more often than its
    share of the load (2/3 rather than 3/5); with Poisson sources every arrival sees the
    same queue (PASTA), both lose the same fraction and the shares are 3 and 2 Mbit/s."""
    sc = ctx.scenario("queueing/fifo-overload.toml")
    reps = ctx.pick(5, 10)
    duration = ctx.pick("30s", "300s")
    capacity = 5.0
    share_x = first_arrival_share(8000 / 6e6, 8000 / 4e6, 0.10)
    rows = []
    res = ctx.run(sc, replications=reps, duration=duration)
    tput = res.flows.pivot(index="replication", columns="flow", values="throughput_bps") / 1e6
    ctx.number("cbr-total", "CBR: the bottleneck is fully used", published=capacity, simulated=tput.sum(axis=1), unit="Mbit/s", rel_tol=0.002)
    ctx.number("cbr-x", "CBR: 6 Mbit/s flow gets C x P(first after a departure)", published=capacity * share_x, simulated=tput["x"], unit="Mbit/s", rel_tol=0.02)
    ctx.number("cbr-y", "CBR: 4 Mbit/s flow gets the rest", published=capacity * (1 - share_x), simulated=tput["y"], unit="Mbit/s", rel_tol=0.03)
    rows += [("CBR", "x", capacity * share_x, tput["x"].mean()), ("CBR", "y", capacity * (1 - share_x), tput["y"].mean())]

    poisson = sc.copy()
    for i in (0, 1):
        poisson.set(f"flow[{i}].app", {"type": "poisson", "rate": ["6Mbps", "4Mbps"][i], "size": "1000B"})
    res = ctx.run(poisson, replications=reps, duration=duration)
    f = res.flows
    loss = f.assign(loss=f["dropped_pkts"] / f["sent_pkts"]).pivot(index="replication", columns="flow", values="loss")
    tput = f.pivot(index="replication", columns="flow", values="throughput_bps") / 1e6
    ctx.number("poisson-x", "Poisson: 6 Mbit/s flow gets 3/5 of the link", published=3.0, simulated=tput["x"], unit="Mbit/s", rel_tol=0.02)
    ctx.number("poisson-y", "Poisson: 4 Mbit/s flow gets 2/5 of the link", published=2.0, simulated=tput["y"], unit="Mbit/s", rel_tol=0.02)
    ctx.number("poisson-loss", "Poisson: equal loss ratios (x minus y)", published=0.0, simulated=loss["x"] - loss["y"], abs_tol=0.01)
    rows += [("Poisson", "x", 3.0, tput["x"].mean()), ("Poisson", "y", 2.0, tput["y"].mean())]
    ctx.table("Throughput (Mbit/s)", pd.DataFrame(rows, columns=["sources", "flow", "expected", "dsim"]))


@experiment(
    "md1",
    "M/D/1 queue against the Pollaczek-Khinchine formula",
    "analytic (Pollaczek-Khinchine)",
    families=("queueing",),
)
def md1(ctx: Context) -> None:
    """Poisson arrivals of 1000 B packets into a 10 Mbit/s link (service S = 0.8 ms) at
    loads rho = 0.5, 0.8, 0.9: mean wait Wq = rho S / (2 (1 - rho)) and mean number waiting
    Lq = rho^2 / (2 (1 - rho))."""
    sc = ctx.scenario("queueing/md1.toml")
    service_ms = PACKET_BITS / LINK_RATE * 1e3
    rows = []
    loads = (0.5, 0.8, 0.9)
    # One sweep: every load and replication runs in parallel on the executor.
    res = ctx.sweep(
        sc,
        {"flow[0].app.rate": [f"{rho * 10:g}Mbps" for rho in loads]},
        replications=ctx.pick(5, 20),
        duration=ctx.pick("100s", "1000s"),
    )
    for point, rho in enumerate(loads):
        wq = rho * service_ms / (2 * (1 - rho))
        lq = rho**2 / (2 * (1 - rho))
        flows, queues = res.flows[res.flows["point"] == point], res.queues[res.queues["point"] == point]
        waits = flows["delay_mean_ms"] - service_ms
        port = queues[queues["port"] == "A->B"]
        ctx.number(f"wq-{rho}", f"mean wait at rho = {rho}", published=wq, simulated=waits, unit="ms", rel_tol=0.05)
        ctx.number(f"lq-{rho}", f"mean number waiting at rho = {rho}", published=lq, simulated=port["mean_len_pkts"], unit="pkts", rel_tol=0.05)
        rows.append((rho, wq, waits.mean(), lq, port["mean_len_pkts"].mean()))
    table = pd.DataFrame(rows, columns=["rho", "Wq ms (P-K)", "Wq ms (dsim)", "Lq (P-K)", "Lq (dsim)"])
    ctx.table("M/D/1", table)
    ctx.figure("wait", _md1_figure(table, service_ms))


def _md1_figure(table: pd.DataFrame, service_ms: float):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 3.5))
    rho = np.linspace(0.05, 0.93, 200)
    ax.plot(rho, rho * service_ms / (2 * (1 - rho)), label="Pollaczek-Khinchine")
    ax.plot(table["rho"], table["Wq ms (dsim)"], "o", label="dsim")
    ax.set_xlabel("load rho")
    ax.set_ylabel("mean wait (ms)")
    ax.set_title("M/D/1, 1000 B packets at 10 Mbit/s")
    ax.legend()
    return fig
