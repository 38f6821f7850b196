//! How much more memory this process may take, so a run can choose as many workers as fit
//! instead of dying when an allocation fails part-way (a Rust allocation failure aborts).
//!
//! Three bounds are read where the system has them (Linux): the memory cgroup's limit less
//! its usage (v2 `memory.max`, v1 `memory.limit_in_bytes`, for the process's cgroup and
//! those above it), the address-space limit (`ulimit -v`) less the address space in use
//! (`VmSize`), and the memory the kernel says is available (`MemAvailable`). Each worker
//! thread needs its plan's [`Plan::worker_bytes`](crate::Plan::worker_bytes) of the first
//! two, and address space besides for its stack and its allocator arena.

use std::path::{Path, PathBuf};

/// Address space a worker thread reserves besides what it uses: its stack (2 MiB) and the
/// heap arena glibc's allocator may reserve for it (64 MiB, mostly never touched), which
/// count against `ulimit -v` although they take no memory.
pub const THREAD_ADDRESS_SPACE: u64 = 66 << 20;

/// A bound on the memory this process may still take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bound {
    /// What sets it, for people, e.g. `the cgroup memory limit of 4.0 GB`.
    pub what: String,
    /// Bytes still free under it.
    pub free: u64,
    /// Whether it counts address space (reserved, not used) rather than memory.
    pub address_space: bool,
}

/// The bounds that hold now: the cgroup's, the address space's, the available memory's
/// (each only where the system has it).
pub fn bounds() -> Vec<Bound> {
    let mut out = Vec::new();
    if let Some((limit, usage)) = cgroup_limit() {
        out.push(Bound {
            what: format!("the memory cgroup's limit of {}", size(limit)),
            free: limit.saturating_sub(usage),
            address_space: false,
        });
    }
    if let Some((limit, used)) = address_space_limit() {
        out.push(Bound {
            what: format!("the address-space limit (ulimit -v) of {}", size(limit)),
            free: limit.saturating_sub(used),
            address_space: true,
        });
    }
    if let Some(available) = read("/proc/meminfo").and_then(|t| meminfo_available(&t)) {
        out.push(Bound {
            what: "the memory available on this machine".to_string(),
            free: available,
            address_space: false,
        });
    }
    out
}

/// How many workers of `worker_bytes` each fit under `bound`.
pub fn workers_within(bound: &Bound, worker_bytes: u64) -> u64 {
    let each = worker_bytes
        + if bound.address_space {
            THREAD_ADDRESS_SPACE
        } else {
            0
        };
    bound.free / each.max(1)
}

/// Bytes for people: `512 MB`, `3.2 GB`.
pub fn size(bytes: u64) -> String {
    let mb = bytes as f64 / 1e6;
    if mb < 1000.0 {
        format!("{mb:.0} MB")
    } else {
        format!("{:.1} GB", mb / 1000.0)
    }
}

/// The tightest cgroup memory limit over this process's cgroup and those above it, with the
/// usage of the cgroup that sets it; `None` without a limit.
fn cgroup_limit() -> Option<(u64, u64)> {
    let membership = read("/proc/self/cgroup")?;
    cgroup_dirs(&membership, Path::new("/sys/fs/cgroup"))
        .into_iter()
        .filter_map(|(dir, v2)| limit_in(&dir, v2))
        .min_by_key(|(limit, usage)| limit.saturating_sub(*usage))
}

/// The limit and usage in one cgroup folder (`v2`: `memory.max`, `memory.current`).
fn limit_in(dir: &Path, v2: bool) -> Option<(u64, u64)> {
    let (max, current) = if v2 {
        ("memory.max", "memory.current")
    } else {
        ("memory.limit_in_bytes", "memory.usage_in_bytes")
    };
    let limit = parse_limit(&read(dir.join(max))?)?;
    let usage = read(dir.join(current))
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(0);
    Some((limit, usage))
}

/// The cgroup folders that may hold this process's memory limit, from the text of
/// `/proc/self/cgroup` and the cgroup mount `root`: its own folder and every folder above
/// it, in the v2 hierarchy and the v1 `memory` one, each with whether it is v2. A container
/// often mounts its own cgroup as the root, so the root itself is always among them.
fn cgroup_dirs(membership: &str, root: &Path) -> Vec<(PathBuf, bool)> {
    let mut out = Vec::new();
    for line in membership.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let (base, v2) = match controllers {
            "" => (root.to_path_buf(), true),
            c if c.split(',').any(|c| c == "memory") => (root.join("memory"), false),
            _ => continue,
        };
        let mut dir = base.join(path.trim_start_matches('/'));
        loop {
            out.push((dir.clone(), v2));
            if dir == base || !dir.pop() {
                break;
            }
        }
    }
    out
}

/// A cgroup limit file's value: `None` for `max` or a value so large it means no limit
/// (cgroup v1 writes 2^63 rounded down to a page).
fn parse_limit(text: &str) -> Option<u64> {
    let value: u64 = text.trim().parse().ok()?;
    (value < 1 << 60).then_some(value)
}

/// `MemAvailable` from the text of `/proc/meminfo`, in bytes.
fn meminfo_available(text: &str) -> Option<u64> {
    kb_field(text, "MemAvailable:")
}

/// A `NAME:  123 kB` field of `/proc` text, in bytes.
fn kb_field(text: &str, name: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(name))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// The address-space limit (`RLIMIT_AS`) and the address space in use (`VmSize`).
#[cfg(unix)]
fn address_space_limit() -> Option<(u64, u64)> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit(2) writes the struct it is given and nothing else.
    if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut limit) } != 0 {
        return None;
    }
    if limit.rlim_cur == libc::RLIM_INFINITY {
        return None;
    }
    let used = read("/proc/self/status")
        .and_then(|t| kb_field(&t, "VmSize:"))
        .unwrap_or(0);
    // `rlim_t` is 64 bits on 64-bit Linux, not everywhere.
    #[allow(clippy::unnecessary_cast)]
    let limit = limit.rlim_cur as u64;
    Some((limit, used))
}

#[cfg(not(unix))]
fn address_space_limit() -> Option<(u64, u64)> {
    None
}

fn read(path: impl AsRef<Path>) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cgroup_folders_cover_v1_and_v2_and_every_parent() {
        let text = "12:cpu,cpuacct:/a\n4:memory:/jobs/42\n0::/user/session\n";
        let dirs = cgroup_dirs(text, Path::new("/cg"));
        let names: Vec<(String, bool)> = dirs
            .iter()
            .map(|(d, v2)| (d.display().to_string(), *v2))
            .collect();
        let want = [
            ("/cg/memory/jobs/42", false),
            ("/cg/memory/jobs", false),
            ("/cg/memory", false),
            ("/cg/user/session", true),
            ("/cg/user", true),
            ("/cg", true),
        ];
        let want: Vec<(String, bool)> = want.iter().map(|(d, v)| (d.to_string(), *v)).collect();
        assert_eq!(names, want);
    }

    #[test]
    fn limits_that_mean_none_are_none() {
        assert_eq!(parse_limit("max\n"), None);
        assert_eq!(parse_limit("9223372036854771712\n"), None);
        assert_eq!(parse_limit("4294967296\n"), Some(4 << 30));
        assert_eq!(parse_limit("junk"), None);
    }

    #[test]
    fn available_memory_is_read_in_bytes() {
        let text = "MemTotal:       24684092 kB\nMemAvailable:   1000 kB\n";
        assert_eq!(meminfo_available(text), Some(1_024_000));
        assert_eq!(meminfo_available("MemTotal: 5 kB\n"), None);
    }

    #[test]
    fn address_space_bounds_charge_each_thread_its_reservations() {
        let bound = |address_space| Bound {
            what: String::new(),
            free: 1 << 30,
            address_space,
        };
        assert_eq!(workers_within(&bound(false), 64 << 20), 16);
        assert_eq!(workers_within(&bound(true), 62 << 20), 8);
        assert_eq!(workers_within(&bound(false), 2 << 30), 0);
    }
}
