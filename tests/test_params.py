"""Parameters are declared once, in the core (crates/dsim-core/src/params): the Python
builders and the documentation's parameter tables are generated from that declaration and
must not drift from it."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from pathlib import Path

import dsim
from dsim import _dsim, _params

ROOT = Path(__file__).resolve().parent.parent


def test_generated_builders_and_doc_tables_are_up_to_date():
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_params.py"), "--check"], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stdout + out.stderr


def test_each_builder_takes_exactly_the_keys_of_its_table():
    sys.path.insert(0, str(ROOT / "scripts"))
    import gen_params

    tables = json.loads(_dsim.schema())["tables"]
    for name, b in gen_params.BUILDERS.items():
        params = list(inspect.signature(getattr(_params, name)).parameters)
        assert sorted(params) == sorted(k["key"] for k in tables[b.table]["keys"]), name


def test_every_table_and_key_says_what_it_is():
    # The help of `dsim.<builder>?`, of the docs' parameter tables and of the errors comes from
    # the declarations' doc comments: a table or key without one is undocumented everywhere.
    tables = json.loads(_dsim.schema())["tables"]
    assert [name for name, t in tables.items() if not t["doc"]] == []
    assert [f"{name}.{k['key']}" for name, t in tables.items() for k in t["keys"] if not k["help"]] == []


def test_a_builder_writes_what_the_core_reads():
    sc = dsim.Scenario(duration="1s")
    sc.hosts("A", "B")
    sc.link("A", "B", rate="1Mbps", delay="1ms", queue=dsim.red("20p", "5p", "15p", max_p=0.2, gentle=True))
    sc.flow("f", src="A", dst="B", app=dsim.cbr("100kbps", "100B"))
    sc.validate()
    assert sc.data["link"][0]["queue"] == {
        "type": "red",
        "limit": "20p",
        "min_th": "5p",
        "max_th": "15p",
        "max_p": 0.2,
        "gentle": True,
    }
