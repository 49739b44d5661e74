"""dsim: a fast packet-level simulator for the IETF Differentiated Services mechanisms.

    import dsim
    sc = dsim.Scenario.from_toml("scenario.toml")
    res = dsim.run(sc, seed=1, replications=5)
    res.summary("flows")          # mean and 90 % CI per flow
"""

from . import _dsim
from .api import replication_seed, run
from .errors import DsimError, ScenarioError, SimulationError
from .results import Results
from .scenario import ABE_GREEN_DSCP, Scenario, cbr, droptail, dsd, poisson, tfrc

__version__ = _dsim.__version__

__all__ = [
    "ABE_GREEN_DSCP",
    "DsimError",
    "Results",
    "Scenario",
    "ScenarioError",
    "SimulationError",
    "cbr",
    "droptail",
    "dsd",
    "poisson",
    "replication_seed",
    "run",
    "tfrc",
    "__version__",
]
