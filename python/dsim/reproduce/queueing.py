"""Queueing experiments whose answers are known analytically.

They check the engine itself (time, transmission, propagation, FIFO service, drop-tail
admission, random sources) against results that do not depend on any DiffServ document.
Each experiment is its set-up, its table of analytic values and its claims: nothing else.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .framework import (
    INVARIANT,
    Band,
    Claim,
    Experiment,
    Quantity,
    Runs,
    RunSet,
    Setup,
    Table,
    above,
    below,
    grid,
    registry,
)

FAMILY = "queueing"
PACKET_BITS = 8000  # 1000 B

# -- D/D/1 over three hops -------------------------------------------------------------------

#: 3 transmissions of 1000 B (10, 5, 10 Mbit/s) + 1, 10, 2 ms of propagation.
DD1_DELAY_MS = (PACKET_BITS / 10e6 + PACKET_BITS / 5e6 + PACKET_BITS / 10e6) * 1e3 + 1 + 10 + 2
EXACT = Band("exact arithmetic in integer nanoseconds; 1 ns for the float conversion", abs=1e-6)


def _dd1(runs: RunSet) -> dict[str, Quantity]:
    f = runs["dd1"].flows
    return {"delay/mean": f["delay_mean_ms"].to_numpy(), "delay/max": f["delay_max_ms"].to_numpy(), "delay/jitter max": f["jitter_max_ms"].to_numpy(),
            "throughput": f["throughput_bps"].to_numpy() / 1e6, "dropped": f["dropped_pkts"].to_numpy()}  # fmt: skip


registry.add(
    Experiment(
        "dd1", "D/D/1 across three hops: delay is transmission plus propagation", "analytic (deterministic queue)", FAMILY,
        setups=[Setup("dd1", "queueing/dd1.toml")], measure=_dd1, quick=Runs(2, "20s"), full=Runs(2, "200s"),
        tables=[
            Table("delay", "one-way delay", "3 x 0.8/1.6/0.8 ms transmission + 13 ms propagation", "ms", ("mean", "max", "jitter max"), ("delay",),
                  {("mean", "delay"): DD1_DELAY_MS, ("max", "delay"): DD1_DELAY_MS, ("jitter max", "delay"): 0.0},
                  lambda r, c: f"delay/{r}", EXACT, plot=None),
            Table("throughput", "throughput = offered load", "below every capacity", "Mbit/s", ("CBR",), ("throughput",), {("CBR", "throughput"): 2.0},
                  lambda r, c: "throughput", Band("the window holds a whole number of packets: 1 in 1000", rel=1e-3), plot=None),
        ],
        claims=[Claim("no-loss", "no packet is dropped (no queue ever forms)", "analytic", below("dropped", 0.5))],
        doc="One CBR flow at 2 Mbit/s through links of 10, 5 and 10 Mbit/s (1, 10 and 2 ms): no packet waits, so each "
        "one-way delay is 3 x transmission + propagation, exactly.",
    )
)


# -- two sources racing for a full drop-tail FIFO ----------------------------------------------


def _residual_survival(period: float, variation: float, grid_: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """P(R > r) for the time R from a random instant to the next packet of a source whose
    gaps are uniform on [(1-v)T, (1+v)T] (the renewal equilibrium residual: density
    P(G > r) / E[G])."""
    lo, hi = (1 - variation) * period, (1 + variation) * period
    gap_survival = np.clip((hi - grid_) / (hi - lo), 0.0, 1.0) if hi > lo else (grid_ < period).astype(float)
    density = gap_survival / period
    dr = grid_[1] - grid_[0]
    cdf = np.concatenate([[0.0], np.cumsum((density[1:] + density[:-1]) / 2) * dr])
    return 1.0 - cdf


def first_arrival_share(period_x: float, period_y: float, variation: float) -> float:
    """P(x's next packet comes before y's), both residuals at equilibrium and independent."""
    hi = (1 + variation) * max(period_x, period_y)
    g = np.linspace(0.0, hi, 200_001)
    sx = _residual_survival(period_x, variation, g)
    sy = _residual_survival(period_y, variation, g)
    return float(np.trapezoid(-np.gradient(sx, g) * sy, g))


CAPACITY = 5.0
SHARE_X = first_arrival_share(PACKET_BITS / 6e6, PACKET_BITS / 4e6, 0.10)
POISSON = {"flow[0].app": {"type": "poisson", "rate": "6Mbps", "size": "1000B"}, "flow[1].app": {"type": "poisson", "rate": "4Mbps", "size": "1000B"}}


def _overload(runs: RunSet) -> dict[str, Quantity]:
    out: dict[str, Quantity] = {}
    for name in ("CBR", "Poisson"):
        f = runs[name].flows
        tput = f.pivot(index="replication", columns="flow", values="throughput_bps") / 1e6
        loss = f.assign(loss=f["dropped_pkts"] / f["sent_pkts"]).pivot(index="replication", columns="flow", values="loss")
        out |= {f"{name}/x": tput["x"].to_numpy(), f"{name}/y": tput["y"].to_numpy(), f"{name}/total": tput.sum(axis=1).to_numpy(),
                f"{name}/loss gap": (loss["x"] - loss["y"]).abs().to_numpy()}
    return out


registry.add(
    Experiment(
        "fifo-overload", "Two sources overloading a drop-tail FIFO: who gets the freed places", "analytic (drop-tail race; PASTA)", FAMILY,
        setups=[Setup("CBR", "queueing/fifo-overload.toml"), Setup("Poisson", "queueing/fifo-overload.toml", POISSON)],
        measure=_overload, quick=Runs(5, "30s"), full=Runs(10, "300s"),
        tables=[
            Table("share", "throughput of each source", "renewal race (CBR), PASTA (Poisson)", "Mbit/s", ("CBR", "Poisson"), ("x", "y"),
                  grid(("CBR", "Poisson"), ("x", "y"), {"CBR": (CAPACITY * SHARE_X, CAPACITY * (1 - SHARE_X)), "Poisson": (3.0, 2.0)}),
                  lambda r, c: f"{r}/{c}", Band("sampling noise: about three 90 % half widths of the quick runs", rel=0.03), plot="columns"),
        ],
        claims=[
            Claim("poisson-equal-loss", "Poisson: both sources lose the same fraction (PASTA): loss ratios within 1 point", "analytic",
                  below("Poisson/loss gap", 0.01)),
            Claim("full", "the bottleneck is fully used by either pair of sources", "drop-tail FIFO, always backlogged",
                  above("CBR/total", CAPACITY * 0.998), kind=INVARIANT),
        ],
        doc="6 + 4 Mbit/s of 1000 B packets into a 5 Mbit/s link with 50 packets of buffer. The queue is always full, so "
        "every departure frees one place and the next arrival takes it. With near-periodic (CBR ±10 %) sources the faster "
        "one wins the race more often than its share of the load (2/3 rather than 3/5); with Poisson sources every "
        "arrival sees the same queue (PASTA), both lose the same fraction and the shares are 3 and 2 Mbit/s.",
    )
)


# -- M/D/1 against Pollaczek-Khinchine ----------------------------------------------------------

SERVICE_MS = PACKET_BITS / 10e6 * 1e3
LOADS = (0.5, 0.8, 0.9)


def _md1(runs: RunSet) -> dict[str, Quantity]:
    out: dict[str, Quantity] = {}
    for rho in LOADS:
        res = runs[f"rho {rho}"]
        out[f"wait/{rho}"] = res.flows["delay_mean_ms"].to_numpy() - SERVICE_MS
        out[f"queue/{rho}"] = res.queues[res.queues["port"] == "A->B"]["mean_len_pkts"].to_numpy()
    return out


PK = Band("sampling noise of a mean wait: about twice the 90 % half width at rho = 0.9", rel=0.05)
registry.add(
    Experiment(
        "md1", "M/D/1 queue against the Pollaczek-Khinchine formula", "analytic (Pollaczek-Khinchine)", FAMILY,
        setups=[Setup(f"rho {rho}", "queueing/md1.toml", {"flow[0].app.rate": f"{rho * 10:g}Mbps"}) for rho in LOADS],
        measure=_md1, quick=Runs(5, "100s"), full=Runs(20, "1000s"),
        tables=[
            Table("wq", "mean wait Wq = rho S / (2 (1 - rho))", "Pollaczek-Khinchine", "ms", LOADS, ("Wq",),
                  {(r, "Wq"): r * SERVICE_MS / (2 * (1 - r)) for r in LOADS}, lambda r, c: f"wait/{r}", PK, row_label="load rho"),
            Table("lq", "mean number waiting Lq = rho^2 / (2 (1 - rho))", "Pollaczek-Khinchine", "packets", LOADS, ("Lq",),
                  {(r, "Lq"): r**2 / (2 * (1 - r)) for r in LOADS}, lambda r, c: f"queue/{r}", PK, row_label="load rho"),
        ],
        doc="Poisson arrivals of 1000 B packets into a 10 Mbit/s link (service S = 0.8 ms) at loads 0.5, 0.8 and 0.9.",
    )
)
