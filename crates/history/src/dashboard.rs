//! The static dashboard, `<root>/dashboard/index.html` and `engineer.html`, built
//! from the ledger, the resolution records and the latest report of each pair
//! (diffs are never recomputed).
//!
//! - `index.html` (summary): the big counter of open findings across every pair
//!   (green at zero), the latest verdict of each pair, and a heat map of pairs x run
//!   dates coloured by findings, each cell linking to that run's report.html.
//! - `engineer.html`: per pair the trend of its runs, the findings of its latest run
//!   per partition, its root-cause hints (read from that run's report.json), links
//!   to every run's report and diffs.parquet, drift and resolutions with their time
//!   to resolve.
//!
//! Links are relative to the dashboard folder, so the pages work from a local folder
//! opened in a browser and from S3; no script, no external asset.

use recon_engine::report::thousands;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use bytes::Bytes;
use serde::Deserialize;

use crate::ledger::{LedgerProblem, LedgerRead, LedgerRun, refresh_ledger};
use crate::resolution::{OpenPair, Resolution, accepted, open_findings, read_resolutions};
use crate::run_marker::{UnfinishedRun, unfinished_runs};
use recon_engine::error::{ReconError, Result};
use recon_engine::hints::Hint;
use recon_engine::html::{STYLE, esc};
use recon_engine::layout::DASHBOARD_DIR;
use recon_engine::storage::Storage;

/// Run dates shown in the heat map (the most recent ones).
const HEAT_MAP_DATES: usize = 30;
/// Runs listed per pair on the engineer page.
const RUNS_LISTED: usize = 20;

const DASHBOARD_STYLE: &str = r#"
nav a{margin-right:1rem;font-weight:600}
.counter{display:inline-block;padding:1rem 2rem;border-radius:.6rem;color:#fff;text-align:center}
.counter .num{font-size:4rem;font-weight:800;line-height:1}.counter.zero{background:#1f883d}.counter.open{background:#cf222e}
table.heat td{text-align:center;min-width:4.2rem;padding:0}table.heat td a,table.heat td span{display:inline-block;padding:.35rem .3rem;color:#111;text-decoration:none}table.heat td a+a{border-left:1px solid rgba(0,0,0,.25)}
.h0{background:#aceebb}.h1{background:#ffe8a3}.h2{background:#ffb77c}.h3{background:#ff8182}.h4{background:#d1242f}.h4 a{color:#fff!important}.hnone{background:#eef1f4}
.drift{outline:3px solid #8250df;outline-offset:-3px}.muted{color:#667}
svg.trend rect.clean{fill:#1f883d}svg.trend rect.dirty{fill:#cf222e}
"#;

/// What the dashboard shows, gathered from the ledger and the resolutions.
#[derive(Debug, Clone, Default)]
pub struct DashboardData {
    /// Every pair run, oldest first.
    pub runs: Vec<LedgerRun>,
    /// Every resolution, oldest first.
    pub resolutions: Vec<Resolution>,
    /// Objects that could not be read.
    pub problems: Vec<LedgerProblem>,
    /// Runs not wholly recorded (stopped, or still running).
    pub unfinished: Vec<UnfinishedRun>,
    /// The root-cause hints of each pair's latest run, from its report.json.
    pub hints: BTreeMap<String, Vec<Hint>>,
}

impl DashboardData {
    /// Open findings per pair (latest run, not resolved).
    pub fn open(&self) -> Vec<OpenPair> {
        open_findings(&self.runs, &self.resolutions)
    }

    /// The big counter: open findings across every pair.
    pub(crate) fn open_total(&self) -> u64 {
        self.open().iter().map(|o| o.open).sum()
    }
}

/// Read the ledger and the resolutions under `root`; `known` is a read of the ledger
/// to bring up to date and `rewritten` an object written since (see
/// [`refresh_ledger`]).
pub async fn load(
    storage: &Storage,
    root: &str,
    known: LedgerRead,
    rewritten: Option<&str>,
) -> Result<DashboardData> {
    let (resolutions, mut problems) = read_resolutions(storage, root).await?;
    let ledger = refresh_ledger(storage, root, known, rewritten, &accepted(&resolutions)).await?;
    problems.extend(ledger.problems);
    let (unfinished, marker_problems) = unfinished_runs(storage, root, &ledger.runs).await?;
    problems.extend(marker_problems);
    let hints = latest_hints(storage, &ledger.runs, &mut problems).await;
    Ok(DashboardData {
        runs: ledger.runs,
        resolutions,
        problems,
        unfinished,
        hints,
    })
}

/// The hints in the report.json of each pair's latest run with findings; a report
/// that cannot be read is a problem the dashboard lists, not an error.
async fn latest_hints(
    storage: &Storage,
    runs: &[LedgerRun],
    problems: &mut Vec<LedgerProblem>,
) -> BTreeMap<String, Vec<Hint>> {
    /// The part of report.json the dashboard reads (older reports have no hints).
    #[derive(Deserialize)]
    struct WithHints {
        #[serde(default)]
        hints: Vec<Hint>,
    }
    let mut latest: BTreeMap<&str, &LedgerRun> = BTreeMap::new();
    for r in runs {
        latest.insert(&r.pair, r);
    }
    let mut hints = BTreeMap::new();
    for (pair, run) in latest {
        if run.findings == 0 {
            continue;
        }
        let uri = &run.report_uri;
        let read = async {
            let bytes = storage.for_uri(uri)?.get(uri).await?;
            serde_json::from_slice::<WithHints>(&bytes)
                .map_err(|e| ReconError::InvalidInput(format!("not a report: {e}")))
        };
        match read.await {
            Ok(r) => {
                hints.insert(pair.to_string(), r.hints);
            }
            Err(e) => problems.push(LedgerProblem {
                uri: uri.clone(),
                error: format!("the latest report of {pair} (for its hints): {e}"),
            }),
        }
    }
    hints
}

/// A link from the folder `from_dir` to `to`, relative when both are on the same
/// file system or S3 bucket, else `to` itself.
pub(crate) fn relative_link(from_dir: &str, to: &str) -> String {
    let strip = |s: &str| s.strip_prefix("file://").unwrap_or(s).to_string();
    let (a, b) = (strip(from_dir), strip(to));
    let same_kind = a.starts_with("s3://") == b.starts_with("s3://")
        && a.starts_with('/') == b.starts_with('/');
    let parts = |s: &str| -> Vec<String> {
        s.split('/')
            .filter(|c| !c.is_empty() && *c != ".")
            .map(str::to_string)
            .collect()
    };
    let (fa, fb) = (parts(&a), parts(&b));
    let common = fa.iter().zip(&fb).take_while(|(x, y)| x == y).count();
    let bucket_differs = a.starts_with("s3://") && common < 2;
    if !same_kind || bucket_differs || fa[common..].iter().any(|c| c == "..") {
        return to.to_string();
    }
    let mut out: Vec<String> = vec!["..".to_string(); fa.len() - common];
    out.extend(fb[common..].iter().cloned());
    out.join("/")
}

/// The URI of a companion file in the folder of `report_uri` (report.json).
pub fn sibling(report_uri: &str, name: &str) -> String {
    match report_uri.rsplit_once('/') {
        Some((dir, _)) => format!("{dir}/{name}"),
        None => name.to_string(),
    }
}

fn heat_class(findings: u64) -> &'static str {
    match findings {
        0 => "h0",
        1..=9 => "h1",
        10..=99 => "h2",
        100..=999 => "h3",
        _ => "h4",
    }
}

fn head(h: &mut String, title: &str, active: usize) {
    let _ = write!(
        h,
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{} · glue-recon</title><style>{STYLE}{DASHBOARD_STYLE}</style></head><body><nav>",
        esc(title)
    );
    for (i, (href, label)) in [
        ("index.html", "Summary"),
        ("engineer.html", "Engineer view"),
    ]
    .iter()
    .enumerate()
    {
        if i == active {
            let _ = write!(h, "<strong>{label}</strong> ");
        } else {
            let _ = write!(h, "<a href=\"{href}\">{label}</a> ");
        }
    }
    h.push_str("</nav>");
}

fn foot(h: &mut String, data: &DashboardData) {
    if !data.problems.is_empty() {
        h.push_str("<h2>Unreadable history objects</h2><ul id=\"problems\">");
        for p in &data.problems {
            let _ = write!(
                h,
                "<li><code>{}</code>: {}</li>",
                esc(&p.uri),
                esc(&p.error)
            );
        }
        h.push_str("</ul>");
    }
    let _ = write!(
        h,
        "<footer><p class=\"muted\">Generated {} by glue-recon {} from the ledger ({}) and {}.</p></footer></body></html>",
        recon_engine::report::now_rfc3339(),
        recon_engine::ENGINE_VERSION,
        recon_engine::report::count(data.runs.len(), "pair run"),
        recon_engine::report::count(data.resolutions.len(), "resolution")
    );
}

fn pair_link(r: &LedgerRun, dir: &str, file: &str) -> String {
    esc(&relative_link(dir, &sibling(&r.report_uri, file)))
}

/// The run date (`YYYY-MM-DD`) of a run.
fn day(r: &LedgerRun) -> &str {
    r.run_time.get(..10).unwrap_or(&r.run_time)
}

/// Findings shown for a run: findings plus one per partition not reconciled.
fn shown(r: &LedgerRun) -> u64 {
    r.findings + r.failed_partitions
}

/// Render the summary page. `dir` is the dashboard folder (for relative links).
pub(crate) fn render_index(data: &DashboardData, dir: &str) -> String {
    let mut h = String::new();
    head(&mut h, "Reconciliation dashboard", 0);
    let open = data.open();
    let total: u64 = open.iter().map(|o| o.open).sum();
    let _ = write!(
        h,
        "<h1>Are we clean right now?</h1><div id=\"open-counter\" class=\"counter {}\" data-open=\"{total}\"><div class=\"num\">{}</div><div>open finding{} across {} pair{}</div></div>",
        if total == 0 { "zero" } else { "open" },
        thousands(total),
        if total == 1 { "" } else { "s" },
        open.len(),
        if open.len() == 1 { "" } else { "s" }
    );
    h.push_str("<p class=\"muted\">Findings of the latest run of each pair not covered by a resolution (a partition that could not be reconciled counts one).</p>");
    if !data.unfinished.is_empty() {
        h.push_str("<h2 class=\"bad\">Runs not wholly recorded</h2><ul id=\"unfinished\">");
        for u in &data.unfinished {
            let _ = write!(h, "<li>{}</li>", esc(&u.describe()));
        }
        h.push_str("</ul>");
    }

    let latest: BTreeMap<&str, &LedgerRun> =
        data.runs.iter().map(|r| (r.pair.as_str(), r)).collect();
    h.push_str("<h2>Latest run per pair</h2><table id=\"latest\"><tr><th>pair</th><th>status</th><th>run</th><th>open</th><th>resolved</th><th>drift</th></tr>");
    for o in &open {
        let r = latest[o.pair.as_str()];
        let _ = write!(
            h,
            "<tr><td>{pair}</td><td><span class=\"verdict {st}\" style=\"font-size:1rem;padding:.1rem .5rem\">{st}</span>{inc}</td><td><a href=\"{link}\">{run}</a> <span class=\"muted\">{time}</span></td><td class=n>{open}</td><td class=n>{res}</td><td>{drift}</td></tr>",
            pair = esc(&o.pair),
            st = esc(&r.status),
            inc = if r.complete {
                ""
            } else {
                " <span class=\"bad\">INCOMPLETE</span>"
            },
            link = pair_link(r, dir, "report.html"),
            run = esc(&r.run_id),
            time = esc(&r.run_time),
            open = thousands(o.open),
            res = thousands(o.resolved),
            drift = r.drift.as_deref().map(esc).unwrap_or_default()
        );
    }
    h.push_str("</table>");

    // Heat map: pairs x run dates, the latest run of the pair on each date.
    let dates: BTreeSet<&str> = data.runs.iter().map(day).collect();
    let dates: Vec<&str> = dates.into_iter().rev().take(HEAT_MAP_DATES).rev().collect();
    let mut cells: BTreeMap<(&str, &str), Vec<&LedgerRun>> = BTreeMap::new();
    for r in &data.runs {
        cells.entry((r.pair.as_str(), day(r))).or_default().push(r);
    }
    h.push_str("<h2>Where, since when?</h2><p class=\"muted\">Findings per pair and run date, coloured by the day's latest run; each number links to its run's report (several runs on a day are listed oldest first). A purple frame marks DRIFT.</p><table class=\"heat\" id=\"heatmap\"><tr><th>pair</th>");
    for d in &dates {
        let _ = write!(h, "<th>{}</th>", esc(d));
    }
    h.push_str("</tr>");
    for pair in latest.keys() {
        let _ = write!(h, "<tr><th>{}</th>", esc(pair));
        for d in &dates {
            let Some(runs) = cells.get(&(*pair, *d)) else {
                h.push_str("<td class=\"hnone\"><span>·</span></td>");
                continue;
            };
            let last = runs[runs.len() - 1];
            let n = shown(last);
            let _ = write!(
                h,
                "<td class=\"{cls}{drift}\" data-pair=\"{p}\" data-date=\"{d}\" data-findings=\"{n}\">",
                cls = heat_class(n),
                drift = if last.drift.is_some() { " drift" } else { "" },
                p = esc(pair),
                d = esc(d),
            );
            for r in runs {
                let _ = write!(
                    h,
                    "<a href=\"{link}\" title=\"{time} {st} {run}{dt}\">{n}</a>",
                    link = pair_link(r, dir, "report.html"),
                    time = esc(&r.run_time),
                    st = esc(&r.status),
                    run = esc(&r.run_id),
                    dt = r
                        .drift
                        .as_deref()
                        .map(|t| format!(" · {}", esc(t)))
                        .unwrap_or_default(),
                    n = thousands(shown(r))
                );
            }
            h.push_str("</td>");
        }
        h.push_str("</tr>");
    }
    h.push_str("</table>");
    if data.runs.is_empty() {
        h.push_str("<p>No runs in the ledger yet.</p>");
    }
    foot(&mut h, data);
    h
}

fn trend_svg(runs: &[&LedgerRun], dir: &str) -> String {
    let max = runs.iter().map(|r| shown(r)).max().unwrap_or(0).max(1) as f64;
    let (w, hgt) = (14, 60);
    let mut s = format!(
        "<svg class=\"trend\" width=\"{}\" height=\"{}\" role=\"img\" aria-label=\"findings per run\">",
        runs.len() * w + 2,
        hgt + 2
    );
    for (i, r) in runs.iter().enumerate() {
        let n = shown(r);
        let bar = if n == 0 {
            3
        } else {
            3 + ((n as f64).ln_1p() / max.ln_1p() * (hgt - 3) as f64) as usize
        };
        let _ = write!(
            s,
            "<a href=\"{link}\"><rect class=\"{cls}\" x=\"{x}\" y=\"{y}\" width=\"{bw}\" height=\"{bar}\"><title>{time} {st}: {findings}</title></rect></a>",
            findings = recon_engine::report::count(n as usize, "finding"),
            link = pair_link(r, dir, "report.html"),
            cls = if n == 0 { "clean" } else { "dirty" },
            x = i * w + 1,
            y = hgt + 1 - bar,
            bw = w - 3,
            time = esc(&r.run_time),
            st = esc(&r.status)
        );
    }
    s.push_str("</svg>");
    s
}

/// Render the engineer page. `dir` is the dashboard folder (for relative links).
pub(crate) fn render_engineer(data: &DashboardData, dir: &str) -> String {
    let mut h = String::new();
    head(&mut h, "Reconciliation: engineer view", 1);
    h.push_str("<h1>Engineer view</h1>");
    let open: BTreeMap<String, OpenPair> = data
        .open()
        .into_iter()
        .map(|o| (o.pair.clone(), o))
        .collect();
    let _ = write!(h, "<p>Pairs: ");
    for pair in open.keys() {
        let _ = write!(h, "<a href=\"#pair-{p}\">{p}</a> ", p = esc(pair));
    }
    h.push_str("</p>");
    for (pair, o) in &open {
        let runs: Vec<&LedgerRun> = data.runs.iter().filter(|r| &r.pair == pair).collect();
        let Some(latest) = runs.last() else { continue };
        let _ = write!(
            h,
            "<section id=\"pair-{p}\"><h2>{p} <span class=\"verdict {st}\" style=\"font-size:1rem;padding:.1rem .5rem\">{st}</span></h2><p>{open} open, {res} resolved in the latest run <a href=\"{rep}\">report</a> · <a href=\"{diffs}\">diffs.parquet</a>{drift}</p>",
            p = esc(pair),
            st = esc(&latest.status),
            open = thousands(o.open),
            res = thousands(o.resolved),
            rep = pair_link(latest, dir, "report.html"),
            diffs = pair_link(latest, dir, "diffs.parquet"),
            drift = latest
                .drift
                .as_deref()
                .map(|d| format!(" · <strong>{}</strong>", esc(d)))
                .unwrap_or_default()
        );
        if let Some(hints) = data.hints.get(pair).filter(|h| !h.is_empty()) {
            h.push_str("<h3>Likely causes (latest run)</h3><ul class=\"hints\">");
            for hint in hints {
                let _ = write!(
                    h,
                    "<li data-kind=\"{}\"><code>{}</code> {}: {}. <em>{}</em></li>",
                    hint.kind.as_str(),
                    hint.kind.as_str(),
                    esc(&hint.share_text()),
                    esc(&hint.summary),
                    esc(&hint.suggestion)
                );
            }
            h.push_str("</ul>");
        }
        let recent: Vec<&LedgerRun> = runs.iter().rev().take(RUNS_LISTED).rev().copied().collect();
        let _ = write!(
            h,
            "<h3>Trend (findings per run)</h3>{}",
            trend_svg(&recent, dir)
        );

        h.push_str("<h3>Latest run per partition</h3><table class=\"partitions\"><tr><th>partition</th><th>status</th><th>source rows</th><th>target rows</th><th>missing</th><th>extra</th><th>mismatch</th><th>duplicate</th><th>null key</th><th>resolved</th></tr>");
        for p in &latest.partitions {
            let resolved = data.resolutions.iter().any(|r| r.covers(p));
            let _ = write!(
                h,
                "<tr><td>{}</td><td{}>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td><td>{}</td></tr>",
                esc(if p.partition.is_empty() {
                    "(all)"
                } else {
                    &p.partition
                }),
                if p.partition_status != "ok" {
                    " class=\"bad\""
                } else {
                    ""
                },
                esc(&p.partition_status.replace('_', " ")),
                thousands(p.source_rows),
                thousands(p.target_rows),
                thousands(p.missing_in_target),
                thousands(p.extra_in_target),
                thousands(p.mismatch),
                thousands(p.duplicate_key),
                thousands(p.null_key),
                if p.findings() == 0 && !p.failed() {
                    ""
                } else if resolved {
                    "yes"
                } else {
                    "<span class=\"bad\">open</span>"
                }
            );
        }
        h.push_str("</table>");

        h.push_str("<h3>Runs</h3><table class=\"runs\"><tr><th>run time</th><th>run</th><th>status</th><th>source rows</th><th>target rows</th><th>findings</th><th>drift</th><th>links</th></tr>");
        for r in recent.iter().rev() {
            let _ = write!(
                h,
                "<tr><td>{}</td><td><code>{}</code></td><td>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td><td>{}</td><td><a href=\"{}\">report</a> · <a href=\"{}\">diffs.parquet</a></td></tr>",
                esc(&r.run_time),
                esc(&r.run_id),
                esc(&r.status),
                r.source_rows,
                r.target_rows,
                shown(r),
                r.drift.as_deref().map(esc).unwrap_or_default(),
                pair_link(r, dir, "report.html"),
                pair_link(r, dir, "diffs.parquet")
            );
        }
        h.push_str("</table>");

        let mine: Vec<&Resolution> = data
            .resolutions
            .iter()
            .filter(|r| &r.pair == pair)
            .collect();
        if !mine.is_empty() {
            h.push_str("<h3>Resolutions</h3><table class=\"resolutions\"><tr><th>resolved</th><th>by</th><th>run</th><th>partitions</th><th>findings</th><th>open since</th><th>time to resolve</th><th>note</th></tr>");
            for r in mine.iter().rev() {
                let _ = write!(
                    h,
                    "<tr><td>{}</td><td>{}</td><td><code>{}</code></td><td>{}</td><td class=n>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    esc(&r.resolved_at),
                    esc(&r.resolved_by),
                    esc(&r.run_id),
                    esc(&if r.partitions.is_empty() {
                        "all".to_string()
                    } else {
                        r.partitions.join(", ")
                    }),
                    r.findings,
                    esc(&r.open_since),
                    duration(r.time_to_resolve_seconds),
                    esc(&r.note)
                );
            }
            h.push_str("</table>");
        }
        h.push_str("</section>");
    }
    if data.runs.is_empty() {
        h.push_str("<p>No runs in the ledger yet.</p>");
    }
    foot(&mut h, data);
    h
}

/// `3d 4h`, `2h 5m`, `40s`.
pub fn duration(seconds: i64) -> String {
    let (d, h, m) = (
        seconds / 86_400,
        seconds % 86_400 / 3600,
        seconds % 3600 / 60,
    );
    if d > 0 {
        format!("{d}d {h}h")
    } else if h > 0 {
        format!("{h}h {m}m")
    } else if m > 0 {
        format!("{m}m {}s", seconds % 60)
    } else {
        format!("{seconds}s")
    }
}

/// Where the dashboard was written, and what it could not read.
#[derive(Debug, Clone)]
pub struct DashboardOutput {
    /// `<root>/dashboard/index.html`.
    pub index: String,
    /// `<root>/dashboard/engineer.html`.
    pub engineer: String,
    /// The big counter.
    pub open: u64,
    /// Ledger or resolution objects that could not be read.
    pub problems: Vec<LedgerProblem>,
    /// Runs not wholly recorded, one line each ([`UnfinishedRun::describe`]).
    pub unfinished: Vec<String>,
}

/// Regenerate the dashboard under `root` from its ledger and resolutions; `known`
/// and `rewritten` as for [`load`] (an empty `known` reads the whole ledger).
pub async fn write_dashboard(
    storage: &Storage,
    root: &str,
    known: LedgerRead,
    rewritten: Option<&str>,
) -> Result<DashboardOutput> {
    let data = load(storage, root, known, rewritten).await?;
    let dir = Storage::join(root, DASHBOARD_DIR);
    let index = Storage::join(&dir, "index.html");
    let engineer = Storage::join(&dir, "engineer.html");
    let store = storage.for_uri(&index)?;
    store
        .put(&index, Bytes::from(render_index(&data, &dir)))
        .await?;
    store
        .put(&engineer, Bytes::from(render_engineer(&data, &dir)))
        .await?;
    Ok(DashboardOutput {
        index,
        engineer,
        open: data.open_total(),
        unfinished: data
            .unfinished
            .iter()
            .map(UnfinishedRun::describe)
            .collect(),
        problems: data.problems,
    })
}
