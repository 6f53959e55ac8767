#!/usr/bin/env python3
"""Write a source/target pair of Hive-partitioned Parquet tables with known differences.

An independent data generator (DuckDB SQL, not glue-recon's `sample-data`), used to
check the benchmark peers against counts known by construction, and to bench glue-recon
on files another writer produced (`run_bench.py --generator duckdb`).

    bench/gen_parquet.py --out DIR [--rows N] [--partitions P] [--changes F] [--seed S]

Writes DIR/source/dt=YYYY-MM-DD/*.parquet, DIR/target/..., and DIR/expected.json with
the counts a reconciliation by (dt, id) must find. Columns: id int64, customer_id int32,
amount decimal(12,2), price double, status string, created_at timestamp, updated date,
flag bool, note string (nullable), qty int16, and the partition column dt.

Planted (about F * N of each; `step` = 1 / F):
  id % step == 1  missing in target           id % step == 2  amount differs
  id % step == 3  status differs              id % step == 4  note NULL <-> ''
  id % step == 5  price NaN on both (equal)   id % step == 6  duplicated in target
  id % step == 7  duplicated in source        id % step == 9  duplicated in source, missing in target
  N/step extra ids N.. only in target
  a few rows with a NULL id on each side; price -0.0 in source vs 0.0 in target (equal)
"""

import argparse
import json
import os
import shutil
import sys

import duckdb


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--partitions", type=int, default=30)
    ap.add_argument("--changes", type=float, default=0.001)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()

    n, p = args.rows, args.partitions
    step = max(10, round(1 / args.changes)) if args.changes > 0 else n + 10
    extra = n // step
    nulls = max(1, extra // 10) if args.changes > 0 else 0
    seed = args.seed

    if os.path.exists(args.out):
        shutil.rmtree(args.out)
    os.makedirs(args.out)
    con = duckdb.connect()
    con.execute(f"SET threads = {args.threads}")
    con.execute("SET preserve_insertion_order = false")

    # Deterministic pseudo-random columns from (id, seed); hash() is stable for a DuckDB version.
    base = f"""
        SELECT
            id::BIGINT AS id,
            (hash(id, {seed}, 1) % 1000000)::INTEGER AS customer_id,
            ((hash(id, {seed}, 2) % 10000000)::DECIMAL(18, 0) / 100)::DECIMAL(12, 2) AS amount,
            CASE WHEN id % {step} = 8 THEN -0.0::DOUBLE
                 ELSE (hash(id, {seed}, 3) % 100000) / 7.0 END AS price,
            ['new', 'paid', 'shipped', 'cancelled'][1 + (hash(id, {seed}, 4) % 4)::BIGINT] AS status,
            TIMESTAMP '2023-01-01' + to_microseconds((hash(id, {seed}, 5) % 31536000000000)::BIGINT) AS created_at,
            DATE '2024-01-01' + (id % {p})::INTEGER AS updated,
            hash(id, {seed}, 6) % 2 = 0 AS flag,
            CASE WHEN id % 3 = 0 THEN NULL ELSE 'note ' || id END AS note,
            (hash(id, {seed}, 7) % 1000)::SMALLINT AS qty,
            strftime(DATE '2024-01-01' + (id % {p})::INTEGER, '%Y-%m-%d') AS dt
        FROM range(?) t(id)
    """
    cols = "id, customer_id, amount, price, status, created_at, updated, flag, note, qty, dt"
    src = f"""
        WITH b AS ({base})
        SELECT {cols} FROM b
        UNION ALL SELECT {cols} FROM b WHERE id % {step} IN (7, 9)
        UNION ALL SELECT NULL, customer_id, amount, price, status, created_at, updated, flag,
                         note, qty, dt FROM b WHERE id < {nulls}
    """
    tgt = f"""
        WITH b AS ({base}),
        t AS (
            SELECT id, customer_id,
                   CASE WHEN id % {step} = 2 THEN (amount + 0.01)::DECIMAL(12, 2) ELSE amount END AS amount,
                   CASE WHEN id % {step} = 5 THEN 'NaN'::DOUBLE
                        WHEN id % {step} = 8 THEN 0.0::DOUBLE ELSE price END AS price,
                   CASE WHEN id % {step} = 3 THEN status || '!' ELSE status END AS status,
                   created_at, updated, flag,
                   CASE WHEN id % {step} = 4 THEN (CASE WHEN note IS NULL THEN '' ELSE NULL END)
                        ELSE note END AS note,
                   qty, dt
            FROM b WHERE id % {step} NOT IN (1, 9) AND id < ?
        )
        SELECT {cols} FROM t
        UNION ALL SELECT {cols} FROM t WHERE id % {step} = 6
        UNION ALL SELECT {cols} FROM b WHERE id >= ?
        UNION ALL SELECT NULL, customer_id, amount, price, status, created_at, updated, flag,
                         note, qty, dt FROM b WHERE id < {nulls}
    """
    # Source side NaN too for id % step == 5, so that NaN = NaN is an equal pair.
    src = src.replace(
        f"CASE WHEN id % {step} = 8 THEN -0.0::DOUBLE",
        f"CASE WHEN id % {step} = 5 THEN 'NaN'::DOUBLE WHEN id % {step} = 8 THEN -0.0::DOUBLE",
    )
    tgt_base_rows = n + extra
    for side, sql, params in (
        ("source", src, [n]),
        ("target", tgt, [tgt_base_rows, n, n]),
    ):
        path = os.path.join(args.out, side)
        con.execute(
            f"COPY ({sql}) TO '{path}' (FORMAT parquet, PARTITION_BY (dt), COMPRESSION zstd, "
            f"ROW_GROUP_SIZE 122880, FILENAME_PATTERN 'part-{{i}}')",
            params,
        )

    def count(cond: str) -> int:
        return con.execute(f"SELECT count(*) FROM range(?) t(id) WHERE {cond}", [n]).fetchone()[0]

    expected = {
        "missing_in_target": count(f"id % {step} IN (1, 9)"),
        "extra_in_target": extra,
        "mismatch": count(f"id % {step} IN (2, 3, 4)"),
        "duplicate_key_source": count(f"id % {step} IN (7, 9)"),
        "duplicate_key_target": count(f"id % {step} = 6"),
        "null_key_source": nulls,
        "null_key_target": nulls,
        "source_rows": n + count(f"id % {step} IN (7, 9)") + nulls,
        "target_rows": n - count(f"id % {step} IN (1, 9)") + count(f"id % {step} = 6") + extra + nulls,
    }
    with open(os.path.join(args.out, "expected.json"), "w") as f:
        json.dump({"generator": "bench/gen_parquet.py", "args": vars(args), "totals": expected}, f, indent=2)
    print(json.dumps(expected))
    return 0


if __name__ == "__main__":
    sys.exit(main())
