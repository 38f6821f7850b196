//! `nqueens status RUN_DIR`: how far a run is, from the files of real shard runs; it reads
//! and never writes.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use common::{nqueens, run};
use nqueens::shard::{stable_plan, Checkpoint, Digest, PartialResult, ShardSpec, ShardTotals};
use nqueens::CountOptions;
use serde_json::Value;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Runs `count 12 --shard I/5` into the submit.sh layout under `dir`.
fn shard(dir: &Path, i: usize, extra: &[&str]) -> i32 {
    let out = dir.join(format!("shards/shard-{i}.json"));
    let ckpt = dir.join(format!("checkpoints/shard-{i}.ckpt"));
    let shard = format!("{i}/5");
    let args = [
        "count",
        "12",
        "-q",
        "--shard",
        &shard,
        "--out",
        s(&out),
        "--checkpoint",
        s(&ckpt),
    ];
    run(&[&args[..], extra].concat()).0
}

/// A run of N = 12 in 5 shards: 0..=2 done, 3 stopped part-way (a recheck mismatch
/// stops it with its good tasks saved), 4 not started.
fn partial_run(dir: &Path) {
    std::fs::create_dir_all(dir.join("shards")).unwrap();
    std::fs::create_dir_all(dir.join("checkpoints")).unwrap();
    for i in 0..3 {
        assert_eq!(shard(dir, i, &[]), 0);
    }
    let stop = ["--recheck", "1", "--test-inject-fault", "603"];
    assert_eq!(shard(dir, 3, &stop), 3);
}

/// Every file under `dir` with its contents.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(snapshot(&path));
        } else {
            out.push((path.clone(), std::fs::read(&path).unwrap()));
        }
    }
    out.sort();
    out
}

fn status_json(dir: &Path, extra: &[&str]) -> (i32, Value) {
    let (code, stdout, stderr) = run(&[&["status", s(dir), "--json"][..], extra].concat());
    let value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}{stderr}"));
    (code, value)
}

/// The shard indices the `sbatch` lines run: offset plus each index of `--array`.
fn rerun_shards(lines: &Value, max: usize) -> BTreeSet<usize> {
    let mut out = BTreeSet::new();
    for line in lines.as_array().unwrap() {
        let line = line.as_str().unwrap();
        let list = line
            .split("--array=")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap();
        let offset: usize = line
            .split("SHARD_OFFSET=")
            .nth(1)
            .unwrap()
            .split([',', ' '])
            .next()
            .unwrap()
            .parse()
            .unwrap();
        for part in list.split(',') {
            let (a, b) = part.split_once('-').unwrap_or((part, part));
            let (a, b): (usize, usize) = (a.parse().unwrap(), b.parse().unwrap());
            assert!(b < max, "index {b} in '{line}' reaches MaxArraySize {max}");
            out.extend((a..=b).map(|i| offset + i));
        }
    }
    out
}

#[test]
fn a_partial_run_reports_shards_share_partial_total_and_reruns_exactly_the_unfinished() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    partial_run(&dir);
    let before = snapshot(&dir);
    let (code, v) = status_json(&dir, &["--max-array-size", "2"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(snapshot(&dir), before, "status wrote or changed a file");
    assert_eq!((v["n"].as_u64(), v["shards"].as_u64()), (Some(12), Some(5)));
    assert_eq!(
        (&v["done"], &v["in_progress"], &v["not_started"]),
        (&Value::from(3), &Value::from(1), &Value::from(1))
    );
    // The partial total is what the files hold: three results and the checkpoint.
    let mut sum = 0u128;
    for i in 0..3 {
        sum += PartialResult::load(&dir.join(format!("shards/shard-{i}.json")))
            .unwrap()
            .total;
    }
    let cp = Checkpoint::load(&dir.join("checkpoints/shard-3.ckpt"))
        .unwrap()
        .unwrap();
    assert!(cp.tasks_done > 0 && cp.remaining() > 0, "{cp:?}");
    sum += cp.total;
    assert_eq!(v["partial_total"].as_str(), Some(sum.to_string().as_str()));
    assert_eq!(v["complete"], Value::Bool(false));
    // The share is of the plan's cost model, so it differs from the share of tasks.
    assert_eq!(v["share_of"], "estimated cost");
    let share = v["done_share"].as_f64().unwrap();
    let task_share = v["tasks_done"].as_f64().unwrap() / v["plan_tasks"].as_f64().unwrap();
    assert!(
        share > 0.0 && share < 1.0 && (share - task_share).abs() > 1e-6,
        "{v}"
    );
    assert_eq!(rerun_shards(&v["rerun"], 2), BTreeSet::from([3, 4]));
    assert!(v["eta_s"].as_f64().is_some(), "{v}");
    assert!(v["cpus"][0]["cpu"].as_str().unwrap().len() > 3, "{v}");
}

#[test]
fn files_of_another_n_or_k_and_damaged_files_are_named_and_nothing_is_changed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    partial_run(&dir);
    let other_n = dir.join("shards/other-n.json");
    let other_k = dir.join("shards/other-k.json");
    nqueens()
        .args(["count", "10", "-q", "--shard", "0/5", "--out", s(&other_n)])
        .assert()
        .success();
    nqueens()
        .args(["count", "12", "-q", "--shard", "0/7", "--out", s(&other_k)])
        .assert()
        .success();
    std::fs::write(
        dir.join("shards/cut.json"),
        "{\"schema\":\"nqueens.shard/2\",\"n\":",
    )
    .unwrap();
    std::os::unix::fs::symlink(dir.join("nowhere"), dir.join("shards/gone.json")).unwrap();
    let before = snapshot(&dir.join("checkpoints"));
    let (code, v) = status_json(&dir, &[]);
    assert_eq!(code, 3, "{v}");
    let problems = v["problems"].to_string();
    for (name, why) in [
        ("other-n.json", "N = 10"),
        ("other-k.json", "K = 7"),
        ("cut.json", "truncated"),
        ("gone.json", "cannot read"),
    ] {
        let line = v["problems"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["message"].as_str().unwrap().contains(name));
        let line = line.unwrap_or_else(|| panic!("{name} not named: {problems}"));
        assert!(line["message"].as_str().unwrap().contains(why), "{line}");
    }
    // The run itself is still read right.
    assert_eq!((v["n"].as_u64(), v["done"].as_u64()), (Some(12), Some(3)));
    assert_eq!(snapshot(&dir.join("checkpoints")), before);
    // For people, what to do with them: a rerun will not replace them.
    let out = nqueens().args(["status", s(&dir)]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("move the damaged or foreign ones aside"),
        "{text}"
    );
}

/// Back-dates `path` by `hours`.
fn age(path: &Path, hours: u64) {
    let old = SystemTime::now() - Duration::from_secs(hours * 3600);
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(old)
        .unwrap();
}

#[test]
fn a_held_checkpoint_is_running_however_old_and_a_free_one_stale_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    partial_run(&dir);
    let ckpt = dir.join("checkpoints/shard-3.ckpt");
    // Shard 3's process ended seconds ago: no process holds its lock, so it is stale now,
    // long before the threshold.
    let (_, v) = status_json(&dir, &["--stale-after", "4h"]);
    assert_eq!(v["stale"][0]["shard"], 3, "{v}");
    assert_eq!(v["stale"][0]["process"], "stopped", "{v}");
    assert_eq!(v["running"], Value::Array(vec![]), "{v}");
    assert_eq!(rerun_shards(&v["rerun"], 1001), BTreeSet::from([3, 4]));
    // A running job holds the checkpoint's lock: running, never stale however old, left out
    // of the reruns; status reads it all the same and takes nothing from it.
    age(&ckpt, 3);
    let held = nqueens::shard::checkpoint::lock(&ckpt).unwrap();
    let (_, v) = status_json(&dir, &["--stale-after", "2h"]);
    assert_eq!(v["stale"], Value::Array(vec![]), "{v}");
    assert_eq!(v["running"], serde_json::json!([3]), "{v}");
    assert_eq!(v["in_progress"], 1, "{v}");
    assert_eq!(rerun_shards(&v["rerun"], 1001), BTreeSet::from([4]));
    assert_eq!(v["stale_after_s"].as_f64(), Some(7200.0));
    let (_, text, _) = run(&["status", s(&dir)]);
    assert!(text.contains("1 running, 0 not"), "{text}");
    assert!(
        text.contains("running: 1 shard (a live process") && text.contains("): 3"),
        "{text}"
    );
    assert!(
        text.contains("partial total:") && text.contains("NOT the number"),
        "{text}"
    );
    assert!(
        nqueens::shard::checkpoint::lock(&ckpt).is_err(),
        "the lock is still held"
    );
    drop(held);
    let (_, text, _) = run(&["status", s(&dir)]);
    assert!(
        text.contains("stale: 1 shard stopped (no process holds") && text.contains(": 3 (3.0 h"),
        "{text}"
    );
}

/// Stops a child process (SIGSTOP) until it is killed: it holds what it holds, and does no more.
fn stop(child: &std::process::Child) {
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    // SAFETY: kill(2) with a live child's PID and a valid signal number has no memory effect.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGSTOP) }, 0);
}

#[test]
fn a_live_count_is_running_and_once_killed_is_stopped() {
    let tmp = tempfile::tempdir().unwrap();
    let ckpt = tmp.path().join("shard-0.ckpt");
    // The checkpoint is saved before the first task and then not for an hour; once it is
    // there the count is stopped (SIGSTOP), so it is still running, holding its lock, when
    // status looks, however fast the machine.
    let mut child = common::nqueens_std()
        .args(["count", "20", "-q", "-j1", "--shard", "0/2"])
        .args(["--checkpoint", s(&ckpt), "--checkpoint-every", "3600"])
        .args(["--out", s(&tmp.path().join("shard-0.json"))])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !ckpt.exists() && started.elapsed() < Duration::from_secs(120) {
        assert!(child.try_wait().unwrap().is_none(), "the count ended early");
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(ckpt.exists(), "no first save in two minutes");
    stop(&child);
    age(&ckpt, 3);
    let (_, live) = status_json(tmp.path(), &["--stale-after", "1s"]);
    child.kill().unwrap();
    child.wait().unwrap();
    let (_, dead) = status_json(tmp.path(), &[]);
    assert_eq!(live["running"], serde_json::json!([0]), "{live}");
    assert_eq!(live["stale"], Value::Array(vec![]), "{live}");
    assert_eq!(dead["running"], Value::Array(vec![]), "{dead}");
    assert_eq!(dead["stale"][0]["shard"], 0, "{dead}");
    assert_eq!(dead["stale"][0]["process"], "stopped", "{dead}");
}

#[test]
fn a_folder_without_any_run_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("notes.json"), "[]").unwrap();
    let (code, _, stderr) = run(&["status", s(tmp.path())]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("no shard result or checkpoint"), "{stderr}");
    let (code, _, stderr) = run(&["status", s(&tmp.path().join("missing"))]);
    assert_eq!(code, 1, "{stderr}");
}

/// Writes `k` shard files of N = 10's plan under `dir`: even shards as results, odd ones as
/// checkpoints with their first task done (the counts are the plan's own).
fn many_files(dir: &Path, k: usize) {
    let plan = stable_plan(10, &CountOptions::new()).unwrap();
    let counts: Vec<u128> = (0..plan.len()).map(|t| plan.solve(t)).collect();
    for i in 0..k {
        let spec = ShardSpec::new(i, k).unwrap();
        if i % 2 == 0 {
            let mut totals = ShardTotals {
                tasks: 0,
                total: 0,
                digest: Digest::default(),
            };
            for t in spec.ids(plan.len()) {
                totals.tasks += 1;
                totals.total += counts[t];
                totals.digest.add(t, counts[t]);
            }
            let mut r = PartialResult::new(plan.as_ref(), spec, totals, Duration::from_secs(1));
            r.save(&dir.join(format!("shard-{i}.json"))).unwrap();
        } else {
            let mut cp = Checkpoint::new(plan.as_ref(), spec).unwrap();
            if let Some(t) = spec.ids(plan.len()).next() {
                cp.record(t, counts[t]).unwrap();
            }
            cp.save(&dir.join(format!("shard-{i}.ckpt"))).unwrap();
        }
    }
}

#[test]
fn two_thousand_files_are_all_accounted_for() {
    let tmp = tempfile::tempdir().unwrap();
    many_files(tmp.path(), 2000);
    let (code, v) = status_json(tmp.path(), &[]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(
        (v["done"].as_u64(), v["in_progress"].as_u64()),
        (Some(1000), Some(1000))
    );
    assert_eq!(rerun_shards(&v["rerun"], 1001).len(), 1000);
}

/// The scale of a frontier run: 10^5 files. Prints how long `status` took.
#[test]
#[ignore]
fn a_hundred_thousand_files_are_read_in_seconds() {
    let tmp = tempfile::tempdir().unwrap();
    many_files(tmp.path(), 100_000);
    let started = Instant::now();
    let (code, v) = status_json(tmp.path(), &[]);
    // SAFETY: getrusage only writes the struct it is given.
    let peak_kib = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage);
        usage.ru_maxrss
    };
    eprintln!(
        "status of 100000 files: {:.2} s; largest child's peak RSS {} MiB",
        started.elapsed().as_secs_f64(),
        peak_kib / 1024
    );
    assert_eq!(code, 0);
    assert_eq!(
        (v["done"].as_u64(), v["in_progress"].as_u64()),
        (Some(50_000), Some(50_000))
    );
    assert_eq!(rerun_shards(&v["rerun"], 1001).len(), 50_000);
}

/// Runs an `estimate` suggestion with a stand-in `sbatch` that records what each array would
/// run, and returns the shard indices (`SHARD_OFFSET` plus each `--array` index; no offset
/// for a single array), checking each index against `max`.
fn suggested_shards(line: &str, max: usize) -> Vec<usize> {
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("log");
    let fake = tmp.path().join("sbatch");
    let script = format!(
        "#!/bin/bash\noffset=0\nfor a in \"$@\"; do case $a in --array=*) list=${{a#--array=}};; \
         --export=*) offset=${{a##*SHARD_OFFSET=}}; offset=${{offset%%,*}};; esac; done\n\
         echo \"$offset $list\" >>{}\n",
        log.display()
    );
    std::fs::write(&fake, script).unwrap();
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        tmp.path().display(),
        std::env::var("PATH").unwrap()
    );
    let ok = std::process::Command::new("bash")
        .args(["-c", line])
        .current_dir(tmp.path())
        .env("PATH", path)
        .status()
        .unwrap();
    assert!(ok.success(), "{line}");
    let mut shards = Vec::new();
    for entry in std::fs::read_to_string(&log).unwrap().lines() {
        let (offset, list) = entry.split_once(' ').unwrap();
        let offset: usize = offset.parse().unwrap();
        let (a, b) = list.split_once('-').unwrap();
        let (a, b): (usize, usize) = (a.parse().unwrap(), b.parse().unwrap());
        assert!(b < max, "index {b} reaches MaxArraySize {max}: {line}");
        shards.extend((a..=b).map(|i| offset + i));
    }
    shards
}

#[test]
fn estimate_suggests_arrays_that_fit_max_array_size_and_cover_every_shard_once() {
    let estimate = |max: &str| {
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
        let (code, stdout, stderr) = run(&[&args[..], &["--max-array-size", max]].concat());
        assert_eq!(code, 0, "{stderr}");
        let v: Value = serde_json::from_str(&stdout).unwrap();
        (
            v["shards"].as_u64().unwrap() as usize,
            v["sbatch"].as_str().unwrap().to_string(),
        )
    };
    let (k, line) = estimate("3");
    assert!(k > 3, "the test needs more shards than MaxArraySize: {k}");
    let mut shards = suggested_shards(&line, 3);
    shards.sort_unstable();
    assert_eq!(shards, (0..k).collect::<Vec<_>>(), "{line}");
    assert!(line.contains(&format!("--shard $s/{k}")), "{line}");
    // Within the limit it stays one array of 'auto' shards.
    let (k, line) = estimate("100000");
    assert_eq!(
        suggested_shards(&line, 100_000),
        (0..k).collect::<Vec<_>>(),
        "{line}"
    );
    assert!(line.contains("--shard auto"), "{line}");
}
