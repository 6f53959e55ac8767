//! A progress bar on stderr when it is a terminal; silent otherwise.

use std::sync::Arc;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use glue_recon::scan::Progress;

/// Rows hashed and partitions done, for the pair being run.
#[derive(Clone)]
pub struct Bar {
    bar: Arc<ProgressBar>,
}

impl Bar {
    /// A bar that draws only on a terminal, and never when `quiet`.
    pub fn new(quiet: bool) -> Self {
        let bar = ProgressBar::with_draw_target(
            None,
            if quiet {
                ProgressDrawTarget::hidden()
            } else {
                ProgressDrawTarget::stderr()
            },
        );
        bar.set_style(
            ProgressStyle::with_template(
                "{spinner} {prefix} {human_pos} rows hashed ({per_sec}) · {msg} [{elapsed}]",
            )
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        Bar { bar: Arc::new(bar) }
    }

    /// Reset for a new pair.
    pub fn start_pair(&self, name: &str) {
        self.bar.reset();
        self.bar.set_prefix(name.to_string());
        self.bar.set_message("0 partitions done");
        self.bar
            .enable_steady_tick(std::time::Duration::from_millis(200));
    }

    /// Clear the bar.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

impl Progress for Bar {
    fn rows(&self, n: u64) {
        self.bar.inc(n);
    }

    fn item_done(&self, partition: &str) {
        let done = self
            .bar
            .message()
            .split_whitespace()
            .next()
            .and_then(|n| n.parse::<u64>().ok())
            .unwrap_or(0)
            + 1;
        self.bar
            .set_message(format!("{done} partitions done (last {partition})"));
    }
}
