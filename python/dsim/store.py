"""The result store of a sweep: one folder, a manifest, one Parquet file per finished task.

Layout::

    OUT/manifest.json                 what the sweep is, and the state of every task
    OUT/scenario.toml                 the scenario as given (with its [sweep] table)
    OUT/tasks/p00003-r001.parquet     the tables of point 3, replication 1

manifest.json holds: ``format``, ``dsim_version``, ``scenario`` (name, source file, hash of
the base scenario without its [sweep] table), ``base_seed``, ``seed_formula``,
``replications``, ``mode``, ``axes`` (key and values), ``points`` (index, the value of
each axis, the hash of the scenario the point runs, and the validator's refusal if any), and
``tasks`` (point, replication, seed, hash of the point's scenario, state
``done``/``failed``/``pending``, file, rows per table, error).

A task file is written under a temporary name, synced, then renamed (``os.replace``), so
it is either complete or absent; the manifest is rewritten the same way. A task file holds
every table of the task, stacked: column ``_table`` names the table of each row and the
columns of table T are ``T.<column>`` (null on the rows of the other tables); its schema
metadata (key ``dsim``) holds the task (point, replication, seed, scenario hash, dsim
version) and the row count of each table. A file counts as finished only if it reads back whole (page
checksums verified), belongs to its task and has the rows its metadata announces;
otherwise it is deleted and the task runs again.

A store belongs to one sweep: same base scenario hash, axes, mode, base seed and dsim
version. Opening it for another is refused unless ``new`` (which deletes the old
manifest and task files, and nothing else). A manifest that cannot be read (cut short,
not JSON, keys missing or out of place) is rebuilt from the task files instead, each kept
if it verifies as on a resume, and the sweep says so (``Store.recovered``). Asking for more replications than the store
has adds the missing tasks; asking for fewer is refused.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .errors import DsimError

__all__ = ["FORMAT", "SEED_FORMULA", "DamagedManifest", "Store", "StoreMismatch", "encode_task", "read_task"]

FORMAT = "dsim-sweep/1"
SEED_FORMULA = "seed(point p, replication r) = derive_seed(base_seed, [p, r]) (dsim.derive_seed)"
MANIFEST = "manifest.json"
TASKS = "tasks"
DONE, FAILED, PENDING = "done", "failed", "pending"
#: At most one manifest rewrite per this many seconds while tasks finish (plus one at the end).
SAVE_EVERY_S = 2.0


class StoreMismatch(DsimError):
    """The folder holds the store of another sweep."""


class DamagedManifest(DsimError):
    """The store's manifest.json cannot be read (cut short, not JSON, keys missing): the
    same sweep rebuilds it from its verified task files."""

    def __init__(self, path: Path, why: str) -> None:
        super().__init__(
            f"{path / MANIFEST} is damaged ({why}); run the same sweep again (dsim sweep, dsim.sweep) "
            "to rebuild it from the task files, which are kept"
        )
        self.why = why


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _canon(v: Any) -> str:
    return json.dumps(v, sort_keys=True, separators=(",", ":"))


# -- task files ------------------------------------------------------------------------------


def encode_task(tables: dict[str, pa.Table], meta: dict[str, Any]) -> pa.Table:
    """The tables of one task stacked into one Arrow table (see the module documentation)."""
    names = list(tables)
    rows = {n: tables[n].num_rows for n in names}
    total = sum(rows.values())
    arrays: dict[str, pa.Array[Any]] = {"_table": pa.array([n for n in names for _ in range(rows[n])], pa.string())}
    offset = 0
    for n in names:
        t = tables[n]
        for col in t.column_names:
            values = t.column(col).combine_chunks()
            parts = [pa.nulls(offset, values.type), values, pa.nulls(total - offset - rows[n], values.type)]
            arrays[f"{n}.{col}"] = pa.concat_arrays([p for p in parts if len(p)] or [pa.array([], values.type)])
        offset += rows[n]
    meta = {**meta, "tables": names, "rows": rows, "columns": {n: tables[n].column_names for n in names}}
    table = pa.table(arrays)
    return table.replace_schema_metadata({"dsim": json.dumps(meta)})


def read_task(path: Path, expect: dict[str, Any] | None = None) -> tuple[dict[str, pa.Table], dict[str, Any]]:
    """The tables of a task file and its metadata; raises ValueError saying what is wrong
    when the file is unreadable, partial, or not the file of the task `expect` describes."""
    try:
        wide = pq.read_table(path, page_checksum_verification=True)
        wide.schema.names  # noqa: B018 (decoded lazily: a damaged footer's names fail here, not in a filter below)
    except Exception as e:  # noqa: BLE001 (truncated, corrupt, not Parquet at all: pyarrow raises many kinds)
        raise ValueError(f"unreadable: {type(e).__name__}: {e}") from None
    raw = (wide.schema.metadata or {}).get(b"dsim")
    if raw is None:
        raise ValueError("no dsim metadata")
    try:
        meta = json.loads(raw)
    except ValueError as e:  # a damaged footer: not UTF-8, not JSON
        raise ValueError(f"unreadable dsim metadata: {type(e).__name__}: {e}") from None
    for k, v in (expect or {}).items():
        if meta.get(k) != v:
            raise ValueError(f"belongs to another task ({k} = {meta.get(k)!r}, expected {v!r})")
    tags = wide.column("_table")
    tables = {}
    for name in meta["tables"]:
        mask = pc.equal(tags, name)
        cols = meta["columns"][name]
        part = wide.filter(mask).select([f"{name}.{c}" for c in cols]).rename_columns(cols) if cols else pa.table({})
        if part.num_rows != meta["rows"][name]:
            raise ValueError(f"table {name} has {part.num_rows} rows, {meta['rows'][name]} expected")
        tables[name] = part
    if wide.num_rows != sum(meta["rows"].values()):
        raise ValueError(f"{wide.num_rows} rows, {sum(meta['rows'].values())} expected")
    return tables, meta


def _write_atomic(path: Path, write: Any) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        write(tmp)
        with tmp.open("rb+") as f:
            os.fsync(f.fileno())
        tmp.replace(path)
    finally:
        if tmp.exists():
            tmp.unlink()


# -- the manifest ----------------------------------------------------------------------------


#: Each key of a manifest and what its value is.
_MANIFEST_KEYS = {
    "dsim_version": str, "scenario": dict, "base_seed": int, "replications": int, "mode": str,
    "axes": list, "points": list, "tasks": list,
}
_POINT_KEYS = {"point": int, "values": dict}
_TASK_KEYS = {"point": int, "replication": int, "seed": int, "state": str, "file": str}


def _missing(entry: Any, keys: dict[str, type], what: str) -> str | None:
    """What `entry` lacks of `keys` (or of their types), in words; None if nothing."""
    if not isinstance(entry, dict):
        return f"{what} is not a table"
    for key, kind in keys.items():
        if not isinstance(entry.get(key), kind) or isinstance(entry.get(key), bool):
            return f"{what} has no {kind.__name__} {key!r}"
    return None


def _manifest_fault(m: Any) -> str | None:
    """What is wrong with a manifest read from disk, or None: every key loading and resuming
    use, with its type, and tasks listed point by point, each naming its own file."""
    fault = _missing(m, _MANIFEST_KEYS, "the manifest")
    if fault:
        return fault
    if m["replications"] < 1 or not isinstance(m["scenario"].get("hash"), str):
        return "the manifest has no scenario hash or no replications"
    for a in m["axes"]:
        if not isinstance(a, dict) or not isinstance(a.get("key"), str) or not isinstance(a.get("values"), list):
            return "an axis has no key or no values"
    keys = [a["key"] for a in m["axes"]]
    for i, p in enumerate(m["points"]):
        fault = _missing(p, _POINT_KEYS, f"point {i}")
        if fault or p["point"] != i or any(k not in p["values"] for k in keys):
            return fault or f"point {i} is out of place or lacks an axis value"
    if len(m["tasks"]) != len(m["points"]) * m["replications"]:
        return f"{len(m['tasks'])} tasks for {len(m['points'])} points of {m['replications']} replications"
    for i, t in enumerate(m["tasks"]):
        fault = _missing(t, _TASK_KEYS, f"task {i}")
        if fault:
            return fault
        where = divmod(i, m["replications"])
        if (t["point"], t["replication"]) != where or t["file"] != Store.task_name(*where) or t["state"] not in (DONE, FAILED, PENDING):
            return f"task {i} is not the task of point {where[0]}, replication {where[1]}"
    return None


# -- the store -------------------------------------------------------------------------------


@dataclass
class Store:
    path: Path
    manifest: dict[str, Any]
    #: Tasks whose file was found corrupt or partial when the store was opened, with why.
    redone: list[tuple[int, int, str]] = field(default_factory=list)
    #: Why the manifest was rebuilt from the task files when the store was opened, if it was.
    recovered: str | None = None
    _last_save: float = 0.0

    # -- opening -------------------------------------------------------------------------

    @classmethod
    def read(cls, path: str | os.PathLike[str]) -> Store:
        """An existing store (for loading). Raises DamagedManifest when its manifest cannot
        be read or does not hold what a manifest holds."""
        path = Path(path)
        try:
            manifest = json.loads((path / MANIFEST).read_bytes())
        except FileNotFoundError:
            raise DsimError(f"{path}: not a sweep store (no {MANIFEST})") from None
        except (ValueError, RecursionError) as e:  # not JSON, not UTF-8, nested without end
            raise DamagedManifest(path, f"not valid JSON: {' '.join(str(e).split())[:120]}") from None
        if isinstance(manifest, dict) and "format" in manifest and manifest["format"] != FORMAT:
            raise DsimError(f"{path / MANIFEST}: format {str(manifest['format'])[:40]!r}, this dsim reads {FORMAT!r}")
        why = _manifest_fault(manifest)
        if why:
            raise DamagedManifest(path, why)
        return cls(path, manifest)

    @classmethod
    def open(cls, path: str | os.PathLike[str], sweep: dict[str, Any], tasks: list[dict[str, Any]], *, scenario_text: str | None, new: bool = False) -> Store:
        """The store at `path` for the sweep `sweep` (everything of the manifest but the
        tasks) with the tasks `tasks` (point, replication, seed, and the error of points the
        validator refused): created, or resumed (finished task files verified and kept)."""
        path = Path(path)
        old = None
        recovered = None
        if (path / MANIFEST).exists():
            try:
                old = cls.read(path).manifest
            except DamagedManifest as e:
                # Rebuilt from the task files: each is kept if it reads back whole and is the
                # file of its task in this sweep (seed, scenario hash, version), as on a resume.
                recovered = e.why
            except DsimError:
                if not new:
                    raise
            if new:
                cls._clear(path)
                old, recovered = None, None
            elif old is not None:
                cls._check_same(path, old, sweep)
        path.mkdir(parents=True, exist_ok=True)
        (path / TASKS).mkdir(exist_ok=True)
        for stale in (path / TASKS).glob(".*.tmp"):
            stale.unlink()
        manifest = {
            "format": FORMAT,
            **sweep,
            "created": old["created"] if old else _now(),
            "updated": _now(),
            "tasks": [],
        }
        store = cls(path, manifest, recovered=recovered)
        for t in tasks:
            entry = {
                "point": t["point"], "replication": t["replication"], "seed": t["seed"], "hash": t.get("hash"),
                "state": PENDING, "file": store.task_name(t["point"], t["replication"]), "rows": None, "error": None,
            }
            f = path / entry["file"]
            if t.get("refused"):
                entry.update(state=FAILED, error=t["refused"])
                if f.exists():
                    f.unlink()
            elif f.exists():
                try:
                    _, meta = read_task(f, store.expect(entry))
                    entry.update(state=DONE, rows=meta["rows"])
                except ValueError as e:
                    store.redone.append((t["point"], t["replication"], str(e)))
                    f.unlink()
            manifest["tasks"].append(entry)
        if scenario_text is not None:
            _write_atomic(path / "scenario.toml", lambda p: Path(p).write_text(scenario_text))
        store.save(force=True)
        return store

    @staticmethod
    def _check_same(path: Path, old: dict[str, Any], new: dict[str, Any]) -> None:
        differ = []
        checks = [
            ("scenario hash", old.get("scenario", {}).get("hash"), new["scenario"]["hash"]),
            ("axes", _canon(old.get("axes")), _canon(new["axes"])),
            ("mode", old.get("mode"), new["mode"]),
            ("base seed", old.get("base_seed"), new["base_seed"]),
            ("dsim version", old.get("dsim_version"), new["dsim_version"]),
        ]
        for what, a, b in checks:
            if a != b:
                differ.append(what if what == "axes" else f"{what} {a} -> {b}")
        if differ:
            raise StoreMismatch(
                f"{path} holds another sweep ({'; '.join(differ)} differ): pass --new (new=True) to replace it, or choose another --out"
            )
        if new["replications"] < old.get("replications", 0):
            raise StoreMismatch(
                f"{path} holds {old['replications']} replications per point, {new['replications']} asked: "
                f"ask for {old['replications']} or more, or pass --new (new=True) to start over"
            )

    @staticmethod
    def _clear(path: Path) -> None:
        """Deletes the files of the store at `path` (and nothing else)."""
        for f in (path / TASKS).glob("*.parquet"):
            f.unlink()
        for f in (path / TASKS).glob(".*.tmp"):
            f.unlink()
        for name in (MANIFEST, "scenario.toml"):
            if (path / name).exists():
                (path / name).unlink()

    # -- writing -------------------------------------------------------------------------

    @staticmethod
    def task_name(point: int, replication: int) -> str:
        return f"{TASKS}/p{point:05d}-r{replication:03d}.parquet"

    def expect(self, entry: dict[str, Any]) -> dict[str, Any]:
        return {
            "point": entry["point"], "replication": entry["replication"], "seed": entry["seed"],
            "hash": entry.get("hash"), "version": self.manifest["dsim_version"],
        }

    def entry(self, point: int, replication: int) -> dict[str, Any]:
        # Tasks are listed point by point, replication by replication.
        i = point * self.manifest["replications"] + replication
        e: dict[str, Any] = self.manifest["tasks"][i]
        assert (e["point"], e["replication"]) == (point, replication)
        return e

    def write(self, point: int, replication: int, tables: dict[str, pa.Table]) -> None:
        """Records a finished task: its file first, atomically, then its manifest entry."""
        e = self.entry(point, replication)
        wide = encode_task(tables, self.expect(e))
        _write_atomic(self.path / e["file"], lambda p: pq.write_table(wide, p, compression="zstd", write_page_checksum=True))
        e.update(state=DONE, rows={n: t.num_rows for n, t in tables.items()}, error=None)
        self.save()

    def fail(self, point: int, replication: int, error: str) -> None:
        e = self.entry(point, replication)
        e.update(state=FAILED, error=error, rows=None)
        self.save()

    def save(self, force: bool = False) -> None:
        """Rewrites the manifest (atomically), at most every SAVE_EVERY_S unless `force`."""
        now = time.monotonic()
        if not force and now - self._last_save < SAVE_EVERY_S:
            return
        self._last_save = now
        self.manifest["updated"] = _now()
        text = json.dumps(self.manifest, indent=1, allow_nan=False)
        _write_atomic(self.path / MANIFEST, lambda p: Path(p).write_text(text))

    # -- reading -------------------------------------------------------------------------

    def tasks(self, state: str | None = None) -> list[dict[str, Any]]:
        return [t for t in self.manifest["tasks"] if state is None or t["state"] == state]
