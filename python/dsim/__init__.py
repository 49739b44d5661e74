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
from .scenario import Scenario, cbr, constant, drop, droptail, exponential, ftp, lognormal, pareto, poisson, tcp, uniform, web

__version__ = _dsim.__version__

__all__ = [
    "DsimError",
    "Results",
    "Scenario",
    "ScenarioError",
    "SimulationError",
    "cbr",
    "constant",
    "drop",
    "droptail",
    "exponential",
    "ftp",
    "lognormal",
    "pareto",
    "poisson",
    "tcp",
    "uniform",
    "web",
    "replication_seed",
    "run",
    "__version__",
]
