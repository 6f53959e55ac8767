#!/usr/bin/env python3
"""DuckDB peer: reconcile two Hive-partitioned Parquet tables by key with one SQL query.

    bench/peer_duckdb.py SOURCE TARGET --key id [--key COL]... [--threads 2] [--print-sql]

Prints one JSON object of totals on stdout, with glue-recon's meanings: keys are
matched within a partition (the Hive partition columns are part of the join), a key
that occurs more than once on a side is a duplicate (counted once per side) and is not
value-compared, a row with a NULL key column is counted apart, and a key present on
one side only is missing/extra whether or not it is duplicated there. Compared columns:
all columns both sides have, except key and partition columns; `IS DISTINCT FROM`
(NULL = NULL, NaN = NaN, -0.0 = 0.0, equal values of different numeric widths equal).
"""

import argparse
import glob
import json
import os
import re
import sys
import time

import duckdb


def q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def parquet_glob(root: str) -> str:
    return os.path.join(root, "**", "*.parquet")


def partition_columns(root: str) -> list[str]:
    """Hive partition keys (key=value folders) of the first Parquet file under root."""
    for path in glob.iglob(parquet_glob(root), recursive=True):
        rel = os.path.relpath(os.path.dirname(path), root)
        return [seg.split("=", 1)[0] for seg in rel.split(os.sep) if re.match(r"^[^=]+=", seg)]
    raise SystemExit(f"peer_duckdb: no Parquet files under {root}")


def schema(con, root: str) -> dict[str, str]:
    rows = con.execute(
        "DESCRIBE SELECT * FROM read_parquet(?, hive_partitioning = true)", [parquet_glob(root)]
    ).fetchall()
    return {r[0]: r[1] for r in rows}


NUMERIC = re.compile(r"^(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|U\w*INT|FLOAT|DOUBLE|DECIMAL.*)$")
TEMPORAL = re.compile(r"^(DATE|TIMESTAMP.*)$")


def compare_expr(col: str, ts: str, tt: str) -> str:
    a, b = f"s.{q(col)}", f"t.{q(col)}"
    same_family = ts == tt or (NUMERIC.match(ts) and NUMERIC.match(tt)) or (
        TEMPORAL.match(ts) and TEMPORAL.match(tt)
    )
    if not same_family:
        a, b = f"CAST({a} AS VARCHAR)", f"CAST({b} AS VARCHAR)"
    return f"{a} IS DISTINCT FROM {b}"


def build_sql(src: str, tgt: str, keys: list[str], parts: list[str], cols: list[tuple[str, str, str]],
              mode: str = "exact") -> str:
    """The reconciliation query. mode "exact": glue-recon's meanings (see the module doc).
    mode "join": only the FULL OUTER JOIN, counting rows (a duplicated key counts once per
    joined row; no duplicate or NULL-key counts): the cheapest thing DuckDB can do."""
    jk = parts + keys
    on = " AND ".join(f"s.{q(c)} = t.{q(c)}" for c in jk)
    key_not_null = " AND ".join(f"{q(k)} IS NOT NULL" for k in keys)
    key_null = " OR ".join(f"{q(k)} IS NULL" for k in keys)
    differs = " OR ".join(compare_expr(c, ts, tt) for c, ts, tt in cols) or "false"
    read = "read_parquet('{}', hive_partitioning = true)"
    S = read.format(parquet_glob(src).replace("'", "''"))
    T = read.format(parquet_glob(tgt).replace("'", "''"))
    k0 = q(keys[0])
    if mode == "join":
        return f"""
SELECT
  count(*) FILTER (WHERE t.{k0} IS NULL) AS missing_in_target,
  count(*) FILTER (WHERE s.{k0} IS NULL) AS extra_in_target,
  count(*) FILTER (WHERE s.{k0} IS NOT NULL AND t.{k0} IS NOT NULL AND ({differs})) AS mismatch
FROM (SELECT * FROM {S} WHERE {key_not_null}) s
FULL OUTER JOIN (SELECT * FROM {T} WHERE {key_not_null}) t ON {on}
"""
    grp = ", ".join(q(c) for c in jk)
    sel = ", ".join([f"s.{q(c)} AS {q('s_' + c)}" for c in jk] + [f"t.{q(c)} AS {q('t_' + c)}" for c in jk])
    s_key = "(" + ", ".join(q("s_" + c) for c in jk) + ")"
    t_key = "(" + ", ".join(q("t_" + c) for c in jk) + ")"
    s_k0, t_k0 = q("s_" + keys[0]), q("t_" + keys[0])
    dup_on_s = " AND ".join(f"sd.{q(c)} = odd.{q('s_' + c)}" for c in jk)
    dup_on_t = " AND ".join(f"td.{q(c)} = odd.{q('t_' + c)}" for c in jk)
    # The join streams into a filter that keeps only the rows that can be findings (a few);
    # the DISTINCT counts and the duplicate look-ups run on those alone.
    return f"""
WITH
  sd AS (SELECT {grp} FROM {S} WHERE {key_not_null} GROUP BY ALL HAVING count(*) > 1),
  td AS (SELECT {grp} FROM {T} WHERE {key_not_null} GROUP BY ALL HAVING count(*) > 1),
  j AS (
    SELECT {sel}, ({differs}) AS differs
    FROM (SELECT * FROM {S} WHERE {key_not_null}) s
    FULL OUTER JOIN (SELECT * FROM {T} WHERE {key_not_null}) t ON {on}
  ),
  odd AS (SELECT * FROM j WHERE {s_k0} IS NULL OR {t_k0} IS NULL OR differs)
SELECT
  count(DISTINCT {s_key}) FILTER (WHERE {t_k0} IS NULL) AS missing_in_target,
  count(DISTINCT {t_key}) FILTER (WHERE {s_k0} IS NULL) AS extra_in_target,
  count(*) FILTER (WHERE {s_k0} IS NOT NULL AND {t_k0} IS NOT NULL
                   AND sd.{q(jk[0])} IS NULL AND td.{q(jk[0])} IS NULL) AS mismatch,
  (SELECT count(*) FROM sd) AS duplicate_key_source,
  (SELECT count(*) FROM td) AS duplicate_key_target,
  (SELECT count(*) FROM {S} WHERE {key_null}) AS null_key_source,
  (SELECT count(*) FROM {T} WHERE {key_null}) AS null_key_target
FROM odd
LEFT JOIN sd ON {dup_on_s}
LEFT JOIN td ON {dup_on_t}
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("source")
    ap.add_argument("target")
    ap.add_argument("--key", action="append", required=True)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--mode", choices=["exact", "join"], default="exact",
                    help="exact: glue-recon's counts (default); join: the bare FULL OUTER JOIN")
    ap.add_argument("--print-sql", action="store_true")
    args = ap.parse_args()

    t0 = time.perf_counter()
    con = duckdb.connect()
    con.execute(f"SET threads = {args.threads}")
    parts_s, parts_t = partition_columns(args.source), partition_columns(args.target)
    if parts_s != parts_t:
        raise SystemExit(f"peer_duckdb: partition columns differ: {parts_s} vs {parts_t}")
    ss, st = schema(con, args.source), schema(con, args.target)
    skip = set(args.key) | set(parts_s)
    cols = [(c, ss[c], st[c]) for c in ss if c in st and c not in skip]
    sql = build_sql(args.source, args.target, args.key, parts_s, cols, args.mode)
    if args.print_sql:
        print(sql, file=sys.stderr)
    cur = con.execute(sql)
    names = [d[0] for d in cur.description]
    totals = dict(zip(names, cur.fetchone(), strict=True))
    totals["mode"] = args.mode
    totals["compared_columns"] = [c for c, _, _ in cols]
    totals["seconds_in_process"] = round(time.perf_counter() - t0, 3)
    print(json.dumps(totals))
    return 0


if __name__ == "__main__":
    sys.exit(main())
