//! Figures of a running process from Linux's `/proc`, for the benchmarks and the hostile-input
//! test: peak resident memory and CPU time. Each returns `None` where `/proc` cannot be read
//! (another OS, or the process is gone).

use std::fmt::Display;
use std::time::Duration;

/// Peak resident set size of process `pid` (a number, or `self`), in KiB: `VmHWM` of
/// `/proc/<pid>/status`.
pub fn peak_rss_kib(pid: impl Display) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status.lines().find_map(|l| l.strip_prefix("VmHWM:")).and_then(|v| v.split_whitespace().next()).and_then(|v| v.parse().ok())
}

/// User + system CPU time of process `pid` (a number, or `self`) so far: fields 14 and 15
/// (`utime`, `stime`) of `/proc/<pid>/stat`, counted in clock ticks of 10 ms (`USER_HZ` is 100
/// on Linux).
pub fn cpu_time(pid: impl Display) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses; the fields after it follow
    // the last ')'.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

#[cfg(test)]
mod tests {
    #[test]
    fn this_process_has_figures_on_linux() {
        if cfg!(target_os = "linux") {
            assert!(super::peak_rss_kib("self").is_some_and(|k| k > 0));
            assert!(super::cpu_time(std::process::id()).is_some());
        }
        assert_eq!(super::peak_rss_kib("no-such-process"), None);
    }
}
