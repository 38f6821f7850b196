//! Lines a user pastes and folders a script scans: the `sbatch` lines `status` and `estimate`
//! print are pasted through a shell into a stand-in Slurm that runs their `--wrap` through
//! `sh -c`, for run folders with hostile names and shard files with the run's own naming;
//! then the results are merged. And `status` and `merge` never wait on a FIFO.
#![cfg(unix)]

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::slurm::{FakeSlurm, Task};
use common::{nqueens_std, run};
use nqueens::shard::Checkpoint;
use serde_json::Value;

/// A folder name with every character a shell acts on: quotes, `$(…)`, backticks, a
/// backslash, spaces, a glob, history `!`, a newline, a tab and an escape.
const HOSTILE: &str = "run dir 'q' $(touch PWNED) \"d\" `touch PWNED` \\n !! * \n\t\x1b[31m";

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// How a run names shard `i`'s files: (checkpoint, result), relative to the run folder.
type Names = fn(usize) -> (String, String);

/// `count 12 --shard I/5` into `dir` with names `names`; `extra` flags.
fn shard(dir: &Path, names: Names, i: usize, extra: &[&str]) -> i32 {
    let (ckpt, out) = names(i);
    let (ckpt, out) = (dir.join(ckpt), dir.join(out));
    let spec = format!("{i}/5");
    let args = ["count", "12", "-q", "--shard", &spec];
    let files = ["--checkpoint", s(&ckpt), "--out", s(&out)];
    run(&[&args[..], &files, extra].concat()).0
}

/// A run of N = 12 in 5 shards under `dir`: 0..=2 done, 3 stopped part-way (a recheck
/// mismatch stops it with its good tasks saved), 4 not started.
fn partial_run(dir: &Path, names: Names) {
    for i in 0..5 {
        let (ckpt, out) = names(i);
        std::fs::create_dir_all(dir.join(ckpt).parent().unwrap()).unwrap();
        std::fs::create_dir_all(dir.join(out).parent().unwrap()).unwrap();
    }
    for i in 0..3 {
        assert_eq!(shard(dir, names, i, &[]), 0);
    }
    let stop = ["--recheck", "1", "--test-inject-fault", "603"];
    assert_eq!(shard(dir, names, 3, &stop), 3);
}

fn status_json(dir: &Path) -> (i32, Value) {
    let (code, stdout, stderr) = run(&["status", s(dir), "--json"]);
    let value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}{stderr}"));
    (code, value)
}

/// Every file under `dir`, relative to it.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// Pastes each of the run's rerun lines through `shell` from an empty folder; checks that
/// shards 3 and 4 ran once each and succeeded, that nothing a name says ran, that shard 3
/// resumed from its own checkpoint, that nothing was written outside the run's naming, and
/// that the results merge into the known total.
fn rerun_and_merge(shell: &str, dir: &Path, names: Names) {
    let (code, v) = status_json(dir);
    assert_eq!(code, 0, "{v}");
    let lines: Vec<&str> = v["rerun"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert!(!lines.is_empty(), "{v}");
    for line in &lines {
        assert!(!line.contains(|c: char| c.is_control()), "{line:?}");
    }
    let before = Checkpoint::load(&dir.join(names(3).0)).unwrap().unwrap();
    assert!(
        before.tasks_done > 0 && before.remaining() > 0,
        "{before:?}"
    );
    let slurm = FakeSlurm::new();
    let cwd = tempfile::tempdir().unwrap();
    let mut tasks = Vec::new();
    for line in &lines {
        let (ran, status) = slurm.paste(shell, line, cwd.path());
        assert_eq!(status, 0, "{line}");
        tasks.extend(ran);
    }
    tasks.sort_by_key(|t| t.shard);
    let ok = |shard| Task { shard, status: 0 };
    assert_eq!(tasks, vec![ok(3), ok(4)], "{lines:?}");
    let top = dir.parent().unwrap();
    assert!(
        files_under(cwd.path()).is_empty(),
        "the lines wrote where they were pasted"
    );
    assert!(!top.join("PWNED").exists() && !cwd.path().join("PWNED").exists());
    let after = Checkpoint::load(&dir.join(names(3).0)).unwrap().unwrap();
    assert_eq!(
        after.remaining(),
        0,
        "shard 3 did not resume from its checkpoint"
    );
    let mut expected: Vec<PathBuf> = (0..5)
        .flat_map(|i| [dir.join(names(i).0), dir.join(names(i).1)])
        .collect();
    expected.sort();
    let found: Vec<PathBuf> = files_under(dir)
        .into_iter()
        .filter(|p| !p.file_name().unwrap().to_string_lossy().starts_with('.'))
        .collect();
    assert_eq!(found, expected);
    let results = dir.join(names(0).1);
    let (code, total, stderr) = run(&["merge", s(results.parent().unwrap())]);
    assert_eq!((code, total.trim()), (0, "14200"), "{stderr}");
}

fn padded(i: usize) -> (String, String) {
    (
        format!("checkpoints/shard-{i:03}.ckpt"),
        format!("shards/shard-{i:03}.json"),
    )
}

fn prefixed(i: usize) -> (String, String) {
    (
        format!("ck/n12-part{i}.ckpt"),
        format!("res/n12-part{i}.json"),
    )
}

/// The names `scripts/slurm/count-array.sbatch` gives.
fn submitted(i: usize) -> (String, String) {
    (
        format!("checkpoints/shard-{i}.ckpt"),
        format!("shards/shard-{i}.json"),
    )
}

fn flat(i: usize) -> (String, String) {
    (format!("{i:02}.ckpt"), format!("{i:02}.json"))
}

#[test]
fn rerun_lines_pasted_for_a_hostile_folder_resume_each_shard_into_the_runs_own_names() {
    for (shell, names) in [("sh", padded as Names), ("bash", prefixed), ("sh", flat)] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join(HOSTILE);
        partial_run(&dir, names);
        rerun_and_merge(shell, &dir, names);
    }
}

/// [`partial_run`] counted with `--split-depth 4` (the default split depth of N = 12 is 3,
/// so the run's plan is another one).
fn deep_run(dir: &Path) {
    let deep = ["--split-depth", "4"];
    for i in 0..5 {
        std::fs::create_dir_all(dir.join(padded(i).0).parent().unwrap()).unwrap();
        std::fs::create_dir_all(dir.join(padded(i).1).parent().unwrap()).unwrap();
    }
    for i in 0..3 {
        assert_eq!(shard(dir, padded, i, &deep), 0);
    }
    let stop = ["--recheck", "1", "--test-inject-fault", "603"];
    assert_eq!(shard(dir, padded, 3, &[&deep[..], &stop].concat()), 3);
}

#[test]
fn a_run_counted_with_a_split_depth_is_rerun_with_it_as_its_files_record() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("deep");
    deep_run(&dir);
    let (_, v) = status_json(&dir);
    assert_eq!(v["share_of"], "estimated cost", "{v}");
    for line in v["rerun"].as_array().unwrap() {
        assert!(line.as_str().unwrap().contains("--split-depth 4"), "{line}");
    }
    rerun_and_merge("sh", &dir, padded);
}

#[test]
fn rerun_lines_that_would_count_another_plan_are_not_printed_and_a_note_says_why() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    deep_run(&dir);
    // Shard 0's result now names a split depth that rebuilds no plan of the files' hash, and
    // it is the file status takes the run's plan from; the default split depth does not
    // either.
    let path = dir.join(padded(0).1);
    let mut result = nqueens::shard::PartialResult::load(&path).unwrap();
    result.identity.plan = "214 start templates, split depth 9".into();
    result.save(&path).unwrap();
    let (_, v) = status_json(&dir);
    assert_eq!(v["rerun"], serde_json::json!([]), "{v}");
    assert_eq!(v["unfinished"], serde_json::json!(["3-4"]), "{v}");
    let notes = v["notes"].to_string();
    assert!(
        notes.contains("no rerun lines: they would count another plan"),
        "{notes}"
    );
}

/// A copy of the folder `from` (files and folders) at `to`.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let target = to.join(path.file_name().unwrap());
        if path.is_dir() {
            copy_tree(&path, &target);
        } else {
            std::fs::copy(&path, &target).unwrap();
        }
    }
}

#[test]
fn a_run_folder_copied_after_submission_gets_lines_for_the_folder_read() {
    let tmp = tempfile::tempdir().unwrap();
    let old = tmp.path().join("old");
    partial_run(&old, submitted);
    // What scripts/slurm/submit.sh records, by hand: the script is a stand-in batch script
    // that counts shard SHARD_OFFSET + T of SHARD_COUNT into OUTDIR as count-array.sbatch does.
    let script = tmp.path().join("count-array.sbatch");
    std::fs::write(
        &script,
        "#!/bin/bash\nset -e\ni=$((SHARD_OFFSET + SLURM_ARRAY_TASK_ID))\n\
         exec nqueens count \"$1\" -q --shard \"$i/$SHARD_COUNT\" \
         --checkpoint \"$2/checkpoints/shard-$i.ckpt\" --out \"$2/shards/shard-$i.json\"\n",
    )
    .unwrap();
    let args = format!(
        "script\t{}\nn\t12\noutdir\t{}\nsbatch\t--output={}/count-%A_%a.out\n",
        s(&script),
        s(&old),
        s(&old)
    );
    std::fs::write(old.join("submit.args"), args).unwrap();
    let new = tmp.path().join("new home");
    copy_tree(&old, &new);
    let (_, v) = status_json(&new);
    let notes = v["notes"].to_string();
    assert!(notes.contains("moved or copied since"), "{notes}");
    let lines: Vec<&str> = v["rerun"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        !lines[0].contains(&format!("{}/", s(&old)))
            && !lines[0].contains(&format!("{} ", s(&old))),
        "{}",
        lines[0]
    );
    assert!(
        lines[0].contains("new home/count-%A_%a.out"),
        "{}",
        lines[0]
    );
    let slurm = FakeSlurm::new();
    let cwd = tempfile::tempdir().unwrap();
    let (tasks, status) = slurm.paste("bash", lines[0], cwd.path());
    assert_eq!(status, 0, "{}", lines[0]);
    assert_eq!(tasks.len(), 2, "{tasks:?}");
    assert!(tasks.iter().all(|t| t.status == 0), "{tasks:?}");
    // The copy is finished; the old folder is as it was.
    let (code, total, _) = run(&["merge", s(&new.join("shards"))]);
    assert_eq!((code, total.trim()), (0, "14200"));
    assert_eq!(run(&["merge", s(&old.join("shards"))]).0, 3);
}

#[test]
fn the_merge_line_of_a_complete_run_is_absolute_quoted_and_pasted_gives_the_total() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join(HOSTILE);
    partial_run(&dir, padded);
    assert_eq!(shard(&dir, padded, 3, &[]), 0);
    assert_eq!(shard(&dir, padded, 4, &[]), 0);
    // Asked with a relative path, from the folder above.
    let out = common::nqueens_std()
        .args(["status", HOSTILE])
        .current_dir(tmp.path())
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("complete:"), "{text}");
    let line = text
        .lines()
        .find_map(|l| {
            l.trim_start()
                .strip_prefix("nl=")
                .map(|rest| format!("nl={rest}"))
        })
        .unwrap_or_else(|| panic!("no merge line: {text}"));
    assert!(line.contains(s(tmp.path())), "absolute: {line}");
    assert!(!line.contains(|c: char| c.is_control()), "{line:?}");
    let slurm = FakeSlurm::new();
    let cwd = tempfile::tempdir().unwrap();
    let (_, status) = slurm.paste("bash", &format!("{line} > total"), cwd.path());
    assert_eq!(status, 0, "{line}");
    let total = std::fs::read_to_string(cwd.path().join("total")).unwrap();
    assert_eq!(total.trim(), "14200");
    assert!(!tmp.path().join("PWNED").exists() && !cwd.path().join("PWNED").exists());
}

#[test]
fn submit_sh_falls_back_to_arrays_of_1001_when_scontrol_is_missing_or_fails() {
    let root = env!("CARGO_MANIFEST_DIR");
    for (scontrol, arrays) in [
        ("#!/bin/sh\nexit 127\n", 1),
        (
            "#!/bin/sh\necho 'slurm_load_ctl_conf error' >&2; exit 1\n",
            1,
        ),
        ("#!/bin/sh\necho 'MaxArraySize            = 2'\n", 2),
    ] {
        let slurm = FakeSlurm::new().with_tool("scontrol", scontrol);
        let tmp = tempfile::tempdir().unwrap();
        let run_dir = tmp.path().join("n10");
        let line = format!(
            "{root}/scripts/slurm/submit.sh 10 3 {} --cpus-per-task=1 >ids 2>err",
            s(&run_dir)
        );
        let (tasks, status) = slurm.paste("bash", &line, tmp.path());
        let err = std::fs::read_to_string(tmp.path().join("err")).unwrap();
        assert_eq!(status, 0, "{scontrol}: {err}");
        assert_eq!(tasks.len(), 3, "{scontrol}: {tasks:?} {err}");
        assert!(tasks.iter().all(|t| t.status == 0), "{tasks:?}");
        let shards: BTreeSet<usize> = tasks.iter().map(|t| t.shard).collect();
        assert_eq!(shards, BTreeSet::from([0, 1, 2]), "{tasks:?}");
        // "ARRAY_JOB_IDS MERGE_JOB_ID", the arrays' ids joined by commas.
        let ids = std::fs::read_to_string(tmp.path().join("ids")).unwrap();
        let submitted = ids.split(' ').next().unwrap().split(',').count();
        assert_eq!(submitted, arrays, "{scontrol}: {ids}");
        if arrays == 1 {
            assert!(err.contains("at most 1001 tasks"), "{err}");
        }
        let (code, total, _) = run(&["merge", s(&run_dir.join("shards"))]);
        assert_eq!((code, total.trim()), (0, "724"), "{scontrol}");
    }
}

#[test]
fn a_checkpoint_named_otherwise_gets_its_own_line_and_a_live_second_checkpoint_keeps_a_shard_off_the_lines(
) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("it's a run");
    partial_run(&dir, padded);
    // Shard 3's checkpoint moved to a name of its own: still resumed.
    let odd = dir.join("checkpoints/shard-003-old.ckpt");
    std::fs::rename(dir.join(padded(3).0), &odd).unwrap();
    let (_, v) = status_json(&dir);
    let notes = v["notes"].to_string();
    assert!(
        notes.contains("1 stopped shard (3) has a checkpoint named otherwise"),
        "{notes}"
    );
    let lines: Vec<String> = v["rerun"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap().into())
        .collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    let slurm = FakeSlurm::new();
    let cwd = tempfile::tempdir().unwrap();
    for line in &lines {
        assert_eq!(slurm.paste("sh", line, cwd.path()).1, 0, "{line}");
    }
    assert_eq!(Checkpoint::load(&odd).unwrap().unwrap().remaining(), 0);
    let (code, total, _) = run(&["merge", s(&dir.join("shards"))]);
    assert_eq!((code, total.trim()), (0, "14200"));
}

#[test]
fn a_shard_is_running_if_any_of_its_checkpoints_is_held() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    partial_run(&dir, padded);
    // A second checkpoint of shard 3, held by a live count of another shard's file name.
    let live = dir.join("checkpoints/shard-003b.ckpt");
    std::fs::copy(dir.join(padded(3).0), &live).unwrap();
    let held = nqueens::shard::checkpoint::lock(&live).unwrap();
    let (_, v) = status_json(&dir);
    assert_eq!(v["running"], serde_json::json!([3]), "{v}");
    let notes = v["notes"].to_string();
    assert!(notes.contains("shard 3 has 2 checkpoints"), "{notes}");
    let lines = v["rerun"].to_string();
    assert!(
        lines.contains("--array=4 ") && lines.contains("SHARD_OFFSET=0"),
        "{lines}"
    );
    assert_eq!(v["rerun"].as_array().unwrap().len(), 1, "{lines}");
    drop(held);
    let (_, v) = status_json(&dir);
    assert_eq!(v["running"], serde_json::json!([]), "{v}");
}

/// Runs `nqueens ARGS` and kills it if it has not ended within 60 s (a wait on a FIFO).
fn run_within(args: &[&str]) -> (i32, String, String) {
    let mut child = nqueens_std()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(60) {
            child.kill().unwrap();
            panic!("nqueens {args:?} still waits after 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    let text = |b: Vec<u8>| String::from_utf8_lossy(&b).into_owned();
    (
        out.status.code().unwrap_or(-1),
        text(out.stdout),
        text(out.stderr),
    )
}

#[test]
fn status_and_merge_name_a_fifo_and_skip_a_folder_without_waiting() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    // Shard 3 stays stopped, so status probes its checkpoint's lock below.
    partial_run(&dir, padded);
    assert_eq!(shard(&dir, padded, 4, &[]), 0);
    std::fs::create_dir(dir.join("shards/folder.json")).unwrap();
    let (code, text, _) = run_within(&["status", s(&dir)]);
    assert_eq!(code, 0, "a folder named *.json is not a problem: {text}");
    let fifo = dir.join("shards/fifo.json");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let (code, text, _) = run_within(&["status", s(&dir)]);
    assert_eq!(code, 3, "{text}");
    assert!(
        text.contains("fifo.json: it is a FIFO (named pipe), not a regular file"),
        "{text}"
    );
    let (code, _, stderr) = run_within(&["merge", s(&dir.join("shards"))]);
    assert_eq!(code, 3, "{stderr}");
    assert!(stderr.contains("fifo.json: it is a FIFO"), "{stderr}");
    // A FIFO planted as a checkpoint's lock file or as submit.args is not waited on either.
    std::fs::remove_file(&fifo).unwrap();
    for planted in ["checkpoints/.shard-003.ckpt.lock", "submit.args"] {
        let path = dir.join(planted);
        let _ = std::fs::remove_file(&path);
        assert!(std::process::Command::new("mkfifo")
            .arg(&path)
            .status()
            .unwrap()
            .success());
    }
    let (code, text, _) = run_within(&["status", s(&dir)]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("stale: 1 shard stopped"), "{text}");
}

#[test]
fn the_estimate_line_pasted_into_an_empty_folder_runs_every_shard() {
    let args = [
        "estimate",
        "12",
        "-j1",
        "--json",
        "--per-task",
        "0.001s",
        "--calibrate",
        "0.05s",
    ];
    let (code, stdout, stderr) = run(&args);
    assert_eq!(code, 0, "{stderr}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    let k = v["shards"].as_u64().unwrap() as usize;
    let line = v["sbatch"].as_str().unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let (tasks, status) = FakeSlurm::new().paste("bash", line, cwd.path());
    assert_eq!(status, 0, "{line}");
    assert_eq!(tasks.len(), k, "{line}");
    assert!(tasks.iter().all(|t| t.status == 0), "{tasks:?}: {line}");
    let (code, total, stderr) = run(&["merge", s(&cwd.path().join("out"))]);
    assert_eq!((code, total.trim()), (0, "14200"), "{stderr}");
}

#[test]
fn a_folder_whose_name_is_not_utf8_gets_no_rerun_line_and_a_note_why() {
    use std::os::unix::ffi::OsStrExt as _;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join(std::ffi::OsStr::from_bytes(b"run-\xff"));
    std::fs::create_dir(&dir).unwrap();
    let spec = ["count", "12", "-q", "--shard", "0/2", "--out"];
    let out = nqueens_std()
        .args(spec)
        .arg(dir.join("shard-0.json"))
        .status()
        .unwrap();
    assert!(out.success());
    let output = nqueens_std()
        .arg("status")
        .arg(&dir)
        .arg("--json")
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(v["rerun"], serde_json::json!([]), "{v}");
    assert!(v["notes"].to_string().contains("not UTF-8"), "{v}");
}
