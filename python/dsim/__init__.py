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
from .scenario import Scenario, cbq, cbr, drr, droptail, klass, poisson, priority, wrr
from .sweep import SweepInterrupted, SweepResults, load, sweep

__version__ = _dsim.__version__

__all__ = [
    "DsimError",
    "Results",
    "Scenario",
    "ScenarioError",
    "SimulationError",
    "SweepInterrupted",
    "SweepResults",
    "cbq",
    "cbr",
    "derive_seed",
    "drr",
    "droptail",
    "klass",
    "load",
    "poisson",
    "priority",
    "replay",
    "replay_kinds",
    "wrr",
    "replication_seed",
    "run",
    "sweep",
    "__version__",
]
