"""Write a synthetic run ledger: RUNS runs of PAIRS pairs x PARTITIONS partitions.

The objects have the schema and version metadata of `crates/history/src/ledger.rs`, so
`glue-recon dashboard --out ROOT` reads them as it reads a real history. Used to
measure what reading a long history costs (docs/performance.md, "Ledger history").

    .venv/bin/python bench/gen_ledger.py --out target/ledger-bench --runs 300 --partitions 1000
"""

import argparse
import datetime as dt
import os

import pyarrow as pa
import pyarrow.parquet as pq

SCHEMA = pa.schema(
    [
        pa.field("run_id", pa.string(), False),
        pa.field("run_time", pa.timestamp("ms", tz="UTC"), False),
        pa.field("trigger", pa.string(), False),
        pa.field("pair", pa.string(), False),
        pa.field("partition", pa.string(), False),
        pa.field("partition_status", pa.string(), False),
        *[
            pa.field(n, pa.int64(), False)
            for n in (
                "source_rows",
                "target_rows",
                "missing_in_target",
                "extra_in_target",
                "mismatch",
                "duplicate_key",
                "null_key",
            )
        ],
        pa.field("status", pa.string(), False),
        pa.field("complete", pa.bool_(), False),
        pa.field("drift", pa.string(), True),
        pa.field("report_uri", pa.string(), False),
        pa.field("engine_version", pa.string(), False),
        pa.field("hash_encoding_version", pa.int32(), False),
        pa.field("ledger_version", pa.int32(), False),
    ],
    metadata={"glue_recon.ledger_version": "1"},
)


def run_table(i: int, start: dt.datetime, pairs: int, partitions: int, root: str) -> pa.Table:
    run_id = f"bench-{i:05d}"
    when = start + dt.timedelta(hours=6 * i)
    n = pairs * partitions
    pair = [f"pair_{p}" for p in range(pairs) for _ in range(partitions)]
    part = [f"dt=2026-01-01/part={q:05d}" for _ in range(pairs) for q in range(partitions)]
    missing = [1 if (i * 7 + q) % 13 == 0 else 0 for _ in range(pairs) for q in range(partitions)]
    cols = {
        "run_id": [run_id] * n,
        "run_time": [when] * n,
        "trigger": ["on-demand"] * n,
        "pair": pair,
        "partition": part,
        "partition_status": ["ok"] * n,
        "source_rows": [100_000] * n,
        "target_rows": [100_000 - m for m in missing],
        "missing_in_target": missing,
        "extra_in_target": [0] * n,
        "mismatch": [0] * n,
        "duplicate_key": [0] * n,
        "null_key": [0] * n,
        "status": ["FAIL" if any(missing) else "PASS"] * n,
        "complete": [True] * n,
        "drift": [None] * n,
        "report_uri": [f"{root}/reports/{p}/{run_id}/report.json" for p in pair],
        "engine_version": ["bench"] * n,
        "hash_encoding_version": [1] * n,
        "ledger_version": [1] * n,
    }
    return pa.table(cols, schema=SCHEMA)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="report root to write ledger/ under")
    ap.add_argument("--runs", type=int, default=300)
    ap.add_argument("--pairs", type=int, default=1)
    ap.add_argument("--partitions", type=int, default=1000)
    a = ap.parse_args()
    root = os.path.abspath(a.out)
    start = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    for i in range(a.runs):
        t = run_table(i, start, a.pairs, a.partitions, root)
        day = (start + dt.timedelta(hours=6 * i)).strftime("%Y-%m-%d")
        folder = os.path.join(root, "ledger", f"run_date={day}")
        os.makedirs(folder, exist_ok=True)
        pq.write_table(t, os.path.join(folder, f"bench-{i:05d}.parquet"), compression="zstd")
    print(f"{a.runs} runs x {a.pairs} pairs x {a.partitions} partitions under {root}/ledger")


if __name__ == "__main__":
    main()
