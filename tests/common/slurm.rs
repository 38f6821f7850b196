//! A stand-in `sbatch` that runs what it is given at once, as Slurm would on a free cluster:
//! each array task with `SLURM_ARRAY_TASK_ID` and the `--export` variables set, a `--wrap`
//! command through `sh -c`, a batch script through `bash`. So a printed `sbatch` line can be
//! pasted through a shell and its result checked.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The stand-in, in bash. Every task's exit status goes to `$FAKE_SBATCH_LOG` as
/// `OFFSET LIST INDEX STATUS` (OFFSET from `--export`'s `SHARD_OFFSET`, 0 without).
const FAKE_SBATCH: &str = r#"#!/bin/bash
list= wrap= script= exports= offset=0
args=()
while [ $# -gt 0 ]; do
    case $1 in
        --array=*) list=${1#--array=} ;;
        --export=*) exports=${1#--export=} ;;
        --wrap=*) wrap=${1#--wrap=} ;;
        --parsable|--*=*) ;;
        -*) shift ;;
        *) script=$1; shift; args=("$@"); break ;;
    esac
    shift
done
vars=()
IFS=, read -ra parts <<<"$exports"
for p in "${parts[@]}"; do
    case $p in
        ALL) ;;
        SHARD_OFFSET=*) offset=${p#SHARD_OFFSET=}; vars+=("$p") ;;
        *=*) vars+=("$p") ;;
    esac
done
tasks=()
IFS=, read -ra ranges <<<"$list"
for r in "${ranges[@]}"; do
    for ((i = ${r%-*}; i <= ${r#*-}; i++)); do tasks+=("$i"); done
done
vars+=(SLURM_ARRAY_TASK_MIN="${tasks[0]}" SLURM_ARRAY_TASK_MAX="${tasks[-1]}")
vars+=(SLURM_ARRAY_TASK_COUNT="${#tasks[@]}")
for i in "${tasks[@]}"; do
    if [ -n "$wrap" ]; then
        env "${vars[@]}" SLURM_ARRAY_TASK_ID="$i" sh -c "$wrap" >/dev/null 2>&1
    else
        env "${vars[@]}" SLURM_ARRAY_TASK_ID="$i" bash "$script" "${args[@]}" >/dev/null 2>&1
    fi
    echo "$offset $list $i $?" >>"$FAKE_SBATCH_LOG"
done
echo 1
"#;

/// A folder holding the stand-in `sbatch` and an `nqueens` that is the binary under test.
pub(crate) struct FakeSlurm {
    bin: tempfile::TempDir,
    log: PathBuf,
}

/// One array task the stand-in ran: its shard (offset + index) and exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Task {
    pub(crate) shard: usize,
    pub(crate) status: i32,
}

impl FakeSlurm {
    pub(crate) fn new() -> FakeSlurm {
        use std::os::unix::fs::PermissionsExt as _;
        let bin = tempfile::tempdir().unwrap();
        let sbatch = bin.path().join("sbatch");
        std::fs::write(&sbatch, FAKE_SBATCH).unwrap();
        std::fs::set_permissions(&sbatch, std::fs::Permissions::from_mode(0o755)).unwrap();
        let nqueens = assert_cmd::cargo::cargo_bin("nqueens");
        std::os::unix::fs::symlink(nqueens, bin.path().join("nqueens")).unwrap();
        let log = bin.path().join("log");
        FakeSlurm { bin, log }
    }

    /// The stand-in with a command `name` of its own, the shell script `script`, first on
    /// PATH (e.g. an `scontrol` that fails).
    pub(crate) fn with_tool(self, name: &str, script: &str) -> FakeSlurm {
        use std::os::unix::fs::PermissionsExt as _;
        let path = self.bin.path().join(name);
        std::fs::write(&path, script).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        self
    }

    /// Runs `line` as a user pasting it: through `shell -c` in folder `cwd`, with the
    /// stand-in first on PATH. Returns the tasks run (in order) and the shell's status.
    pub(crate) fn paste(&self, shell: &str, line: &str, cwd: &Path) -> (Vec<Task>, i32) {
        let _ = std::fs::remove_file(&self.log);
        let path = format!(
            "{}:{}",
            self.bin.path().display(),
            std::env::var("PATH").unwrap()
        );
        let mut cmd = Command::new(shell);
        cmd.arg("-c").arg(line).current_dir(cwd).env("PATH", path);
        cmd.env("FAKE_SBATCH_LOG", &self.log);
        for var in nqueens::shard::scheduler::array_vars() {
            cmd.env_remove(var);
        }
        cmd.env_remove(nqueens::engine::ISA_VAR);
        let status = cmd.stdout(std::process::Stdio::null()).status().unwrap();
        let status = status.code().unwrap_or(-1);
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        let tasks = log
            .lines()
            .map(|l| {
                let f: Vec<&str> = l.split(' ').collect();
                let offset: usize = f[0].parse().unwrap();
                let index: usize = f[2].parse().unwrap();
                Task {
                    shard: offset + index,
                    status: f[3].parse().unwrap(),
                }
            })
            .collect();
        (tasks, status)
    }
}
