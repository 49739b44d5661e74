"""dsim: a fast packet-level simulator for the IETF Differentiated Services mechanisms.

    import dsim
    sc = dsim.Scenario.from_toml("scenario.toml")
    res = dsim.run(sc, seed=1, replications=5)
    res.summary("flows")          # mean and 90 % CI per flow
"""

from . import _dsim
from .api import replication_seed, run
from .errors import DsimError, ScenarioError, SimulationError
from .replay import kinds as replay_kinds
from .replay import replay
from .results import Results
from .scenario import Scenario, cbq, cbr, drr, droptail, klass, poisson, priority, wrr

__version__ = _dsim.__version__

__all__ = [
    "DsimError",
    "Results",
    "Scenario",
    "ScenarioError",
    "SimulationError",
    "cbq",
    "cbr",
    "drr",
    "droptail",
    "klass",
    "poisson",
    "priority",
    "replay",
    "replay_kinds",
    "wrr",
    "replication_seed",
    "run",
    "__version__",
]
