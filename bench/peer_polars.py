#!/usr/bin/env python3
"""Polars peer: the same reconciliation as peer_duckdb.py (mode exact), with Polars lazy
frames. Optional: run_bench.py uses it with --peers polars when polars is importable
(it is not in requirements-dev.txt: `.venv/bin/pip install polars`).

    bench/peer_polars.py SOURCE TARGET --key id [--key COL]...

Prints one JSON object of totals on stdout (same keys and meanings as peer_duckdb.py).
Threads: POLARS_MAX_THREADS (default: all cores).
"""

import argparse
import json
import sys
import time

import polars as pl
from peer_duckdb import parquet_glob, partition_columns


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("source")
    ap.add_argument("target")
    ap.add_argument("--key", action="append", required=True)
    args = ap.parse_args()

    t0 = time.perf_counter()
    keys = args.key
    parts = partition_columns(args.source)
    if parts != partition_columns(args.target):
        raise SystemExit("peer_polars: partition columns differ")
    jk = parts + keys
    S = pl.scan_parquet(parquet_glob(args.source), hive_partitioning=True)
    T = pl.scan_parquet(parquet_glob(args.target), hive_partitioning=True)
    ss, st = S.collect_schema(), T.collect_schema()
    cols = [c for c in ss.names() if c in st.names() and c not in set(jk)]

    key_null = pl.any_horizontal([pl.col(k).is_null() for k in keys])
    Sn, Tn = S.filter(~key_null), T.filter(~key_null)

    def dups(x):
        return x.group_by(jk).agg(pl.len().alias("n")).filter(pl.col("n") > 1).select(jk)

    def same(c):
        a, b = pl.col(c), pl.col(c + "_t")
        sa, sb = ss[c], st[c]
        if sa != sb and not (sa.is_numeric() and sb.is_numeric()) and not (
            sa.is_temporal() and sb.is_temporal()
        ):
            a, b = a.cast(pl.String), b.cast(pl.String)
        return a.ne_missing(b)

    differs = pl.any_horizontal([same(c) for c in cols]) if cols else pl.lit(False)
    s_k0, t_k0 = pl.col(keys[0]), pl.col(keys[0] + "_t")
    odd = (
        Sn.join(Tn, on=jk, how="full", suffix="_t", coalesce=False, nulls_equal=False)
        .filter(s_k0.is_null() | t_k0.is_null() | differs)
        .select(jk + [c + "_t" for c in jk])
    )
    sd, td, odd, nulls_s, nulls_t = pl.collect_all(
        [dups(Sn), dups(Tn), odd, S.filter(key_null).select(pl.len()), T.filter(key_null).select(pl.len())],
        engine="streaming",
    )
    tcols = [c + "_t" for c in jk]
    missing = odd.filter(pl.col(tcols[-1]).is_null() & pl.col(jk[-1]).is_not_null())
    extra = odd.filter(pl.col(jk[-1]).is_null())
    both = odd.filter(pl.col(jk[-1]).is_not_null() & pl.col(tcols[-1]).is_not_null())
    both = both.join(sd, on=jk, how="anti").join(
        td.rename({c: c + "_t" for c in jk}), on=tcols, how="anti"
    )
    totals = {
        "missing_in_target": missing.select(jk).unique().height,
        "extra_in_target": extra.select(tcols).unique().height,
        "mismatch": both.height,
        "duplicate_key_source": sd.height,
        "duplicate_key_target": td.height,
        "null_key_source": nulls_s.item(),
        "null_key_target": nulls_t.item(),
        "mode": "exact",
        "compared_columns": cols,
        "seconds_in_process": round(time.perf_counter() - t0, 3),
    }
    print(json.dumps(totals))
    return 0


if __name__ == "__main__":
    sys.exit(main())
