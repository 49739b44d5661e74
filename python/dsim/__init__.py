"""dsim: a fast packet-level simulator for the IETF Differentiated Services mechanisms.

    import dsim
    sc = dsim.Scenario.from_toml("scenario.toml")
    res = dsim.run(sc, seed=1, replications=5)
    res.summary("flows")          # mean and 90 % CI per flow
    sw = dsim.sweep(sc, axes={"flow[0].app.rate": ["1Mbps", "2Mbps"]}, out="results/sw")
    sw.summary("flows")           # per point; dsim.load("results/sw") reads it back
"""

from . import _dsim
from .api import derive_seed, replication_seed, run
from .errors import DsimError, ScenarioError, SimulationError
from .replay import kinds as replay_kinds
from .replay import replay
from .results import Results
from .scenario import (
    ABE_GREEN_DSCP,
    Scenario,
    cbq,
    cbr,
    constant,
    demote,
    drop,
    droptail,
    drr,
    dsd,
    ef_policer,
    exponential,
    ftp,
    klass,
    lognormal,
    mark,
    match,
    mred,
    pareto,
    poisson,
    precedence,
    priority,
    red,
    rio,
    srras,
    srtcm,
    tb_shaper,
    tcp,
    tfrc,
    token_bucket,
    trras,
    trtcm,
    tsw,
    tsw3,
    uniform,
    web,
    wrr,
)
from .sweep import SweepInterrupted, SweepResults, load, sweep

__version__ = _dsim.__version__

__all__ = [
    "ABE_GREEN_DSCP",
    "DsimError",
    "Results",
    "Scenario",
    "ScenarioError",
    "SimulationError",
    "SweepInterrupted",
    "SweepResults",
    "cbq",
    "cbr",
    "constant",
    "demote",
    "derive_seed",
    "drop",
    "droptail",
    "drr",
    "dsd",
    "ef_policer",
    "exponential",
    "ftp",
    "klass",
    "load",
    "lognormal",
    "mark",
    "match",
    "mred",
    "pareto",
    "poisson",
    "precedence",
    "priority",
    "red",
    "replay",
    "replay_kinds",
    "replication_seed",
    "rio",
    "run",
    "srras",
    "srtcm",
    "sweep",
    "tb_shaper",
    "tcp",
    "tfrc",
    "token_bucket",
    "trras",
    "trtcm",
    "tsw",
    "tsw3",
    "uniform",
    "web",
    "wrr",
    "__version__",
]
