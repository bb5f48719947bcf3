//! Progress bars for layer reads, on stderr, only when stderr is a
//! terminal (the caller decides; see `OpenOptions::progress`). Output that
//! goes to a file or a CI log stays free of carriage-return noise.

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressFinish, ProgressStyle};
use std::io::Read;

/// Draws one bar per layer stream while it is read.
pub(super) struct Progress {
    multi: Option<MultiProgress>,
}

impl Progress {
    pub(super) fn new(enabled: bool) -> Progress {
        Progress { multi: enabled.then(|| MultiProgress::with_draw_target(ProgressDrawTarget::stderr())) }
    }

    /// `reader` with a bar labelled `label` advancing as it is read.
    pub(super) fn wrap(&self, label: &str, size: Option<u64>, reader: Box<dyn Read + Send>) -> Box<dyn Read + Send> {
        let Some(multi) = &self.multi else { return reader };
        let bar = match size {
            Some(n) => ProgressBar::new(n).with_style(
                ProgressStyle::with_template("{prefix:.bold} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} {eta}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    .progress_chars("=> "),
            ),
            None => ProgressBar::no_length().with_style(
                ProgressStyle::with_template("{prefix:.bold} {spinner} {bytes} {bytes_per_sec}").unwrap_or_else(|_| ProgressStyle::default_spinner()),
            ),
        };
        let bar = multi.add(bar.with_prefix(label.to_string()).with_finish(ProgressFinish::AndLeave));
        Box::new(bar.wrap_read(reader))
    }
}
