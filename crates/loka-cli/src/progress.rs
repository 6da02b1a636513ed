//! Progress bars for long runs (on stderr, and only when stderr is a terminal).

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;

/// A bar for `total` steps; hidden when stderr is not a terminal (logs and pipes stay clean).
pub fn bar(total: u64, prefix: &'static str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(total);
    if let Ok(style) = ProgressStyle::with_template(
        "{prefix} [{bar:25}] {pos}/{len} {elapsed_precise} eta {eta} {wide_msg}",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_prefix(prefix);
    bar
}
