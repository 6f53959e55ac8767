//! `report.html`: the human page of a report. Verdict first, then counts, the schema
//! section, per-partition and per-column tables, and sample findings with source and
//! target values side by side. Self-contained (inline CSS, no scripts, no network).

use std::fmt::Write;

use crate::hints::Hint;
use crate::partial::FindingKind;
use crate::report::Report;

/// Escape text for HTML.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A value in a cell: NULL and the empty string each visibly themselves, a value cut
/// in the report marked with its whole length.
fn value(v: &Option<String>, chars: Option<u64>) -> String {
    let cut = chars
        .map(|n| {
            format!(
                "<span class=\"cut\">… ({} characters; whole in diffs.parquet)</span>",
                crate::report::thousands(n)
            )
        })
        .unwrap_or_default();
    match v {
        None => "<span class=\"null\">NULL</span>".into(),
        Some(s) if s.is_empty() => "<span class=\"empty\" title=\"empty string\">''</span>".into(),
        Some(s) => format!("{}{cut}", esc(s)),
    }
}

/// The shared stylesheet of report and dashboard pages.
pub const STYLE: &str = r#"
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem;color:#1d2330;background:#fafbfc}
h1{margin:.2rem 0}h2{margin-top:2rem;border-bottom:1px solid #dde;padding-bottom:.3rem}
.verdict{display:inline-block;padding:.4rem 1rem;border-radius:.4rem;font-size:1.6rem;font-weight:700;color:#fff}
.PASS{background:#1f883d}.WARN{background:#bf8700}.FAIL{background:#cf222e}.ERROR{background:#57606a}
table{border-collapse:collapse;margin:.5rem 0;background:#fff}
td,th{border:1px solid #d0d7de;padding:.3rem .6rem;text-align:left;vertical-align:top}
th{background:#f0f3f6}td.n{text-align:right;font-variant-numeric:tabular-nums}
.null{color:#888;font-style:italic}.empty{color:#8250df;font-family:monospace}.cut{color:#888;font-size:.85em}.bad{color:#cf222e;font-weight:600}
.cards{display:flex;flex-wrap:wrap;gap:.8rem}.card{background:#fff;border:1px solid #d0d7de;border-radius:.4rem;padding:.6rem 1rem;min-width:9rem}
.card .num{font-size:1.6rem;font-weight:700}.card.hot .num{color:#cf222e}
code{background:#eef1f4;padding:0 .2rem;border-radius:.2rem}
"#;

/// The root-cause hints as a table: what was found, its share, a suggestion, keys.
fn hints(h: &mut String, hints: &[Hint]) {
    if hints.is_empty() {
        return;
    }
    h.push_str("<section id=\"hints\"><h2>Likely causes</h2><table class=\"hints\"><tr><th>pattern</th><th>explains</th><th>found</th><th>suggestion</th><th>example keys</th></tr>");
    for hint in hints {
        let _ = write!(
            h,
            "<tr data-kind=\"{kind}\"><td><code>{kind}</code></td><td class=n>{share}</td><td>{summary}</td><td>{suggestion}</td><td>{examples}</td></tr>",
            kind = hint.kind.as_str(),
            share = esc(&hint.share_text()),
            summary = esc(&hint.summary),
            suggestion = esc(&hint.suggestion),
            examples = esc(&hint.example_keys()),
        );
    }
    h.push_str("</table></section>");
}

/// Render the report page.
pub(crate) fn render_report(r: &Report) -> String {
    let mut h = String::new();
    let t = &r.totals;
    let _ = write!(
        h,
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{status} {pair} · glue-recon</title><style>{STYLE}</style></head><body>",
        status = r.status,
        pair = esc(&r.pair)
    );
    let _ = write!(
        h,
        "<div id=\"verdict\" class=\"verdict {s}\">{s}</div><h1>{pair}</h1><p>{src} → {tgt} · key <code>{key}</code> · run <code>{run}</code> · {start} · trigger {trig}{incomplete}</p>",
        s = r.status,
        pair = esc(&r.pair),
        src = esc(&r.source),
        tgt = esc(&r.target),
        key = esc(&r.key.join(", ")),
        run = esc(&r.run_id),
        start = esc(&r.started_at),
        trig = esc(&r.trigger),
        incomplete = if r.complete {
            ""
        } else {
            " · <span class=\"bad\">INCOMPLETE</span>"
        }
    );
    if !r.reasons.is_empty() {
        h.push_str("<ul id=\"reasons\">");
        for reason in &r.reasons {
            let _ = write!(h, "<li>{}</li>", esc(reason));
        }
        h.push_str("</ul>");
    }
    hints(&mut h, &r.hints);
    h.push_str("<div class=\"cards\">");
    let cards = [
        ("source rows", t.source_rows, false),
        ("target rows", t.target_rows, false),
        ("matched", t.matched, false),
        ("MISSING_IN_TARGET", t.missing_in_target, true),
        ("EXTRA_IN_TARGET", t.extra_in_target, true),
        ("MISMATCH", t.mismatch, true),
        (
            "DUPLICATE_KEY",
            t.duplicate_key_source + t.duplicate_key_target,
            true,
        ),
        ("NULL_KEY", t.null_key_source + t.null_key_target, true),
    ];
    for (label, n, hot) in cards {
        let _ = write!(
            h,
            "<div class=\"card{}\" data-kind=\"{label}\"><div>{label}</div><div class=\"num\">{}</div></div>",
            if hot && n > 0 { " hot" } else { "" },
            crate::report::thousands(n)
        );
    }
    h.push_str("</div>");
    if !r.complete {
        let failed = r.partitions.iter().filter(|p| p.error.is_some()).count();
        let _ = write!(
            h,
            "<p id=\"counted\" class=\"bad\">Counts of the {} reconciled; {} not reconciled, not counted.</p>",
            crate::report::count(r.partitions.len() - failed, "partition"),
            crate::report::count(failed, "partition")
        );
    }

    let s = &r.schema;
    h.push_str("<h2>Schema</h2>");
    if s.only_in_source.is_empty() && s.only_in_target.is_empty() && s.type_changes.is_empty() {
        h.push_str("<p>Same columns and types on both sides.</p>");
    } else {
        h.push_str("<table id=\"schema\"><tr><th>column</th><th>source</th><th>target</th></tr>");
        for c in &s.only_in_source {
            let _ = write!(
                h,
                "<tr><td>{}</td><td>present</td><td class=\"bad\">missing</td></tr>",
                esc(c)
            );
        }
        for c in &s.only_in_target {
            let _ = write!(
                h,
                "<tr><td>{}</td><td class=\"bad\">missing</td><td>present</td></tr>",
                esc(c)
            );
        }
        for c in &s.type_changes {
            let _ = write!(
                h,
                "<tr><td>{}</td><td>{}</td><td{}>{}</td></tr>",
                esc(&c.column),
                esc(&c.source),
                if c.compatible { "" } else { " class=\"bad\"" },
                esc(&c.target)
            );
        }
        h.push_str("</table>");
    }
    let _ = write!(
        h,
        "<p>Compared columns: <code>{}</code></p>",
        esc(&s.compared_columns.join(", "))
    );

    h.push_str("<h2>Partitions</h2><table id=\"partitions\"><tr><th>partition</th><th>presence</th><th>status</th><th>source rows</th><th>target rows</th><th>missing</th><th>extra</th><th>mismatch</th><th>duplicate</th><th>null key</th></tr>");
    for p in &r.partitions {
        let pt = &p.totals;
        if let Some(e) = &p.error {
            // Nothing of a failed partition was counted: no zeros that look like counts.
            let _ = write!(
                h,
                "<tr><td>{}</td><td>{}</td><td><span class=\"bad\">failed: {}</span></td><td colspan=7 class=\"null\">not reconciled</td></tr>",
                esc(&p.partition),
                p.presence,
                esc(&e.message)
            );
            continue;
        }
        let status = match p.status.as_str() {
            "ok" => "ok".to_string(),
            other => format!(
                "<span class=\"bad\">{}</span>",
                esc(&other.replace('_', " "))
            ),
        };
        let n = crate::report::thousands;
        let _ = write!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{status}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td></tr>",
            esc(&p.partition),
            p.presence,
            n(pt.source_rows),
            n(pt.target_rows),
            n(pt.missing_in_target),
            n(pt.extra_in_target),
            n(pt.mismatch),
            n(pt.duplicate_key_source + pt.duplicate_key_target),
            n(pt.null_key_source + pt.null_key_target)
        );
    }
    h.push_str("</table>");

    if !r.columns.is_empty() {
        h.push_str("<h2>Columns</h2><table id=\"columns\"><tr><th>column</th><th>mismatched keys</th></tr>");
        for c in &r.columns {
            let _ = write!(
                h,
                "<tr><td>{}</td><td class=n>{}</td></tr>",
                esc(&c.column),
                c.mismatch
            );
        }
        h.push_str("</table>");
    }

    let _ = write!(
        h,
        "<h2>Samples</h2><p>Up to {} per kind; every finding is in <a href=\"{}\">{}</a>.</p>",
        r.sample_limit,
        esc(&r.artifacts.diff_rows),
        esc(&r.artifacts.diff_rows)
    );
    for kind in FindingKind::ALL {
        let Some(samples) = r.samples.get(&kind) else {
            continue;
        };
        let _ = write!(
            h,
            "<h3 id=\"{kind}\">{kind} ({})</h3><table><tr><th>partition</th>",
            crate::report::thousands(r.totals.of(kind))
        );
        for k in &r.key {
            let _ = write!(h, "<th>{}</th>", esc(k));
        }
        match kind {
            FindingKind::Mismatch => h.push_str("<th>column</th><th>source</th><th>target</th>"),
            FindingKind::DuplicateKey => h.push_str("<th>side</th><th>rows</th>"),
            FindingKind::NullKey => h.push_str("<th>side</th>"),
            _ => {}
        }
        h.push_str("</tr>");
        for s in samples {
            let lead = {
                let mut lead = format!("<td>{}</td>", esc(&s.partition));
                for k in &r.key {
                    let _ = write!(
                        lead,
                        "<td>{}</td>",
                        value(s.key.get(k).unwrap_or(&None), None)
                    );
                }
                lead
            };
            match kind {
                FindingKind::Mismatch => {
                    for d in &s.diffs {
                        let _ = write!(
                            h,
                            "<tr>{lead}<td>{}</td><td>{}</td><td>{}</td></tr>",
                            esc(&d.column),
                            value(&d.source, d.source_chars),
                            value(&d.target, d.target_chars)
                        );
                    }
                }
                FindingKind::DuplicateKey | FindingKind::NullKey => {
                    let side = s
                        .side
                        .map(|s| format!("{s:?}").to_lowercase())
                        .unwrap_or_default();
                    let count = s
                        .count
                        .map(|c| format!("<td class=n>{c}</td>"))
                        .unwrap_or_default();
                    let _ = write!(h, "<tr>{lead}<td>{side}</td>{count}</tr>");
                }
                _ => {
                    let _ = write!(h, "<tr>{lead}</tr>");
                }
            }
        }
        h.push_str("</table>");
    }
    let _ = write!(
        h,
        "<footer><p>glue-recon {} · hash encoding v{} · report schema v{} · <a href=\"report.json\">report.json</a></p></footer></body></html>",
        esc(&r.engine_version),
        r.hash_encoding_version,
        r.schema_version
    );
    h
}

/// The page written in a report's place for a pair that could not run: the error,
/// what it is about, and the run.
pub(crate) fn render_not_run(
    not_run: &crate::report::NotRun,
    meta: &crate::report::RunMeta,
) -> String {
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>ERROR {pair} · glue-recon</title><style>{STYLE}</style></head><body><div id=\"verdict\" class=\"verdict ERROR\">ERROR</div><h1>{pair}</h1><p>run <code>{run}</code> · {start} · trigger {trigger}</p><h2>The pair could not run</h2><p><code>{kind}</code>: {error}</p><p>Nothing was compared in this run: fix what the error names and run the pair again.</p></body></html>",
        pair = esc(&not_run.pair),
        run = esc(&meta.run_id),
        start = esc(&meta.started_at),
        trigger = esc(&meta.trigger),
        kind = esc(not_run.error_type),
        error = esc(&not_run.error),
    )
}
