"""RFC 2598 appendix A.3, Tables 1-3, with WRR as the document's authors ran it: ns-2's
CBQ with WRR (issue 21, the preparation of `dsim reproduce ef`'s switch; docs/ef.md,
"Tables 1-3 with CBQ-WRR").

    .venv/bin/python validation/ef-cbq-wrr/run.py [--replications 3] [--duration 220s]
        [--variants cbq-wrr,wrr,...] [--out DIR]

A.3 says "We used the CBQ modules included with ns-2 as a basis to implement priority
queuing and WRR". Every WRR row of Tables 1-3 is rebuilt here as the reproduction builds it
(python/dsim/reproduce/ef.py: `configure`, the figure 6 network, the EF aggregate of the
row, the background split among the non-EF queues, the EF share of each router hop from
the row's service/arrival ratio), then each router hop's WRR is replaced by a CBQ table
(`cbq_wrr`) and every scenario is run through `dsim run`. What the document states is kept:
the 450 kbit/s aggregate, the 56 kbit/s target microflow, the ratios, the six hops, the
queues of each row. What it leaves open takes ns-2's defaults (ns-default.tcl,
ns-queue.tcl, queue/cbq.cc), each said in `cbq_wrr`.

Variants (--variants):
  wrr             today's reproduction: dsim `drr` with the bytes ns-2's CBQ/WRR serves per
                  visit (ef.ns2_quanta, maxpkt 1500 B), no estimator;
  cbq-wrr         CBQ/WRR with ns-2's defaults (every class at priority 0, maxpkt_ 1024 B,
                  no restart timer), the EF class bounded;
  cbq-wrr-prio1   the same with every class at priority 1, as ns-2's CBQ examples set
                  their leaves: maxidle "auto" then gives EF a credit of several packets;
  cbq-wrr-borrow  the same as cbq-wrr with the EF class allowed to borrow (okborrow_'s
                  default): the estimator never holds a class back (the root is never
                  over its rate), leaving ns-2's WRR with 1024 B rounds;
  cbq-wrr-timer   the same as cbq-wrr with dsim's restart timer instead of ns-2's
                  restart at the next arrival;
  cbq-wrr-1500    the same as cbq-wrr with maxpkt 1500 B (the round today's reproduction
                  assumes).
Prints, per table, the published cells and each variant's means over the replications.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from importlib import resources
from pathlib import Path
from typing import Any

import pandas as pd

import dsim
from dsim.reproduce import ef

#: Each variant's departures from `cbq_wrr`'s ns-2 defaults (None: today's plain WRR).
VARIANTS: dict[str, dict[str, Any] | None] = {
    "wrr": None,
    "cbq-wrr": {},
    "cbq-wrr-prio1": {"priority": 1},
    "cbq-wrr-borrow": {"ef_borrow": True},
    "cbq-wrr-timer": {"restart": "timer"},
    "cbq-wrr-1500": {"maxpkt": 1500},
}


def cbq_wrr(
    share: float,
    queues: int,
    *,
    maxpkt: int = 1024,
    restart: str = "arrival",
    priority: int = 0,
    ef_borrow: bool = False,
) -> dict[str, Any]:
    """One router hop's WRR as ns-2's CBQ/WRR (Queue/CBQ/WRR): the EF class with `share` of
    the link, the `queues` - 1 others sharing the rest equally, all leaves of the root (the
    link), all at one priority so that WRR alone orders them (the document's WRR, not PQ).

    - EF may not borrow: "the EF class not allowed to borrow beyond its share" (issue 21;
      RFC 2598 2.2's "a queue in a weighted round robin scheduler where the share of the
      output bandwidth assigned to the EF queue is equal to the configured rate"); the
      others may (CBQClass okborrow_ true, ns-2's default);
    - priority 0 for every class (CBQClass priority_ 0), so maxidle "auto" is ns-2's
      automaxidle at n = 0: one sample's credit, maxpkt / link rate / 16;
    - maxpkt_ 1024 B (Queue/CBQ maxpkt_): the WRR round is queues x 1024 B, each class
      allotted share x that;
    - extradelay_ 0, the EWMA weight 1/16 (POWEROFTWO), the ancestors-only guideline
      (Queue/CBQ algorithm_ 0): dsim's defaults;
    - no restart timer: an idle link whose only waiting class is the regulated EF class
      starts again at the next arrival (ns-2's CBQueue has no timer);
    - buffers as the reproduction's: EF 100 packets, the others 50.
    """
    other = (1 - share) / (queues - 1)
    ef_q = {"type": "droptail", "limit": ef.EF_LIMIT}
    other_q = {"type": "droptail", "limit": ef.OTHER_LIMIT}
    classes = [dsim.klass("EF", share=share, borrow=ef_borrow, priority=priority, queue=ef_q)]
    classes += [
        dsim.klass(d, default=True if d == "BE" else None, share=other, priority=priority, queue=other_q)
        for d in ef.non_ef_codepoints(queues)
    ]
    return dsim.cbq(*classes, scheduler="wrr", maxpkt=f"{maxpkt}B", restart=restart)


def configure(base: dsim.Scenario, sources: list[ef.EfSource], variant: str, *, queues: int, ratio: float) -> dsim.Scenario:
    """The reproduction's WRR row (`ef.configure`, allocation "ratio"), each router hop's
    queue then replaced for a CBQ variant with the same EF share."""
    sc = ef.configure(base, sources, "wrr", queues=queues, ratio=ratio)
    if VARIANTS[variant] is None:
        return sc
    settings = VARIANTS[variant]
    assert settings is not None
    hops = ef.port_links(sc)
    rates = [ef.link_rate_bps(sc, i) for i in hops]
    for i, rate, arrival in zip(hops, rates, ef.ef_arrivals(sources), strict=True):
        sc.set(f"link[{i}].forward", {"queue": cbq_wrr(ef.ef_share(ratio, rate, arrival), queues, **settings)})
    return sc


def rows() -> list[tuple[str, Any, int, float, tuple[int, ...], int]]:
    """(table, row key, microflows, ratio, target sizes, queues) of every WRR row of
    Tables 1-3."""
    wrr = lambda table: [k for k in table if k != "PQ"]  # noqa: E731
    return [
        *(("Table 1", n, int(n), 1.06, ef.EF_PACKET_SIZES, 5) for n in wrr(ef.TABLE1)),
        *(("Table 2", r, 8, float(r), ef.EF_PACKET_SIZES, 5) for r in wrr(ef.TABLE2)),
        *(("Table 3", q, 8, 1.03, (1500,), int(q)) for q in wrr(ef.TABLE3)),
    ]


def run_dsim(sc: dsim.Scenario, folder: Path, replications: int, duration: str) -> pd.DataFrame:
    """`dsim run` of the scenario; its flows table."""
    sc = sc.copy()
    sc.set("duration", duration)
    sc.set("warmup", "20s")
    folder.mkdir(parents=True)
    (folder / "scenario.toml").write_text(sc.to_toml())
    cmd = [sys.executable, "-m", "dsim", "run", str(folder / "scenario.toml"), "-r", str(replications), "--out", str(folder / "out")]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return pd.read_parquet(folder / "out" / "flows.parquet")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--replications", type=int, default=3, help="per row (default 3, the reproduction's quick mode)")
    ap.add_argument("--duration", default="220s", help="per run, 20 s of warm-up included (default 220s, quick mode)")
    ap.add_argument("--variants", default=",".join(VARIANTS), help=f"comma-separated, of {', '.join(VARIANTS)} (default: all)")
    ap.add_argument("--out", type=Path, help="keep the runs' folders here (default: a temporary folder)")
    args = ap.parse_args()
    variants = args.variants.split(",")
    if unknown := set(variants) - set(VARIANTS):
        ap.error(f"unknown variants {sorted(unknown)}")
    base = dsim.Scenario.from_toml((resources.files("dsim") / "scenarios/ef/figure6.toml").read_text())
    published = {"Table 1": ef.TABLE1, "Table 2": ef.TABLE2, "Table 3": ef.TABLE3}
    with tempfile.TemporaryDirectory() as tmp:
        root = args.out or Path(tmp)
        cells = []
        losses = []
        for table, key, flows, ratio, sizes, queues in rows():
            # A row of the document's table: p50, p90 of the 1500 B target, then of the 160 B one.
            pub = dict(zip(("p50_1500", "p90_1500", "p50_160", "p90_160"), published[table][key], strict=False))
            for size in sizes:
                target = ef.target_name(size)
                cells.extend({"table": table, "row": str(key), "cell": f"{c} {size} B", "published": pub[f"{c}_{size}"]} for c in ("p50", "p90"))
                loss = {"table": table, "row": str(key), "target": f"{size} B"}
                losses.append(loss)
                for v in variants:
                    sc = configure(base, ef.ef_sources(flows, size), v, queues=queues, ratio=ratio)
                    folder = root / f"{table.replace(' ', '')}-{key}-{size}-{v}"
                    f = run_dsim(sc, folder, args.replications, args.duration)
                    f = f[f["flow"] == target]
                    loss[v] = ef_loss_pct(folder)
                    for c in ("p50", "p90"):
                        cell = next(x for x in cells if (x["table"], x["row"], x["cell"]) == (table, str(key), f"{c} {size} B"))
                        cell[v] = float(f[f"jitter_{c}_pct"].mean())
                print(f"{table} {key} {size} B done", file=sys.stderr, flush=True)
        df = pd.DataFrame(cells)
    pd.set_option("display.width", 200)
    for table, part in df.groupby("table", sort=False):
        cols = ["row", "cell", "published", *variants]
        print(f"\n{table} (jitter, % of a packet time at 56 kbit/s; mean of {args.replications} x {args.duration})")
        print(markdown(part[cols]))
    print("\nEF packets dropped at routers, % of the EF packets sent (all replications)")
    print(markdown(pd.DataFrame(losses)[["table", "row", "target", *variants]]))
    return 0


def markdown(df: pd.DataFrame) -> str:
    """A table as markdown, numbers to one decimal."""
    cell = lambda v: f"{v:.1f}" if isinstance(v, float) else str(v)  # noqa: E731
    lines = ["| " + " | ".join(df.columns) + " |", "|" + "---|" * len(df.columns)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join(lines)


def ef_loss_pct(folder: Path) -> float:
    """EF packets dropped at a router (every cause) in the runs of `folder`, % of the EF
    packets sent."""
    flows = pd.read_parquet(folder / "out" / "flows.parquet")
    ef_flows = flows[flows["dscp"] == "EF"]
    drops = pd.read_parquet(folder / "out" / "drops.parquet")
    if drops.empty:
        return 0.0
    at_router = drops["site"].str.split("->").str[0].str.startswith("R")
    dropped = drops.loc[drops["flow"].isin(set(ef_flows["flow"])) & at_router, "pkts"].sum()
    return 100.0 * float(dropped) / float(ef_flows["sent_pkts"].sum())


if __name__ == "__main__":
    sys.exit(main())
