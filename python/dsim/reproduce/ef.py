"""The arithmetic of the EF experiments of RFC 2598 appendix A.3 (seed 003), Tables 1-4.

Not registered as experiments yet: the document fills the bottleneck with FTP and HTTP
background traffic, which needs TCP (see scenarios/ef/figure6.toml). What is here is what
the experiments will need:

- the published tables, transcribed (:data:`TABLE1` ... :data:`TABLE4`);
- the service-to-arrival ratio of A.3.1 and the WRR weights / DRR quanta that realise it;
- the scheduler specs of the experiments (PQ, WRR, DRR with n queues);
- the jitter table of a run: 50th and 90th percentile of the target flows' jitter in % of
  a packet time at the subscribed rate;
- the VLL comparison of Table 4.

Defects and ambiguities of the document, and what dsim does with them:
- A.3.1 says "jitter (expressed as % of the subscribed EF rate)" and then "in percent of a
  packet time at the subscribed rate"; only the latter makes sense (it is how its packet
  times of 214 ms and 23 ms are used). dsim uses the packet time: ``jitter_p50_pct``.
- The minimum service-to-arrival ratio is 1.03 in the text ("we used a minimum ... of
  1.03", Tables 2 and 3) but "1.06" for the first experiment set and Table 1's caption.
  Table 1 is reproduced at 1.06, the others at 1.03.
- Table 3's first column is headed "# EF flows" although the experiment varies the number
  of queues with 8 flows (text and caption): the column is the number of queues.
- "the EF queue gets at least 31% of the output links" is 1.03 x 450 / 1500 = 30.9 %: the
  "peak arrival rate" in the ratio is the EF aggregate's subscribed rate (450 kbit/s), not
  the short-term peak of the +-10 % spacing. :func:`ef_share` follows that arithmetic.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from ..scenario import drr, klass, priority, wrr

#: Subscribed rate of an EF microflow, bit/s (A.3.1).
SUBSCRIBED_BPS = 56_000
#: The bottleneck, bit/s (A.3.1, figure 6).
BOTTLENECK_BPS = 1_500_000
#: The EF aggregate, "30% of the bottleneck link or 450 Kbps".
EF_AGGREGATE_BPS = 450_000
#: Packet sizes of the EF sources, bytes.
EF_PACKET_SIZES = (1500, 160)

# Published tables, values in % of a packet time at the subscribed rate.
#: Table 1: WRR at service/arrival 1.06, number of EF flows varies; PQ with 24 flows.
TABLE1 = pd.DataFrame(
    [
        ("PQ", 24, 1, 5, 17, 43),
        ("WRR", 2, 11, 47, 96, 513),
        ("WRR", 4, 12, 35, 100, 278),
        ("WRR", 8, 10, 25, 96, 126),
        ("WRR", 24, 18, 47, 96, 143),
    ],
    columns=["scheduler", "ef_flows", "p50_1500", "p90_1500", "p50_160", "p90_160"],
)
#: Table 2: 8 flows, 5 queues, the service/arrival ratio varies (None = PQ).
TABLE2 = pd.DataFrame(
    [
        ("PQ", None, 1, 3, 17, 43),
        ("WRR", 1.03, 14, 27, 100, 178),
        ("WRR", 1.30, 7, 21, 65, 113),
        ("WRR", 1.50, 5, 13, 57, 104),
        ("WRR", 1.70, 5, 13, 57, 100),
        ("WRR", 2.00, 5, 13, 57, 104),
        ("WRR", 3.00, 5, 13, 57, 100),
    ],
    columns=["scheduler", "ratio", "p50_1500", "p90_1500", "p50_160", "p90_160"],
)
#: Table 3: 8 flows, ratio 1.03, the number of queues varies (1500 B flow only).
TABLE3 = pd.DataFrame(
    [("PQ", None, 1, 3), ("WRR", 2, 7, 21), ("WRR", 4, 7, 21), ("WRR", 6, 8, 22), ("WRR", 8, 10, 23)],
    columns=["scheduler", "queues", "p50_1500", "p90_1500"],
)
#: Table 4: FTP over a VLL vs over a dedicated link, kbit/s.
TABLE4 = pd.DataFrame(
    [(20, 100, 90, 90), (40, 150, 143, 143), (60, 225, 213, 215)],
    columns=["link_pct_to_ef", "subscribed_kbps", "dedicated_kbps", "vll_kbps"],
)


def packet_time_ms(size_bytes: float, rate_bps: float) -> float:
    """The time a packet of `size_bytes` takes at `rate_bps`: 214 ms for 1500 B and 23 ms
    for 160 B at 56 kbit/s (A.3.1)."""
    if size_bytes <= 0 or rate_bps <= 0:
        raise ValueError(f"size ({size_bytes}) and rate ({rate_bps}) must be positive")
    return size_bytes * 8 / rate_bps * 1e3


def service_to_arrival_ratio(share: float, link_bps: float, ef_arrival_bps: float) -> float:
    """A.3.1: "the service rate of the EF queue (or the queue's minimum share of the output
    link) times the output link bandwidth divided by the peak arrival rate of EF-marked
    packets at the queue"."""
    if ef_arrival_bps <= 0:
        raise ValueError("the EF arrival rate must be positive")
    return share * link_bps / ef_arrival_bps


def ef_share(ratio: float, link_bps: float = BOTTLENECK_BPS, ef_arrival_bps: float = EF_AGGREGATE_BPS) -> float:
    """The EF queue's share of the link that gives service/arrival `ratio`:
    1.03 -> 0.309 at the bottleneck ("at least 31% of the output links")."""
    share = ratio * ef_arrival_bps / link_bps
    if not 0 < share < 1:
        raise ValueError(f"ratio {ratio} needs an EF share of {share:.3f} of the link; it must lie in (0, 1)")
    return share


def drr_quanta(ratio: float, queues: int, *, link_bps: float = BOTTLENECK_BPS, ef_arrival_bps: float = EF_AGGREGATE_BPS, other_quantum: int = 1500) -> tuple[int, int]:
    """DRR quanta (EF, each non-EF queue) in bytes realising at least `ratio`: the non-EF
    queues get `other_quantum` each (one MTU: the shortest rounds, so the least EF jitter),
    EF gets q_e = share / (1 - share) x (queues - 1) x other_quantum, rounded up. With every
    queue backlogged DRR's byte shares are q_i / sum(q) (Shreedhar & Varghese)."""
    if queues < 2:
        raise ValueError("a round robin for EF needs the EF queue and at least one other")
    share = ef_share(ratio, link_bps, ef_arrival_bps)
    q_ef = math.ceil(share / (1 - share) * (queues - 1) * other_quantum - 1e-9)
    return q_ef, other_quantum


def wrr_share(ef_weight: int, other_weight: int, queues: int, ef_mean_packet: float, other_mean_packet: float = 1500) -> float:
    """EF's byte share of the link under packet-weighted WRR with every queue backlogged:
    w_e s_e / (w_e s_e + (queues - 1) w_o s_o), s = mean packet sizes."""
    ef = ef_weight * ef_mean_packet
    return ef / (ef + (queues - 1) * other_weight * other_mean_packet)


def wrr_weights(
    ratio: float,
    queues: int,
    ef_mean_packet: float,
    *,
    other_mean_packet: float = 1500,
    link_bps: float = BOTTLENECK_BPS,
    ef_arrival_bps: float = EF_AGGREGATE_BPS,
    tolerance: float = 0.01,
    max_weight: int = 64,
) -> tuple[int, int, float]:
    """Integer WRR weights (EF, each non-EF queue), in packets, whose byte share gives a
    service/arrival ratio of at least `ratio` and at most `ratio` x (1 + `tolerance`), with
    the smallest weights that do (short rounds: less EF jitter). Returns the weights and
    the ratio they achieve. Weights in packets give byte shares only through the mean
    packet sizes (the EF aggregate mixes 160 B and 1500 B packets: see
    :func:`mean_packet_bytes`); if no pair up to `max_weight` is within the tolerance, the
    closest pair above `ratio` is returned."""
    if queues < 2:
        raise ValueError("a round robin for EF needs the EF queue and at least one other")
    share = ef_share(ratio, link_bps, ef_arrival_bps)
    best: tuple[int, int, float] | None = None
    for w_o in range(1, max_weight + 1):
        w_e = max(1, math.ceil(share / (1 - share) * (queues - 1) * w_o * other_mean_packet / ef_mean_packet - 1e-9))
        achieved = service_to_arrival_ratio(wrr_share(w_e, w_o, queues, ef_mean_packet, other_mean_packet), link_bps, ef_arrival_bps)
        if best is None or achieved < best[2]:
            best = (w_e, w_o, achieved)
        if achieved <= ratio * (1 + tolerance):
            return w_e, w_o, achieved
    assert best is not None
    return best


def mean_packet_bytes(flows: list[tuple[float, float]]) -> float:
    """Mean packet size, by packet count, of an aggregate of CBR flows given as
    (rate bit/s, size bytes): total bytes / total packets. 4 flows of 1500 B and 4 of
    160 B, all at 56 kbit/s: 289.2 B."""
    byte_rate = sum(r / 8 for r, _ in flows)
    pkt_rate = sum(r / 8 / s for r, s in flows)
    return byte_rate / pkt_rate


def non_ef_codepoints(queues: int) -> list[str]:
    """The codepoint of each non-EF queue of an n-queue scheduler: CS1 ... CS(n-2), then BE
    in the last (default) queue. Background flows marked with these are split among the
    non-EF queues, as in A.3.1 ("splitting the non-EF-marked traffic among the non-EF
    queues")."""
    if not 2 <= queues <= 8:
        raise ValueError("2 to 8 queues: EF, up to six class selectors and the default")
    return [f"CS{k}" for k in range(1, queues - 1)] + ["BE"]


def scheduler_spec(
    kind: str,
    *,
    queues: int = 2,
    ratio: float | None = None,
    ef_mean_packet: float | None = None,
    link_bps: float = BOTTLENECK_BPS,
    ef_arrival_bps: float = EF_AGGREGATE_BPS,
    pq_limit_rate: str = "600kbps",
    pq_limit_burst: str = "12000B",
    ef_limit: str = "50p",
    other_limit: str = "100p",
) -> dict[str, Any]:
    """The queue spec of a router egress for one experiment: ``"pq"`` (EF first, with the
    RFC 2598 section 2.1 limiter; everything else in one default queue), ``"wrr"`` or
    ``"drr"`` (EF and `queues` - 1 others, sized for service/arrival `ratio`; WRR needs
    the EF aggregate's `ef_mean_packet`)."""
    ef_q = {"type": "droptail", "limit": ef_limit}
    other_q = {"type": "droptail", "limit": other_limit}
    if kind == "pq":
        return priority(klass("EF", limit_rate=pq_limit_rate, limit_burst=pq_limit_burst, queue=ef_q), klass(default=True, queue=other_q))
    if ratio is None:
        raise ValueError(f"a {kind} spec needs the service/arrival ratio")
    codepoints = non_ef_codepoints(queues)

    def others(**share: Any) -> list[dict[str, Any]]:
        return [klass(d, default=True if d == "BE" else None, queue=other_q, **share) for d in codepoints]

    if kind == "wrr":
        if ef_mean_packet is None:
            raise ValueError("WRR weights are in packets: give the EF aggregate's mean packet size")
        w_e, w_o, _ = wrr_weights(ratio, queues, ef_mean_packet, link_bps=link_bps, ef_arrival_bps=ef_arrival_bps)
        return wrr(klass("EF", weight=w_e, queue=ef_q), *others(weight=w_o))
    if kind == "drr":
        q_e, q_o = drr_quanta(ratio, queues, link_bps=link_bps, ef_arrival_bps=ef_arrival_bps)
        return drr(klass("EF", quantum=f"{q_e}B", queue=ef_q), *others(quantum=f"{q_o}B"))
    raise ValueError(f"scheduler {kind!r}: choose 'pq', 'wrr' or 'drr'")


def jitter_table(flows: pd.DataFrame, targets: dict[str, str]) -> pd.DataFrame:
    """The jitter columns of Tables 1-3 from a run's flows table: for each label (e.g.
    ``"1500"``) the target flow's 50th and 90th percentile jitter in % of its packet time
    at the subscribed rate, mean over replications (``p50_<label>``, ``p90_<label>``),
    and the replications counted (``n``)."""
    row: dict[str, Any] = {}
    n = None
    for label, flow in targets.items():
        f = flows[flows["flow"] == flow]
        if f.empty:
            raise KeyError(f"no flow named {flow!r} in the results")
        row[f"p50_{label}"] = float(f["jitter_p50_pct"].mean())
        row[f"p90_{label}"] = float(f["jitter_p90_pct"].mean())
        n = len(f) if n is None else min(n, len(f))
    row["n"] = n
    return pd.DataFrame([row])


def vll_gap(vll_bps: float, dedicated_bps: float) -> float:
    """Relative difference of the VLL FTP rate from the dedicated-link rate (Table 4's
    claim: within 3 %)."""
    if dedicated_bps <= 0:
        raise ValueError("the dedicated-link rate must be positive")
    return abs(vll_bps - dedicated_bps) / dedicated_bps
