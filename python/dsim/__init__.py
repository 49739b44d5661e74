"""dsim: a fast packet-level simulator for the IETF Differentiated Services mechanisms.

    import dsim
    sc = dsim.Scenario.from_toml("scenario.toml")
    res = dsim.run(sc, seed=1, replications=5)
    res.summary("flows")          # mean and 90 % CI per flow
    sw = dsim.sweep(sc, axes={"flow[0].app.rate": ["1Mbps", "2Mbps"]}, out="results/sw")
    sw.summary("flows")           # per point; dsim.load("results/sw") reads it back
"""

import sys
import types
from typing import TYPE_CHECKING, Any

from . import _dsim
from .errors import DsimError, ScenarioError, SimulationError
from .limits import set_limits
from .scenario import (
    ABE_GREEN_DSCP,
    Scenario,
    cbq,
    cbq_class,
    cbq_interior,
    cbr,
    codel,
    constant,
    cubic,
    dctcp,
    demote,
    drop,
    droptail,
    drr,
    drr_class,
    dsd,
    dsd_control,
    dsd_red,
    ef_policer,
    exponential,
    fq_codel,
    ftp,
    klass,
    lognormal,
    mark,
    match,
    mred,
    pareto,
    pie,
    poisson,
    precedence,
    priority,
    priority_class,
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
    wrr_class,
)

__version__ = _dsim.__version__

# What needs pandas, pyarrow or rich loads on first use (PEP 562), so that `import dsim`,
# `dsim --version` and `dsim validate` start at once: the name, then the module it is in.
_LAZY = {
    "run": "api",
    "derive_seed": "api",
    "replication_seed": "api",
    "Results": "results",
    "replay": "replay",
    "replay_kinds": ("replay", "kinds"),
    "sweep": "sweep",
    "load": "sweep",
    "SweepInterrupted": "sweep",
    "SweepResults": "sweep",
}
#: Submodules reachable as attributes (`dsim.stats.t_half_width`) before anything imported them.
_SUBMODULES = {"api", "axes", "bench", "executors", "plot", "progress", "replay", "reproduce", "results", "stats", "store", "sweep"}

if TYPE_CHECKING:
    from .api import derive_seed, replication_seed, run
    from .replay import kinds as replay_kinds
    from .replay import replay
    from .results import Results
    from .sweep import SweepInterrupted, SweepResults, load, sweep


def __getattr__(name: str) -> Any:
    import importlib

    if name in _LAZY:
        module, attr = _LAZY[name] if isinstance(_LAZY[name], tuple) else (_LAZY[name], name)
        value = getattr(importlib.import_module(f".{module}", __name__), attr)
    elif name in _SUBMODULES:
        value = importlib.import_module(f".{name}", __name__)
    else:
        raise AttributeError(f"module 'dsim' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | _SUBMODULES)


class _Package(types.ModuleType):
    """dsim.sweep and dsim.replay are functions named after the modules they live in.
    Loading such a module binds the module to its name in the package (the import system
    does it); this keeps the function there instead, as an eager `from .sweep import
    sweep` did."""

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, types.ModuleType) and isinstance(_LAZY.get(name), str) and _LAZY[name] == name:
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


__all__ = [
    "ABE_GREEN_DSCP",
    "DsimError",
    "Results",
    "Scenario",
    "ScenarioError",
    "SimulationError",
    "SweepInterrupted",
    "SweepResults",
    "__version__",
    "cbq",
    "cbq_class",
    "cbq_interior",
    "cbr",
    "codel",
    "constant",
    "cubic",
    "dctcp",
    "demote",
    "derive_seed",
    "drop",
    "droptail",
    "drr",
    "drr_class",
    "dsd",
    "dsd_control",
    "dsd_red",
    "ef_policer",
    "exponential",
    "fq_codel",
    "ftp",
    "klass",
    "load",
    "lognormal",
    "mark",
    "match",
    "mred",
    "pareto",
    "pie",
    "poisson",
    "precedence",
    "priority",
    "priority_class",
    "red",
    "replay",
    "replay_kinds",
    "replication_seed",
    "rio",
    "run",
    "set_limits",
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
    "wrr_class",
]
