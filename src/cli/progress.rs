//! The progress line on stderr when it is a terminal; silent otherwise. While a pair
//! is hashed it shows a bar with the rows hashed of the rows the footers hold, the
//! percentage, the rate and the time left; then a "writing report" spinner.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};

use glue_recon::runner::FooterCounts;
use glue_recon::scan::Progress;

use glue_recon::report::thousands;

/// Rows hashed and partitions done, for the pair being run.
#[derive(Clone)]
pub struct Bar {
    bar: Arc<ProgressBar>,
    items: Arc<(AtomicUsize, AtomicUsize)>,
}

/// `1,234,567 rows/s`: whole rows, with separators.
fn rate(state: &ProgressState, w: &mut dyn std::fmt::Write) {
    let _ = write!(w, "{} rows/s", thousands(state.per_sec() as u64));
}

fn style(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template)
        .map(|s| s.with_key("rate", rate).progress_chars("=> "))
        .unwrap_or_else(|_| ProgressStyle::default_spinner())
}

/// Before the footers are read: no total yet.
const PREPARING: &str = "{spinner} {prefix} {msg} [{elapsed}]";
/// Hashing: the bar fills the terminal's width left by the rest, so the line never
/// wraps.
const HASHING: &str =
    "{prefix} [{wide_bar}] {percent:>3}% {human_pos}/{human_len} rows, {rate}, {msg}, ETA {eta}";

impl Bar {
    /// A bar that draws only on a terminal, and never when `quiet`.
    pub fn new(quiet: bool) -> Self {
        // Styled before its first draw, which would otherwise be indicatif's "0/0".
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden())
            .with_style(style(PREPARING));
        if !quiet {
            bar.set_draw_target(ProgressDrawTarget::stderr());
        }
        Bar {
            bar: Arc::new(bar),
            items: Arc::default(),
        }
    }

    /// Reset for a new pair: "reading footers" until the work is planned.
    pub fn start_pair(&self, name: &str) {
        self.bar.reset();
        self.bar.set_style(style(PREPARING));
        self.bar.set_length(0);
        self.bar.set_prefix(name.to_string());
        self.bar.set_message("listing files and reading footers");
        self.bar.enable_steady_tick(Duration::from_millis(200));
    }

    /// The pair is hashed and diffed: its report is being written.
    pub fn writing(&self) {
        self.bar.set_style(style(PREPARING));
        self.bar.set_message("writing report");
    }

    /// Clear the bar.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }

    fn partitions_message(&self) {
        let (done, all) = (
            self.items.0.load(Ordering::Relaxed),
            self.items.1.load(Ordering::Relaxed),
        );
        self.bar.set_message(format!(
            "{done}/{all} partition{}",
            if all == 1 { "" } else { "s" }
        ));
    }
}

/// `line` cut to `width` characters (`...` at the end where it was cut).
fn fit(line: &str, width: usize) -> String {
    if line.chars().count() <= width {
        return line.to_string();
    }
    let mut cut: String = line.chars().take(width.saturating_sub(3)).collect();
    cut.push_str("...");
    cut
}

impl Progress for Bar {
    fn rows(&self, n: u64) {
        self.bar.inc(n);
    }

    fn item_done(&self, _partition: &str) {
        self.items.0.fetch_add(1, Ordering::Relaxed);
        self.partitions_message();
    }

    fn planned(&self, rows: u64, items: usize) {
        self.items.0.store(0, Ordering::Relaxed);
        self.items.1.store(items, Ordering::Relaxed);
        self.bar.set_length(rows);
        self.bar.set_style(style(HASHING));
        self.partitions_message();
    }

    fn footers_differ(&self, counts: &FooterCounts) {
        // A line per difference, each cut to the terminal's width: a line wider than
        // the terminal would wrap under the bar.
        let (_, columns) = console::Term::stderr().size();
        let mut lines = vec![format!("  {}: the footers already differ:", counts.label())];
        lines.extend(counts.differences().into_iter().map(|d| format!("    {d}")));
        // Written with the bar cleared, then the bar drawn again below them.
        self.bar.suspend(|| {
            for line in lines {
                eprintln!("{}", fit(&line, columns as usize));
            }
        });
    }
}
