# Type stubs of the compiled module dsim._dsim (crates/dsim-py/src/lib.rs); tests/test_stub.py
# checks them against the module (the names, every parameter, mypy's stubtest).
# Sequences (Rust Vec<T>) accept any Python sequence; paths (Rust PathBuf) a str or a PathLike.

import os
from collections.abc import Callable, Sequence
from typing import Any, final

__all__ = [
    "OPTIONAL_TABLES",
    "RECORDED_TABLES",
    "TABLES",
    "ArrowTable",
    "__pgo__",
    "__version__",
    "bench_run",
    "canonical_toml",
    "default_limits",
    "derive_seed",
    "dscp_name",
    "load_toml",
    "parse_dscp",
    "parse_quantity",
    "read_pcap",
    "replay",
    "replay_kinds",
    "replication_seed",
    "run_defaults",
    "run_task",
    "scenario_hash",
    "schema",
    "validate",
    "write_pcap",
]

__version__: str
# Whether the extension was compiled with profile-guided optimization (`make build`).
__pgo__: bool
# The result tables' names (dsim/results.py): all, those a run may lack, the recorded ones.
TABLES: tuple[str, ...]
OPTIONAL_TABLES: tuple[str, ...]
RECORDED_TABLES: tuple[str, ...]

@final
class ArrowTable:
    # A result table exported through the Arrow PyCapsule interface.
    def __arrow_c_array__(self, requested_schema: object | None = None) -> tuple[Any, Any]: ...
    def __len__(self) -> int: ...

def validate(toml: str, limits_json: str | None = None) -> dict[str, int]: ...
def load_toml(text: str, limits_json: str | None = None, copies: int = 1) -> list[dict[str, Any]]: ...
def default_limits() -> str: ...
def schema() -> str: ...
def canonical_toml(toml: str) -> str: ...
def scenario_hash(toml: str) -> str: ...
def run_defaults(toml: str) -> tuple[int, int]: ...
def replication_seed(base: int, replication: int) -> int: ...
def parse_dscp(text: str, path: str) -> int: ...
def parse_quantity(kind: str, text: str, path: str) -> int: ...
def dscp_name(dscp: int) -> str: ...
def replay_kinds() -> list[str]: ...
def replay(
    config: str,
    times_ns: Sequence[int],
    sizes: Sequence[int],
    dscps: Sequence[int],
    flows: Sequence[int],
    colors: Sequence[int],
    flow_names: Sequence[str],
    rate: str | None = None,
    seed: int = 1,
    ecns: Sequence[int] | None = None,
    series: bool = False,
) -> ArrowTable: ...
def read_pcap(path: str | os.PathLike[str], max_bytes: int = ...) -> ArrowTable: ...
def write_pcap(
    source: str | os.PathLike[str],
    out: str | os.PathLike[str],
    rows: Sequence[int],
    dscps: Sequence[int],
    ecns: Sequence[int],
    departs_ns: Sequence[int],
) -> None: ...
def derive_seed(base: int, coords: Sequence[int]) -> int: ...
def run_task(
    toml: str,
    base_seed: int,
    coords: Sequence[int],
    progress: Callable[[float, float, int], object] | None = None,
    capture_dir: str | os.PathLike[str] | None = None,
) -> dict[str, ArrowTable]: ...
def bench_run(toml: str, seed: int, port: str) -> dict[str, float]: ...
