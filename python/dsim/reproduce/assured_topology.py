"""The scenario files of the Assured Service experiments (seed 002,
draft-ibanez-diffserv-assured-eval-00), and the variants the experiments derive from them.

The files in ``python/dsim/scenarios/as/`` are the truth a user reads and runs
(``dsim run``); they are long (one access link, one flow and one profiler per host), so this
module writes them, and a test checks that the committed files are what it writes
(``python -m dsim.reproduce.assured_topology`` rewrites them). Every setting the document
gives is cited in the file's header; every choice it leaves open is stated there with its
reason.

The experiments change a file in only three ways, all named after the document's words:
which hosts are AS capable (:func:`assured_hosts`: the profilers and the aggregate
policer's rate, "the sum of the targets"), the profile meter (:func:`use_tsw`: section
2.1.3's average rate estimator instead of the token bucket), and the CBR source of section
3.3 (:func:`cbr_source`).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .. import units
from ..scenario import Scenario

# -- what the document states (section 2.2 unless said otherwise) -------------------------

#: "Packet are 576 bytes": ns-2's packet size, headers included, so the TCP MSS is
#: 576 - 40 = 536 B and the CBR datagrams are 576 B.
PACKET_BYTES = 576
MSS_BYTES = PACKET_BYTES - 40
#: "10 Mbps links connect each host to its respective router".
ACCESS_RATE = "10Mbps"
#: The profiler's token bucket (section 2.1.3: "20 Kbytes at the profilers and 25 Kbytes at
#: the policer").
PROFILER_DEPTH = "20KB"
POLICER_DEPTH = "25KB"
#: Codepoints: IN-marked packets carry AF11; OUT = unmarked = best effort (section 2.3:
#: "OUT packets are treated the same as packets which are not profiled").
IN_DSCP = "AF11"
OUT_DSCP = "BE"

# -- what dsim chooses where the document is silent (stated in every file) ----------------

#: One-way propagation delay of the bottleneck, the same for every connection; the rest of
#: a connection's round trip is split evenly over its two access links.
BOTTLENECK_DELAY_MS = 5.0
#: Seed of the draw of the 50 round-trip times (drawn once: every run uses the same RTTs,
#: as the document's figures plot each connection at its RTT averaged over runs).
RTT_SEED = 2002
#: Buffers of every non-bottleneck queue: large enough never to drop, so that all losses
#: happen in the RIO queue the document studies and ACKs are never lost (section 2.2).
UNCONGESTED_LIMIT = "5000p"
#: ns-2's TCP agents: one ACK per segment, window growth counted in packets, initial window
#: of one segment (ns-2's windowInit_ 1); a receiver window that never limits.
TCP = {
    "variant": "sack",
    "mss": f"{MSS_BYTES}B",
    "window": "1MB",
    "initial_window": "1p",
    "delayed_ack": False,
    "counting": "packets",
}
#: The TSW window length for section 2.1.3 (the document does not give its win_length).
TSW_WINDOW = "1s"

SCENARIO_DIR = Path(__file__).resolve().parent.parent / "scenarios" / "as"


def rio(limit: int, out: tuple[int, int, float], in_: tuple[int, int, float], *, mean_pkt: int = PACKET_BYTES) -> dict[str, Any]:
    """RIO as coupled two-precedence MRED: IN (AF11) averaged over IN packets, OUT (every
    other codepoint) over all packets (section 2.1.1), wq 0.002 (section 2.1.2)."""
    return {
        "type": "mred",
        "limit": f"{limit}p",
        "mode": "coupled",
        "wq": 0.002,
        "mean_pkt_size": f"{mean_pkt}B",
        "precedence": [
            {"dscp": [IN_DSCP], "min_th": f"{in_[0]}p", "max_th": f"{in_[1]}p", "max_p": in_[2]},
            {"min_th": f"{out[0]}p", "max_th": f"{out[1]}p", "max_p": out[2]},
        ],
    }


def rtts_ms(n: int = 50, seed: int = RTT_SEED) -> list[float]:
    """The round-trip propagation times of section 2.2 ("chosen randomly in the range
    50..150ms for each connection"), rounded to 0.2 ms so each access link's delay is a
    whole number of microseconds."""
    draws = np.random.default_rng(seed).uniform(50.0, 150.0, n)
    return [round(float(x) / 0.2) * 0.2 for x in draws]


def access_delay_us(rtt_ms: float) -> int:
    """One access link's one-way delay: RTT = 2 x (2 x access + bottleneck)."""
    return round((rtt_ms / 2 - BOTTLENECK_DELAY_MS) / 2 * 1000)


def profiler(host: str, target: str, depth: str = PROFILER_DEPTH) -> dict[str, Any]:
    """The profile meter of an AS-capable host (appendix: "attached directly to a packet
    source"): token bucket at the target rate; IN packets marked AF11, the others left
    unmarked."""
    return {
        "name": f"profiler-{host}",
        "at": host,
        "meter": {"type": "token_bucket", "rate": target, "depth": depth},
        "green": {"mark": IN_DSCP},
    }


def policer(at: str, toward: str, rate: str, depth: str = POLICER_DEPTH, name: str = "policer") -> dict[str, Any]:
    """The aggregate policer (sections 2.2 and appendix): IN packets beyond its token
    bucket are demoted to OUT; OUT packets are not metered."""
    return {
        "name": name,
        "at": at,
        "side": "egress",
        "interface": toward,
        "match": {"dscp": [IN_DSCP]},
        "meter": {"type": "token_bucket", "rate": rate, "depth": depth},
        "red": {"demote": OUT_DSCP},
    }


def ftp_flow(i: int, src: str, dst: str) -> dict[str, Any]:
    return {"name": f"c{i}", "src": src, "dst": dst, "start": {"uniform": ["0s", "1s"]}, "app": {"type": "ftp"}, "tcp": dict(TCP)}


def _rate(bps: float) -> str:
    """A rate string without float noise: 15.2 Mbit/s -> "15200kbps"."""
    kbps = round(bps / 1000)
    if kbps % 1000 == 0:
        return f"{kbps // 1000}Mbps"
    return f"{kbps}kbps"


def dumbbell(
    *,
    connections: int,
    bottleneck: str,
    queue: dict[str, Any],
    rtts: Sequence[float],
    targets: Sequence[str | None],
    name: str,
    description: str,
    duration: str,
    warmup: str,
    replications: int,
) -> Scenario:
    """Figure 1: hosts h0..h{n-1} send to h{n}..h{2n-1} through r0 -> r1 (the bottleneck);
    connection i is h_i -> h_{i+n} with round trip rtts[i]; targets[i] is the profiler
    target of an AS-capable host (None: best effort)."""
    n = connections
    sc = Scenario(duration=duration, warmup=warmup, seed=2, replications=replications, name=name, description=description)
    sc.hosts(*[f"h{i}" for i in range(2 * n)]).routers("r0", "r1")
    big = {"type": "droptail", "limit": UNCONGESTED_LIMIT}
    for i in range(n):
        sc.link(f"h{i}", "r0", rate=ACCESS_RATE, delay=f"{access_delay_us(rtts[i])}us", queue=big)
    sc.link("r0", "r1", rate=bottleneck, delay=f"{BOTTLENECK_DELAY_MS:g}ms", queue=big, forward={"queue": queue})
    for i in range(n):
        sc.link("r1", f"h{i + n}", rate=ACCESS_RATE, delay=f"{access_delay_us(rtts[i])}us", queue=big)
    for i in range(n):
        sc.flow(**ftp_flow(i, f"h{i}", f"h{i + n}"))
    sc.data["conditioner"] = [profiler(f"h{i}", t) for i, t in enumerate(targets) if t is not None]
    total = sum(meter_rate_bps(sc.data["conditioner"], k) for k in range(len(sc.data["conditioner"])))
    if total:
        sc.data["conditioner"].append(policer("r0", "r1", _rate(total)))
    return sc


def meter_rate_bps(conditioners: Sequence[dict[str, Any]], k: int) -> int:
    """The rate of the token bucket of ``conditioner[k]`` (a profiler or the policer), bit/s."""
    return units.rate_bps(conditioners[k]["meter"]["rate"], f"conditioner[{k}].meter.rate")


# -- the files ----------------------------------------------------------------------------


def rtt_scenario() -> Scenario:
    """Sections 2.2 and 3.1 (figures 2-6) and 3.4 (figure 13): 50 connections, 25 AS."""
    return dumbbell(
        connections=50,
        bottleneck="50Mbps",
        queue=rio(1050, (420, 840, 0.05), (500, 840, 0.02)),
        rtts=rtts_ms(50),
        targets=["1Mbps"] * 25 + [None] * 25,
        name="as-rtt",
        description="Seed 002 figure 1: 50 TCP SACK connections, RTT 50-150 ms, 50 Mbit/s RIO bottleneck; hosts h0-h24 AS (1 Mbit/s)",
        duration="100s",
        warmup="5s",
        replications=5,
    )


#: Table 1's targets by host ID (section 3.2).
TABLE1_TARGETS = ["2Mbps"] * 4 + ["1Mbps"] * 4 + ["500kbps"] * 4 + ["200kbps"] * 4 + ["100kbps"] * 4


def targets_scenario() -> Scenario:
    """Section 3.2 (Table 1, figure 7): 40 connections, 20 AS with targets 2/1/0.5/0.2/0.1."""
    return dumbbell(
        connections=40,
        bottleneck="20Mbps",
        queue=rio(868, (347, 694, 0.05), (390, 694, 0.02)),
        rtts=[100.0] * 40,
        targets=TABLE1_TARGETS + [None] * 20,
        name="as-targets",
        description="Seed 002 section 3.2: 40 TCP SACK connections, RTT 100 ms, 20 Mbit/s RIO bottleneck; 20 AS with targets 2/1/0.5/0.2/0.1 Mbit/s",
        duration="100s",
        warmup="5s",
        replications=10,
    )


#: Section 3.3: the connection of the CBR source (one of the ten best-effort ones).
CBR_CONNECTION = 19


def cbr_scenario() -> Scenario:
    """Section 3.3 (figures 10-12): 20 connections, 10 AS TCP, 9 BE TCP and a BE CBR source."""
    sc = dumbbell(
        connections=20,
        bottleneck="20Mbps",
        queue=rio(434, (173, 347, 0.05), (195, 347, 0.02)),
        rtts=[100.0] * 20,
        targets=["1Mbps"] * 10 + [None] * 10,
        name="as-cbr",
        description="Seed 002 section 3.3: 10 AS + 9 BE TCP SACK connections and a best-effort CBR source, RTT 100 ms, 20 Mbit/s RIO bottleneck",
        duration="100s",
        warmup="5s",
        replications=5,
    )
    return cbr_source(sc, rate="4Mbps")


def cbr_source(sc: Scenario, *, rate: str, target: str | None = None) -> Scenario:
    """Connection CBR_CONNECTION becomes a CBR source of 576 B datagrams at `rate`; with a
    `target` it is AS capable (a profiler at its host, the policer's rate raised by it)."""
    sc = sc.copy()
    i = CBR_CONNECTION
    flow = sc.data["flow"][i]
    flow.pop("tcp", None)
    flow["app"] = {"type": "cbr", "rate": rate, "size": f"{PACKET_BYTES}B"}
    if target is not None:
        k = next(k for k, c in enumerate(sc.data["conditioner"]) if c["name"] == "policer")
        pol = sc.data["conditioner"][k]
        conds = [c for c in sc.data["conditioner"] if c is not pol]
        conds.append(profiler(f"h{i}", target))
        policed = meter_rate_bps(sc.data["conditioner"], k) + units.rate_bps(target, "target")
        conds.append(policer(pol["at"], pol["interface"], _rate(policed)))
        sc.data["conditioner"] = conds
    return sc


def assured_hosts(sc: Scenario, count: int, target: str = "1Mbps", *, meter: str = "token_bucket") -> Scenario:
    """The 50-connection scenario with hosts h0..h{count-1} AS capable (profilers with
    `target`) and the rest best effort; the aggregate policer's rate is the sum of the
    targets (none when count = 0). `meter` "tsw" uses section 2.1.3's average rate
    estimator at the profilers (the policer stays a token bucket)."""
    sc = sc.copy()
    sc.data["conditioner"] = [profiler(f"h{i}", target) for i in range(count)]
    if count:
        pol = policer("r0", "r1", _rate(count * units.rate_bps(target, "target")))
        sc.data["conditioner"].append(pol)
    return use_tsw(sc) if meter == "tsw" else sc


def use_tsw(sc: Scenario, window: str = TSW_WINDOW) -> Scenario:
    """Every host profiler meters with the appendix's time sliding window estimator and
    probabilistic tagger at its target instead of a token bucket."""
    sc = sc.copy()
    for c in sc.data.get("conditioner", []):
        if c["name"].startswith("profiler-"):
            c["meter"] = {"type": "tsw", "target": c["meter"]["rate"], "window": window}
    return sc


# -- the merging topology (section 3.5, figure 14) ----------------------------------------

#: Reconstruction of figure 14 (not in the text): the tree of policers the rates imply.
MERGE_TREE = {"r0": "r4", "r1": "r4", "r2": "r5", "r3": "r5", "r4": "r6", "r5": "r6", "r6": "r7"}
MERGE_POLICER_KBPS = {"r0": 200, "r1": 200, "r2": 200, "r3": 200, "r4": 400, "r5": 400, "r6": 800}
#: Link rates of the "decreasing bandwidth hierarchy" (dsim's choice, T1 at the end).
MERGE_RATES = {"host": "10Mbps", "r0-r3": "6Mbps", "r4-r5": "3Mbps", "r6": "1.5Mbps"}
#: One-way delays (dsim's choice): 5 + 5 + 10 + 25 + 5 ms = 50 ms, a 100 ms round trip.
MERGE_DELAYS = {"host": "5ms", "r0-r3": "5ms", "r4-r5": "10ms", "r6": "25ms", "dest": "5ms"}
MERGE_PACKET = 1500


def merge_scenario() -> Scenario:
    """Section 3.5: eight AS hosts merging through r0-r3, r4-r5 and r6 into a T1."""
    sc = Scenario(
        duration="100s",
        warmup="5s",
        seed=2,
        replications=5,
        name="as-merge",
        description="Seed 002 section 3.5, figure 14 (reconstructed): 8 AS TCP SACK connections merging into a T1, policers at every node",
    )
    hosts = [f"h{i}" for i in range(16)]
    sc.hosts(*hosts).routers(*[f"r{k}" for k in range(8)])
    big = {"type": "droptail", "limit": UNCONGESTED_LIMIT}
    for i in range(8):
        sc.link(f"h{i}", f"r{i // 2}", rate=MERGE_RATES["host"], delay=MERGE_DELAYS["host"], queue=big)
    for k in range(4):
        sc.link(f"r{k}", MERGE_TREE[f"r{k}"], rate=MERGE_RATES["r0-r3"], delay=MERGE_DELAYS["r0-r3"], queue=big)
    for k in (4, 5):
        sc.link(f"r{k}", "r6", rate=MERGE_RATES["r4-r5"], delay=MERGE_DELAYS["r4-r5"], queue=big)
    t1 = rio(24, (4, 9, 0.05), (5, 9, 0.02), mean_pkt=MERGE_PACKET)
    sc.link("r6", "r7", rate=MERGE_RATES["r6"], delay=MERGE_DELAYS["r6"], queue=big, forward={"queue": t1})
    for i in range(8):
        sc.link("r7", f"h{i + 8}", rate=MERGE_RATES["host"], delay=MERGE_DELAYS["dest"], queue=big)
    tcp = dict(TCP, mss=f"{MERGE_PACKET - 40}B")
    for i in range(8):
        sc.flow(**dict(ftp_flow(i, f"h{i}", f"h{i + 8}"), tcp=tcp))
    conds = [profiler(f"h{i}", "100kbps", depth=f"{4 * MERGE_PACKET}B") for i in range(8)]
    for node, parent in MERGE_TREE.items():
        rate = f"{MERGE_POLICER_KBPS[node]}kbps"
        conds.append(policer(node, parent, rate, depth=f"{6 * MERGE_PACKET}B", name=f"policer-{node}"))
    sc.data["conditioner"] = conds
    return sc


# -- writing the files --------------------------------------------------------------------

COMMON_HEADER = """\
# Common to the seed 002 files (draft-ibanez-diffserv-assured-eval-00, sections 2.1-2.2 and
# the appendix); generated by python/dsim/reproduce/assured_topology.py (do not edit by
# hand: edit the generator and run `python -m dsim.reproduce.assured_topology`).
#
# What the document states:
# - "Infinite" FTPs over ns-2's SACK TCP agents; starts uniform in the first second;
#   "ACKs are never lost".
# - Profiler (the "profile meter" attached to each AS-capable source): a token bucket at
#   the target rate, IN packets marked AF11, the others left unmarked (= OUT = best
#   effort). Aggregate policer: a token bucket at the sum of the targets of the hosts
#   behind it (dsim's reading of "the aggregate"), IN packets beyond it demoted to OUT.
# - RIO (section 2.1.1): OUT packets judged on the average of all packets, IN packets on
#   the average of IN packets = dsim's coupled MRED; wq = 0.002 (section 2.1.2). Notation
#   minth_out/maxth_out/maxp_out minth_in/maxth_in/maxp_in.
# - Seed defect: section 2.1.2 prints "420/840/0.05 for IN parameters,
#   and 500/840/0.02 for OUT parameters"; by its own rules (OUT min 0.4 maxq, max_p 0.05;
#   IN min 0.45 maxq, max_p 0.02) the labels are swapped: OUT 420/840/0.05, IN
#   500/840/0.02. Likewise 347/694/0.05 390/694/0.02 (section 3.2), 173/347/0.05
#   195/347/0.02 (section 3.3) and 4/9/0.05 5/9/0.02 (section 3.5) are OUT then IN.
#
# What the document leaves open and dsim chooses:
# - Every queue but the RIO bottleneck (host egress, access links, the reverse direction
#   of the bottleneck) is a 5000-packet drop-tail that never fills: all losses happen in
#   the RIO queue the document studies, and ACKs (40 B, on an uncongested reverse path)
#   are never lost, as the document says. The experiments check that no ACK is dropped.
# - TCP, as ns-2's agents: SACK, one ACK per segment (delayed_ack = false), window growth
#   counted in packets, initial window 1 segment (ns-2 windowInit_ 1). The document does
#   not give the maximum window; ns-2's default (20 packets) cannot give the rates of
#   Table 1 (1.3 Mbit/s at 100 ms needs over 30 packets), so it was raised; dsim uses a
#   1 MB receiver window that never limits. RTO: dsim's defaults (RFC 6298, min 200 ms).
# - Measured rate = goodput (payload bytes delivered in order per second): Table 1's rates
#   add up to 18.6 of 20 Mbit/s and figure 13's to 5.75 of 6.25 Mbytes/s, both 93 % =
#   536/576 of a full link, i.e. payload rates.
# - Run length: the document does not state it (figures 8-9 show at least 15 s). dsim runs
#   100 s and leaves out the first 5 s (start-up); quick mode (tests, `make run`) runs
#   less (see python/dsim/reproduce/assured.py).
"""

DUMBBELL_HEADER = """\
# The dumbbell of figure 1 (section 2.2):
# - Host h_i sends to h_{i+n} over its own 10 Mbit/s access links through the bottleneck
#   r0 -> r1; the profilers are 20 KB deep and the policer, at r0's egress toward r1
#   ("the router just before the bottleneck link"), 25 KB (section 2.1.3).
# - "Packet are 576 bytes": ns-2 packet sizes include the headers, so the TCP MSS is 536 B
#   (536 + 40 B of TCP/IP headers = 576 B IP datagrams) and CBR datagrams are 576 B.
# - Round-trip times are propagation RTTs (dsim's reading). The bottleneck's one-way delay
#   is fixed at 5 ms for every connection; the rest of a connection's RTT is split evenly
#   over its two access links (each (RTT/2 - 5 ms)/2). The 50-connection RTTs are drawn
#   once (numpy default_rng(2002), uniform 50-150 ms, rounded to 0.2 ms), so every run
#   uses the same RTT per connection, as the figures plot each connection at its RTT.
# - Physical limit of the RIO queue (not given): maxq with max_th = 0.8 maxq, section
#   2.1.2's rule: 840/0.8 = 1050, 694/0.8 = 868, 347/0.8 = 434 packets. mean_pkt_size
#   (RED's idle-time correction) = 576 B.
"""

HEADERS = {
    "rtt.toml": """\
# Seed 002 sections 3.1 (figures 2-6) and 3.4 (figure 13): 50 connections, 50 Mbit/s
# (6.25 Mbytes/s) bottleneck, RIO 420/840/0.05 500/840/0.02 (labels corrected, see below),
# physical limit 1050 packets. As written, hosts h0-h24 are AS capable with a 1 Mbit/s
# (125 Kbytes/s) target and h25-h49 best effort (figures 3 and 13: 25 AS of 50); the
# experiments as-rtt, as-fairness and as-tsw-vs-tb derive the 10, 40, 0 and 50 AS cases by
# keeping the profilers of h0..h{k-1} and setting the policer to k x 1 Mbit/s
# (assured_topology.assured_hosts). 5 runs (section 3.1: "Simulations were run 5 times").
""",
    "targets.toml": """\
# Seed 002 section 3.2 (Table 1, figure 7): 40 connections, 20 AS and 20 best effort,
# RTT 100 ms for all, 20 Mbit/s bottleneck ("20 Mbps (2.5 Kbytes/s)" is a seed defect:
# 20 Mbit/s = 2.5 Mbytes/s), RIO 347/694/0.05 390/694/0.02 (OUT/IN, labels as corrected
# below), physical limit 868 packets. Targets by host: h0-h3 2 Mbit/s, h4-h7 1, h8-h11
# 0.5, h12-h15 0.2, h16-h19 0.1 (76 % of the link); the policer runs at their sum,
# 15.2 Mbit/s. "Simulation results were averaged over 10 runs": 10 replications.
""",
    "cbr.toml": """\
# Seed 002 section 3.3 (figures 10-12): 20 connections, RTT "about 100 ms" (100 ms for
# all), 20 Mbit/s bottleneck (2.5 Mbytes/s, see the defect below), RIO 173/347/0.05
# 195/347/0.02 (OUT/IN), physical limit 434 packets. Hosts h0-h9 are AS capable (1 Mbit/s
# target); h10-h19 best effort, of which connection 19 (h19 -> h39) is the non-responsive
# CBR source (576 B datagrams, no spacing jitter: ns-2's CBR). The policer runs at the sum
# of the targets, 10 Mbit/s. The experiment sweeps the CBR rate (the file holds 4 Mbit/s);
# the CBR host's access link (10 Mbit/s, section 2.2) bounds it. For the AS-capable CBR
# ("target rate at 4 Mbps ... for one run and 8 Mbps for another", 70 % and 90 % of the
# link subscribed) the experiment adds a 20 KB profiler at h19 and raises the policer to
# 14 or 18 Mbit/s (assured_topology.cbr_source). 5 runs ("Simulations were run 5 times").
""",
    "merge.toml": """\
# Seed 002 section 3.5 (Table 2): the merging topology of figure 14. The figure is not in
# the text; what the text states:
# - "All hosts are AS capable with a target rate of 100 kbps"; "Aggregate IN-marked traffic
#   is policed at each node"; policers at 200 kbit/s for r0-r3, 400 for r4 and r5, 800 for
#   r6; "Token buckets ... 4 packets deep for the profilers, and 6 packets deep for the
#   policers"; 1500 B packets including headers (MSS 1460 B); "a decreasing bandwidth
#   hierarchy ending in a T1 (1.5 Mbps) bottleneck link between r6 and r7"; T1 queue of
#   24 packets with RIO 4/9/0.05 5/9/0.02 (OUT/IN); Table 2 lists connections 0-7.
# Reconstructed by dsim (each from the text's numbers):
# - 8 hosts h0-h7 (Table 2's connections 0-7; 8 x 100 kbit/s = r6's 800 kbit/s), two per
#   first-level router (2 x 100 = 200 kbit/s at r0-r3): h0,h1 -> r0, h2,h3 -> r1,
#   h4,h5 -> r2, h6,h7 -> r3; r0,r1 -> r4 and r2,r3 -> r5 (2 x 200 = 400 kbit/s); r4,r5 ->
#   r6 (2 x 400 = 800 kbit/s); r6 -> r7 the T1; connection i ends at h{i+8} behind r7.
# - Each policer meters the IN packets leaving its router toward the next one (the
#   appendix: a policer "attached to the link exiting the domain"), 6 x 1500 = 9000 B deep;
#   profilers 4 x 1500 = 6000 B deep; r7 has no policer (the text gives none).
# - Link rates (the text gives only the T1): 10 Mbit/s host links, 6 Mbit/s r0-r3 uplinks,
#   3 Mbit/s r4-r5 uplinks, 1.5 Mbit/s T1, 10 Mbit/s to the destinations: decreasing
#   toward the T1, which is the only congested link.
# - One-way delays (not given): 5 ms host links, 5 ms r0-r3 uplinks, 10 ms r4-r5 uplinks,
#   25 ms T1, 5 ms to the destinations: a 100 ms propagation round trip for every
#   connection, the middle of section 2.2's 50-150 ms.
# - RIO wq 0.002 (section 2.1.2's general rule), mean_pkt_size 1500 B; every other queue
#   5000 packets of drop-tail (only the T1 queue drops, ACKs are never lost).
# - Run length and number of runs are not given (Table 2 reads like one run): 100 s with
#   5 s left out, 5 runs; the overflow-drop counts of Table 2 scale with run length.
""",
}


def _inline(value: Any) -> str:
    """A TOML inline value."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, list):
        return "[" + ", ".join(_inline(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_key(k)} = {_inline(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"no TOML form for {value!r}")


def _key(k: str) -> str:
    return k if k.replace("_", "").replace("-", "").isalnum() else _inline(k)


def to_toml(sc: Scenario, header: str, *, dumbbell_file: bool = True) -> str:
    """The scenario as a readable file: scalars first, then one line per link, flow and
    conditioner (arrays of inline tables), then the node lists."""
    d = sc.to_dict()
    lines = [header.rstrip("\n"), "#", COMMON_HEADER.rstrip("\n"), ""]
    if dumbbell_file:
        lines[-1:-1] = ["#", DUMBBELL_HEADER.rstrip("\n")]
    lines += [f"{k} = {_inline(d[k])}" for k in ("name", "description", "duration", "warmup", "seed", "replications") if k in d]
    for table in ("link", "flow", "conditioner"):
        lines += ["", f"{table} = ["]
        lines += [f"  {_inline(entry)}," for entry in d.get(table, [])]
        lines.append("]")
    # [nodes] last: a top-level key after a table header would belong to that table.
    lines += ["", "[nodes]"]
    for k, v in d["nodes"].items():
        lines.append(f"{k} = {_inline(v)}")
    for k in d:
        if k not in ("name", "description", "duration", "warmup", "seed", "replications", "nodes", "link", "flow", "conditioner"):
            raise ValueError(f"to_toml does not write {k!r}")
    return "\n".join(lines) + "\n"


def rtt_table_comment(rtts: Sequence[float]) -> str:
    return "# Round-trip propagation times (ms) of connections 0-49:\n" + "".join(
        f"#   {' '.join(f'{r:6.1f}' for r in rtts[i : i + 10])}\n" for i in range(0, len(rtts), 10)
    )


def files() -> dict[str, str]:
    """File name -> text of every seed 002 scenario file."""
    return {
        "rtt.toml": to_toml(rtt_scenario(), HEADERS["rtt.toml"] + rtt_table_comment(rtts_ms(50))),
        "targets.toml": to_toml(targets_scenario(), HEADERS["targets.toml"]),
        "cbr.toml": to_toml(cbr_scenario(), HEADERS["cbr.toml"]),
        "merge.toml": to_toml(merge_scenario(), HEADERS["merge.toml"], dumbbell_file=False),
    }


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="Write (or --check) the seed 002 scenario files.")
    ap.add_argument("--check", action="store_true", help="fail if a committed file differs from what this writes")
    args = ap.parse_args(argv)
    stale = []
    for fname, text in files().items():
        path = SCENARIO_DIR / fname
        if args.check:
            if not path.exists() or path.read_text() != text:
                stale.append(fname)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    if stale:
        raise SystemExit(f"stale: {', '.join(stale)}")


if __name__ == "__main__":
    main()
