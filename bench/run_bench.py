#!/usr/bin/env python3
"""Benchmark glue-recon against DuckDB (and optionally Polars) on the same Parquet files.

    make bench                      # = .venv/bin/python bench/run_bench.py
    bench/run_bench.py [--rows 10000000] [--partitions 30] [--seed 7] [--changes 0.001]
                       [--data bench-data] [--generator glue-recon|duckdb]
                       [--edge-cases] [--peers duckdb,duckdb-join[,polars]] [--repeat 5] [--no-glue-recon]

1. Makes the data unless DATA/.bench-marker.json says it was made with the same
   parameters: `glue-recon sample-data --no-edge-cases` (default; --edge-cases keeps
   them) or bench/gen_parquet.py (--generator duckdb; an independent writer, with
   duplicates, NULL keys, NaN, -0.0 and NULL vs '', whose counts are known by construction).
2. Reads every file once (warm page cache), runs every tool once uncounted (warm-up),
   then runs --repeat rounds of every tool once
   (so the tools of a round meet the same machine), each in its own process, measuring wall time, CPU time (user+sys) and the process's peak RSS
   (/usr/bin/time -v, or wait4's ru_maxrss where there is no /usr/bin/time). Every tool
   runs with transparent huge pages off, as glue-recon sets for itself (--huge-pages).
     glue-recon   glue-recon diff SRC TGT --key id --json --out DATA/out
     duckdb       bench/peer_duckdb.py: one SQL query, FULL OUTER JOIN on (partition, id),
                  with glue-recon's counts (duplicates, NULL keys, distinct keys)
     duckdb-join  the bare FULL OUTER JOIN counting rows: DuckDB's lower bound
     polars       bench/peer_polars.py (only when polars is installed)
3. Fails (exit 1) unless glue-recon and duckdb agree on missing/extra/mismatch (and,
   with --generator duckdb, everything agrees with the counts known by construction).
4. Prints wall and CPU seconds (median), peak RSS MiB (max) and glue-recon/peer ratios
   (of the medians, and round by round), and writes them to DATA/bench-results.json.
"""

import argparse
import ctypes
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PY = sys.executable
AGREE = ("missing_in_target", "extra_in_target", "mismatch")
ALL = AGREE + ("duplicate_key_source", "duplicate_key_target", "null_key_source", "null_key_target")
GENERATED = {"source", "target", "out", "recon.toml", "expected.json", ".bench-marker.json",
             "bench-results.json"}


def log(msg: str) -> None:
    print(f"bench: {msg}", flush=True)


def fail(msg: str) -> "NoReturn":  # noqa: F821
    print(f"bench: ERROR: {msg}", file=sys.stderr, flush=True)
    sys.exit(1)


# prctl(2) option of <linux/prctl.h>.
PR_SET_THP_DISABLE = 41


def huge_pages_off() -> None:
    """Run in each tool's process before it starts (subprocess's preexec_fn): no
    transparent huge pages for it or its children (the flag survives fork and exec).

    glue-recon turns them off for itself (src/main.rs): in a virtual machine the kernel
    zeroes each 2 MiB page on first touch at a cost set by the host. On the bench
    machine that cost DuckDB 1.5-6 s of system time a run and made its rounds take
    5 to 9.5 s; with huge pages off they take about 5.1 s. Every tool runs under the
    same setting, so the bench compares the tools' work, not the host's page zeroing.
    """
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_THP_DISABLE) failed")


def measure(cmd: list[str], stderr_path: str, use_time: bool = True, huge_pages: str = "off") -> dict:
    """Run cmd; return its exit code, stdout, wall seconds and peak RSS (MiB)."""
    preexec = huge_pages_off if huge_pages == "off" else None
    time_bin = "/usr/bin/time"
    with open(stderr_path, "wb") as err:
        if use_time and os.access(time_bin, os.X_OK):
            with tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
                t0 = time.perf_counter()
                p = subprocess.run([time_bin, "-v", "-o", tf.name, *cmd], stdout=subprocess.PIPE, stderr=err,
                                   preexec_fn=preexec)
                wall = time.perf_counter() - t0
                rss_kib, cpu = None, 0.0
                for line in tf.read().splitlines():
                    if "Maximum resident set size" in line:
                        rss_kib = int(line.rsplit(":", 1)[1])
                    elif "User time (seconds)" in line or "System time (seconds)" in line:
                        cpu += float(line.rsplit(":", 1)[1])
                if rss_kib is None:
                    fail(f"no RSS from /usr/bin/time for {cmd[0]} (exit {p.returncode})")
            return {"rc": p.returncode, "stdout": p.stdout, "wall": wall, "rss_mib": rss_kib / 1024,
                    "cpu": cpu, "method": "/usr/bin/time -v"}
        t0 = time.perf_counter()
        out = tempfile.TemporaryFile()
        p = subprocess.Popen(cmd, stdout=out, stderr=err, preexec_fn=preexec)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        return {"rc": p.returncode, "stdout": out.read(), "wall": wall, "rss_mib": ru.ru_maxrss / 1024,
                "cpu": ru.ru_utime + ru.ru_stime, "method": "wait4 ru_maxrss"}


def du_mib(path: str) -> float:
    total = 0
    for d, _, files in os.walk(path):
        for f in files:
            total += os.path.getsize(os.path.join(d, f))
    return total / 2**20


def warm(path: str) -> None:
    for d, _, files in os.walk(path):
        for f in files:
            with open(os.path.join(d, f), "rb") as fh:
                while fh.read(1 << 22):
                    pass


def ensure_data(args) -> None:
    marker_path = os.path.join(args.data, ".bench-marker.json")
    want = {"generator": args.generator, "rows": args.rows, "partitions": args.partitions,
            "seed": args.seed, "changes": args.changes,
            "edge_cases": args.edge_cases or args.generator == "duckdb"}
    try:
        with open(marker_path) as f:
            have = json.load(f)
    except (OSError, ValueError):
        have = None
    if have == want:
        log(f"data in {args.data} matches {want}: reused")
        return
    if os.path.exists(args.data):
        unknown = set(os.listdir(args.data)) - GENERATED
        if unknown:
            fail(f"{args.data} holds files the bench did not make ({sorted(unknown)[:5]}); "
                 "remove it or pick another --data")
        shutil.rmtree(args.data)
    log(f"generating {args.rows:,} rows x 2 in {args.partitions} partitions with {args.generator} ...")
    t0 = time.perf_counter()
    if args.generator == "glue-recon":
        cmd = [args.bin, "sample-data", "--out", args.data, "--rows", str(args.rows),
               "--partitions", str(args.partitions), "--seed", str(args.seed), "--changes", str(args.changes)]
        if not args.edge_cases:
            cmd.append("--no-edge-cases")
    else:
        cmd = [PY, os.path.join(HERE, "gen_parquet.py"), "--out", args.data, "--rows", str(args.rows),
               "--partitions", str(args.partitions), "--seed", str(args.seed), "--changes", str(args.changes)]
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL)
    if r.returncode != 0:
        fail(f"data generation failed (exit {r.returncode}): {' '.join(cmd)}")
    with open(marker_path, "w") as f:
        json.dump(want, f)
    log(f"generated in {time.perf_counter() - t0:.1f}s")


def report_dir(args) -> str:
    """glue-recon's report folder: emptied before each of its runs (see main)."""
    return os.path.join(args.data, "out", "report")


def tools(args, src: str, tgt: str) -> list[tuple[str, list[str]]]:
    keys = [a for k in args.key for a in ("--key", k)]
    out = []
    if not args.no_glue_recon:
        out.append(("glue-recon", [args.bin, "diff", src, tgt, *keys, "--json",
                                   "--out", report_dir(args)]))
    for peer in args.peers:
        if peer == "duckdb":
            out.append(("duckdb", [PY, os.path.join(HERE, "peer_duckdb.py"), src, tgt, *keys,
                                   "--threads", str(args.threads), "--mode", "exact"]))
        elif peer == "duckdb-join":
            out.append(("duckdb-join", [PY, os.path.join(HERE, "peer_duckdb.py"), src, tgt, *keys,
                                        "--threads", str(args.threads), "--mode", "join"]))
        elif peer == "polars":
            if subprocess.run([PY, "-c", "import polars"], capture_output=True).returncode != 0:
                log("polars is not installed in this Python: skipped (.venv/bin/pip install polars)")
                continue
            out.append(("polars", [PY, os.path.join(HERE, "peer_polars.py"), src, tgt, *keys]))
        else:
            fail(f"unknown peer {peer!r} (duckdb, duckdb-join, polars)")
    return out


def totals_of(name: str, r: dict, logfile: str) -> dict:
    ok = (0, 1) if name == "glue-recon" else (0,)
    if r["rc"] not in ok:
        with open(logfile, errors="replace") as f:
            tail = f.read()[-3000:]
        fail(f"{name} exited {r['rc']}; its stderr ends:\n{tail}")
    try:
        doc = json.loads(r["stdout"])
    except ValueError:
        fail(f"{name} did not print JSON: {r['stdout'][:500]!r}")
    if name == "glue-recon":
        if not doc.get("complete", True):
            fail("glue-recon reports an incomplete run")
        return doc["totals"]
    return doc


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--data", default=os.path.join(ROOT, "bench-data"))
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--partitions", type=int, default=30)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--changes", type=float, default=0.001)
    ap.add_argument("--generator", choices=["glue-recon", "duckdb"], default="glue-recon")
    ap.add_argument("--edge-cases", action="store_true",
                    help="sample-data with its edge cases (duplicates, NULL keys, one-sided partitions, "
                         "tolerance noise); default --no-edge-cases: ~0.1%% missing, extra, changed only")
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "glue-recon"))
    ap.add_argument("--key", action="append", help="key column (default: id)")
    ap.add_argument("--peers", default="duckdb,duckdb-join",
                    help="comma-separated: duckdb, duckdb-join, polars (default: duckdb,duckdb-join)")
    ap.add_argument("--repeat", type=int, default=5, help="rounds: each tool once a round (median wall, max RSS); DuckDB's own rounds vary by up to a quarter, so fewer than 5 give an unsteady median")
    ap.add_argument("--threads", type=int, default=2, help="DuckDB threads (the machine has 2 cores)")
    ap.add_argument("--rss", choices=["auto", "wait4"], default="auto",
                    help="auto: /usr/bin/time -v when present, else wait4; wait4: always wait4")
    ap.add_argument("--no-glue-recon", action="store_true", help="run the peers only")
    ap.add_argument("--record", action="store_true",
                    help="also write the results, with the machine and the commit, to bench/results/ (commit that file)")
    ap.add_argument("--no-warm-up", dest="warm_up", action="store_false",
                    help="count from the first run (default: one uncounted warm-up round first)")
    ap.add_argument("--huge-pages", choices=["off", "system"], default="off" if sys.platform == "linux" else "system",
                    help="off (Linux default): every tool runs with transparent huge pages off, as glue-recon "
                         "sets for itself; system: the machine's setting (/sys/kernel/mm/transparent_hugepage)")
    args = ap.parse_args()
    load0 = os.getloadavg()[0]
    args.key = args.key or ["id"]
    args.peers = [p for p in args.peers.split(",") if p]
    args.data = os.path.abspath(args.data)

    needs_bin = not args.no_glue_recon or args.generator == "glue-recon"
    if needs_bin and not os.access(args.bin, os.X_OK):
        fail(f"{args.bin} not found: cargo build --release (make bench does)")
    ensure_data(args)
    src, tgt = os.path.join(args.data, "source"), os.path.join(args.data, "target")
    size_s, size_t = du_mib(src), du_mib(tgt)
    log(f"data: source {size_s:.0f} MiB, target {size_t:.0f} MiB; {os.cpu_count()} cores")

    logdir = os.path.join(args.data, "out", "logs")
    os.makedirs(logdir, exist_ok=True)
    results = {}
    # Rounds: every tool once per round, so that the tools of a round meet the same
    # machine (a shared host's speed drifts over minutes; runs of one tool in a row
    # would compare one tool's good minutes with another's bad ones).
    plan = tools(args, src, tgt)
    all_runs = {name: [] for name, _ in plan}
    all_totals = {}
    # A warm-up round first, not counted: DuckDB's first run in a bench took 8.8-14.4 s
    # against 4.8 s for the next ones (likely its program and libraries read again
    # from a disk this VM's page cache had let go of).
    for i in range(-1 if args.warm_up else 0, args.repeat):
        for name, cmd in plan:
            # Every run starts with the files in the page cache: this machine's cache
            # decays within a minute (a VM whose host reclaims it), so a run late in
            # the bench would otherwise read part of its input from disk and another
            # run not; the bench compares the tools' work, not the disk's.
            warm(src)
            warm(tgt)
            # Every glue-recon run starts from an empty report folder, as DuckDB starts
            # from nothing: the run appends to the folder's ledger and reads it back
            # for the drift check and the dashboard, so in a kept folder each round
            # would read one more ledger object than the round before.
            if name == "glue-recon":
                shutil.rmtree(report_dir(args), ignore_errors=True)
            logfile = os.path.join(logdir, f"{name}-{i if i >= 0 else 'warm-up'}.stderr")
            r = measure(cmd, logfile, use_time=args.rss != "wait4", huge_pages=args.huge_pages)
            if i < 0:
                log(f"warm-up (not counted): {name}: {r['wall']:.2f}s wall")
                continue
            all_totals[name] = totals_of(name, r, logfile)
            all_runs[name].append(r)
            log(f"round {i + 1}/{args.repeat}: {name}: {r['wall']:.2f}s wall, {r['cpu']:.2f}s CPU, "
                f"{r['rss_mib']:.0f} MiB")
    for name, _ in plan:
        runs, totals = all_runs[name], all_totals[name]
        results[name] = {
            "cmd": cmd,
            "wall_s": statistics.median(r["wall"] for r in runs),
            "wall_s_all": [round(r["wall"], 3) for r in runs],
            "cpu_s": statistics.median(r["cpu"] for r in runs),
            "peak_rss_mib": max(r["rss_mib"] for r in runs),
            "rss_method": runs[0]["method"],
            "totals": {k: totals.get(k) for k in ALL},
        }

    # Agreement.
    problems = []
    expected = None
    if args.generator == "duckdb":
        with open(os.path.join(args.data, "expected.json")) as f:
            expected = json.load(f)["totals"]
    for name, res in results.items():
        if name == "duckdb-join":
            continue  # counts rows, not keys: not comparable when keys are duplicated
        if expected:
            for k in ALL:
                if res["totals"][k] != expected[k]:
                    problems.append(f"{name}: {k} = {res['totals'][k]}, expected {expected[k]}")
    if "glue-recon" in results and "duckdb" in results:
        g, d = results["glue-recon"]["totals"], results["duckdb"]["totals"]
        for k in ALL:
            if g[k] != d[k]:
                msg = f"glue-recon {k} = {g[k]} but duckdb says {d[k]}"
                if k in AGREE:
                    problems.append(msg)
                else:
                    log(f"note: {msg}")

    # Table.
    print()
    print(f"{'tool':<12} {'wall s':>8} {'CPU s':>8} {'peak RSS MiB':>13}   missing    extra  mismatch")
    for name, res in results.items():
        t = res["totals"]
        print(f"{name:<12} {res['wall_s']:>8.2f} {res['cpu_s']:>8.2f} {res['peak_rss_mib']:>13.0f}   "
              f"{t['missing_in_target']!s:>7} {t['extra_in_target']!s:>8} {t['mismatch']!s:>9}")
    ratios = {}
    if "glue-recon" in results:
        g = results["glue-recon"]
        print()
        for name, res in results.items():
            if name == "glue-recon":
                continue
            rw, rm = g["wall_s"] / res["wall_s"], g["peak_rss_mib"] / res["peak_rss_mib"]
            rc = g["cpu_s"] / res["cpu_s"] if res["cpu_s"] else float("nan")
            per_round = [a / b for a, b in zip(g["wall_s_all"], res["wall_s_all"], strict=True)]
            ratios[name] = {"wall": round(rw, 3), "cpu": round(rc, 3), "peak_rss": round(rm, 3),
                            "wall_per_round": [round(x, 3) for x in per_round]}
            print(f"glue-recon / {name:<12} wall {rw:5.2f}x   CPU {rc:5.2f}x   peak RSS {rm:5.2f}x   "
                  f"(wall by round: {', '.join(f'{x:.2f}' for x in per_round)})")
    if results:
        method = next(iter(results.values()))["rss_method"]
        print(f"\n(wall and CPU (user+sys): median of {args.repeat} rounds, each tool once a round; "
              f"peak RSS: max; by {method}; transparent huge pages: {args.huge_pages})")
        if load0 > 1.0:
            print(f"warning: the load average was {load0:.1f} when the bench started: something else "
                  "is using the cores, so wall times are inflated (CPU seconds less so)")

    document = {"params": {"rows": args.rows, "partitions": args.partitions, "seed": args.seed,
                           "changes": args.changes, "generator": args.generator,
                           "source_mib": round(size_s, 1), "target_mib": round(size_t, 1),
                           "cores": os.cpu_count(), "repeat": args.repeat, "huge_pages": args.huge_pages,
                           "load_average_at_start": round(load0, 2)},
                "results": {k: {kk: vv for kk, vv in v.items() if kk != "cmd"} for k, v in results.items()},
                "ratios": ratios, "problems": problems}
    with open(os.path.join(args.data, "bench-results.json"), "w") as f:
        json.dump(document, f, indent=2)
    if args.record:
        log(f"recorded: {record(document)}")

    if problems:
        print()
        for p in problems:
            print(f"bench: DISAGREE: {p}", file=sys.stderr)
        for name, res in results.items():
            print(f"bench: {name} totals: {json.dumps(res['totals'])}", file=sys.stderr)
        return 1
    log("all tools agree")
    return 0


def machine() -> dict:
    """The CPU model, cores and memory of this machine, and the commit measured."""
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), cpu)
    except OSError:
        pass
    mem_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    git = ["git", "-C", ROOT]
    commit = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False)
    dirty = subprocess.run([*git, "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True,
                           check=False)
    return {"cpu": cpu, "cores": os.cpu_count(), "memory_gib": round(mem_gib, 1),
            "commit": commit.stdout.strip() or "unknown", "uncommitted_changes": bool(dirty.stdout.strip())}


def record(document: dict) -> str:
    """Write `document` with the machine and the time to bench/results/, one file a run."""
    when = time.strftime("%Y-%m-%dT%H%M%SZ", time.gmtime())
    info = machine()
    path = os.path.join(ROOT, "bench", "results", f"{when}-{info['commit']}.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump({"recorded_at": when, "machine": info, **document}, f, indent=2)
        f.write("\n")
    return os.path.relpath(path, ROOT)


if __name__ == "__main__":
    sys.exit(main())
