//! Ctrl-C during a run: the first one stops the run between pairs (the pair being
//! written is finished and recorded, the rest are recorded as interrupted); a second
//! one stops the process at once, leaving the run's in-progress marker for the
//! dashboard to report.

use tokio::sync::watch;

/// Whether Ctrl-C was pressed.
#[derive(Clone)]
pub struct Interrupt {
    rx: watch::Receiver<bool>,
}

/// The exit code of a run stopped by Ctrl-C (128 + SIGINT).
pub const EXIT_CODE: u8 = 130;

impl Interrupt {
    /// Listen for Ctrl-C from now on.
    pub fn listen() -> Self {
        let (tx, rx) = watch::channel(false);
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_err() {
                return;
            }
            eprintln!(
                "\ninterrupted: finishing what is being written, then recording the run (Ctrl-C again to stop at once)"
            );
            let _ = tx.send(true);
            if tokio::signal::ctrl_c().await.is_ok() {
                eprintln!("stopped: the run is left marked as not wholly recorded");
                std::process::exit(i32::from(EXIT_CODE));
            }
        });
        Interrupt { rx }
    }

    /// Whether it was pressed.
    pub fn fired(&self) -> bool {
        *self.rx.borrow()
    }

    /// Wait until it is pressed.
    pub async fn wait(&self) {
        let mut rx = self.rx.clone();
        if rx.wait_for(|v| *v).await.is_err() {
            // The listener is gone (no signal handler): never fires.
            std::future::pending::<()>().await;
        }
    }
}
