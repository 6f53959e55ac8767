#!/usr/bin/env python3
"""Every Athena query the docs give (each ```sql block of docs/history.md and
docs/deploy.md) runs, translated from Trino (Athena engine v3) to DuckDB by sqlglot,
over a ledger and resolutions written by real CLI runs (`make demo`'s five days, with
the debug binary), through tables declared exactly as infra/template.yaml declares the
Glue tables (its columns, types and partition keys; a column a query names that the
Glue table lacks fails here as it would in Athena). The big counter must equal the
dashboard's number of open findings, before and after the latest run is resolved.

Needs target/debug/glue-recon (`cargo build --bin glue-recon`; `make test` builds it
first) and .venv's duckdb and sqlglot.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from pathlib import Path

import duckdb
import pytest
import sqlglot
from test_definition import load_template

ROOT = Path(__file__).resolve().parents[2]
BIN = ROOT / "target" / "debug" / "glue-recon"
DOCS = [ROOT / "docs" / "history.md", ROOT / "docs" / "deploy.md"]
BIG_COUNTER_MARKER = "AS open_mismatches"

HIVE_TO_DUCKDB = {
    "string": "VARCHAR",
    "bigint": "BIGINT",
    "int": "INTEGER",
    "boolean": "BOOLEAN",
    "timestamp": "TIMESTAMP",
    "array<string>": "VARCHAR[]",
}


def documented_queries() -> list[tuple[str, str]]:
    """(where, statement) for every statement of every ```sql block of DOCS."""
    out = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        blocks = re.findall(r"```sql\n(.*?)```", text, flags=re.S)
        assert blocks, f"{doc} has no ```sql block; update DOCS in {__file__}"
        for i, block in enumerate(blocks, 1):
            for stmt in sqlglot.transpile(block, read="trino", write="duckdb"):
                out.append((f"{doc.relative_to(ROOT)} block {i}", stmt))
    return out


def glue_table(name: str) -> tuple[list[tuple[str, str]], list[str]]:
    """The (column, DuckDB type) list and partition keys of the template's Glue table."""
    for res in load_template()["Resources"].values():
        if res["Type"] == "AWS::Glue::Table" and res["Properties"]["TableInput"]["Name"] == name:
            table = res["Properties"]["TableInput"]
            cols = [
                (c["Name"], HIVE_TO_DUCKDB[c["Type"]])
                for c in table["StorageDescriptor"]["Columns"]
            ]
            return cols, [k["Name"] for k in table["PartitionKeys"]]
    raise AssertionError(f"infra/template.yaml declares no Glue table {name}")


def cli(*args: str) -> str:
    if not BIN.exists():
        raise AssertionError(f"{BIN} is not built: run `cargo build --bin glue-recon` first")
    done = subprocess.run([str(BIN), *args], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode in (0, 1), f"glue-recon {' '.join(args)}: exit {done.returncode}\n{done.stderr}"
    return done.stdout + done.stderr


class Demo:
    """The demo's five days of runs in a temporary folder."""

    def __init__(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="glue-recon-sql-")
        self.out = Path(self.tmp.name) / "demo"
        env = dict(os.environ, BIN=str(BIN), DEMO_OUT=str(self.out))
        done = subprocess.run(
            ["bash", "scripts/demo.sh"], cwd=ROOT, env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, f"scripts/demo.sh failed:\n{done.stdout}\n{done.stderr}"
        self.reports = self.out / "reports"

    def close(self):
        self.tmp.cleanup()


@pytest.fixture(scope="module")
def demo():
    """The demo's five days of runs, made once for the module."""
    d = Demo()
    try:
        yield d
    finally:
        d.close()


def connect(reports: Path) -> duckdb.DuckDBPyConnection:
    """DuckDB with glue_recon.recon_ledger and glue_recon.recon_resolutions declared as
    the template declares them, over the files under `reports`."""
    db = duckdb.connect()
    db.execute("CREATE SCHEMA glue_recon")
    cols, keys = glue_table("recon_ledger")
    select = ", ".join(f'CAST("{c}" AS {t}) AS "{c}"' for c, t in cols)
    hive = ", ".join(f"'{k}': 'VARCHAR'" for k in keys)
    db.execute(
        f"CREATE VIEW glue_recon.recon_ledger AS SELECT {select}, {', '.join(keys)} "
        f"FROM read_parquet('{reports}/ledger/**/*.parquet', hive_partitioning = true, "
        f"hive_types = {{{hive}}})"
    )
    cols, keys = glue_table("recon_resolutions")
    columns = ", ".join(f"'{c}': '{t}'" for c, t in cols + [(k, "VARCHAR") for k in keys])
    resolutions = reports / "resolutions"
    if any(resolutions.rglob("*.json")):
        source = (
            f"read_json('{resolutions}/**/*.json', format = 'auto', "
            f"hive_partitioning = true, columns = {{{columns}}})"
        )
    else:
        typed = ", ".join(f'NULL::{t} AS "{c}"' for c, t in cols)
        source = f"(SELECT {typed} WHERE false)"
    db.execute(f"CREATE VIEW glue_recon.recon_resolutions AS SELECT * FROM {source}")
    return db


def open_on_dashboard(reports: Path) -> int:
    text = cli("dashboard", "--out", str(reports))
    m = re.search(r"\(([\d,]+) open finding", text)
    assert m, f"`glue-recon dashboard` printed no open count:\n{text}"
    return int(m.group(1).replace(",", ""))


def big_counter(db: duckdb.DuckDBPyConnection) -> int:
    queries = [q for _, q in documented_queries() if "open_mismatches" in q]
    assert len(queries) == 1, f"expected one big-counter query ({BIG_COUNTER_MARKER}), found {len(queries)}"
    return db.execute(queries[0]).fetchone()[0]


def test_every_documented_query_runs_on_the_ledger(demo: Demo):
    db = connect(demo.reports)
    for where, query in documented_queries():
        try:
            rows = db.execute(query).fetchall()
        except duckdb.Error as e:
            raise AssertionError(f"{where} fails: {e}\n{query}") from e
        # The demo's ledger has five days of three pairs; every query finds something
        # in it except the drift history, which may be empty on clean days.
        if "drift IS NOT NULL" not in query:
            assert rows, f"{where} returned no rows on the demo's ledger:\n{query}"


def test_the_heat_map_query_has_a_cell_per_pair_and_day(demo: Demo):
    db = connect(demo.reports)
    heat = [q for _, q in documented_queries() if "run_date >=" in q and "findings" in q]
    assert len(heat) == 1, f"expected one heat-map query, found {len(heat)}"
    cells = db.execute(heat[0]).fetchall()
    assert {(p) for p, _, _ in cells} == {"orders", "customers", "payments"}, cells
    assert len(cells) == 15, f"3 pairs x 5 days, got {len(cells)}: {cells}"


def test_the_big_counter_equals_the_dashboard_before_and_after_a_resolution(demo: Demo):
    reports = demo.reports
    before = open_on_dashboard(reports)
    assert before > 0, "the demo's last day has planted problems; the dashboard shows none open"
    assert big_counter(connect(reports)) == before
    # Resolve the latest run of orders (the one with findings): both drop to zero.
    cli("resolve", "--out", str(reports), "--pair", "orders", "--by", "test", "--note", "checked")
    after = open_on_dashboard(reports)
    assert after == 0, f"{after} findings open after resolving the latest run"
    assert big_counter(connect(reports)) == after

