//! Long runs at the frontier and the hardening of shards and checkpoints (damaged files,
//! huge inputs, rechecks), through the command line.

mod common;

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{nqueens, nqueens_std, run};
use nqueens::shard::{stable_plan, Checkpoint, PartialResult, ShardSpec};
use nqueens::CountOptions;
use predicates::prelude::*;
use predicates::str::contains;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn huge_shard_counts_neither_panic_nor_allocate() {
    let tmp = tempfile::tempdir().unwrap();
    for k in ["18446744073709551615", "4294967296"] {
        let out = tmp.path().join(format!("{k}.json"));
        let shard = format!("0/{k}");
        nqueens()
            .args(["count", "10", "-q", "--shard", &shard, "--out", s(&out)])
            .assert()
            .success();
        let result = PartialResult::load(&out).unwrap();
        assert_eq!(result.tasks, 1, "K = {k}: shard 0 holds task 0 only");
        // A shard past the plan's end is empty: a zero that merges like any other.
        let last = format!("{}/{k}", k.parse::<u128>().unwrap() - 1);
        let out = tmp.path().join(format!("{k}-last.json"));
        nqueens()
            .args(["count", "10", "-q", "--shard", &last, "--out", s(&out)])
            .assert()
            .success()
            .stdout("0\n");
    }
}

#[test]
fn k_zero_and_an_index_past_k_are_usage_errors() {
    for spec in ["0/0", "5/5", "18446744073709551615/18446744073709551615"] {
        let (code, _, err) = run(&["count", "10", "--shard", spec, "--out", "x.json"]);
        assert_eq!(code, 2, "{spec}: {err}");
    }
}

#[test]
fn a_device_as_checkpoint_is_refused_without_reading_it() {
    nqueens()
        .args(["count", "10", "--checkpoint", "/dev/zero"])
        .assert()
        .code(2)
        .stderr(contains("is a device"));
}

#[test]
fn a_checkpoint_with_an_impossible_elapsed_time_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let ckpt = tmp.path().join("c");
    let plan = stable_plan(10, &CountOptions::new()).unwrap();
    for elapsed in [-1.0, 1e300] {
        let mut cp = Checkpoint::new(plan.as_ref(), ShardSpec::whole()).unwrap();
        cp.elapsed_s = elapsed;
        cp.save(&ckpt).unwrap();
        nqueens()
            .args(["count", "10", "--checkpoint", s(&ckpt)])
            .assert()
            .code(2)
            .stderr(contains("elapsed_s").and(contains("untouched")));
    }
}

/// An edit that makes a shard file impossible.
type Forgery = fn(&mut PartialResult);

#[test]
fn forged_shard_files_do_not_merge() {
    let tmp = tempfile::tempdir().unwrap();
    let plan = stable_plan(10, &CountOptions::new()).unwrap();
    let mut files = Vec::new();
    for i in 0..2 {
        let out = tmp.path().join(format!("{i}.json"));
        let shard = format!("{i}/2");
        nqueens()
            .args(["count", "10", "-q", "--shard", &shard, "--out", s(&out)])
            .assert()
            .success();
        files.push(out);
    }
    let forgeries: [(&str, Forgery); 4] = [
        ("N is invalid", |r| r.identity.n = 40),
        ("banana", |r| r.identity.engine = "banana".into()),
        ("plan_tasks", |r| r.identity.plan_tasks = usize::MAX),
        ("elapsed_s", |r| r.elapsed_s = -4.994),
    ];
    for (why, forge) in forgeries {
        let mut r = PartialResult::load(&files[1]).unwrap();
        forge(&mut r);
        let forged = tmp.path().join("forged.json");
        r.save(&forged).unwrap();
        nqueens()
            .args(["merge", s(&files[0]), s(&forged)])
            .assert()
            .code(3)
            .stdout("")
            .stderr(contains(why));
    }
    assert_eq!(plan.n(), 10);
}

#[test]
fn a_checkpoint_in_use_is_refused_with_a_clear_message() {
    let tmp = tempfile::tempdir().unwrap();
    let ckpt = tmp.path().join("c");
    let args = [
        "count",
        "17",
        "--engine",
        "mirror",
        "-j1",
        "-q",
        "--checkpoint",
        s(&ckpt),
        "--checkpoint-every",
        "1000",
    ];
    let mut first = nqueens_std()
        .args(args)
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let waited = Instant::now();
    while !ckpt.exists() && waited.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(5));
    }
    // Stopped, it holds its lock until killed, however long the second run takes to start.
    let pid = libc::pid_t::try_from(first.id()).unwrap();
    // SAFETY: kill(2) with a live child's PID and a valid signal number has no memory effect.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGSTOP) }, 0);
    let before = std::fs::read(&ckpt).unwrap();
    let second = nqueens().args(args).output().unwrap();
    first.kill().unwrap();
    first.wait().unwrap();
    assert_eq!(second.status.code(), Some(1), "{second:?}");
    let err = String::from_utf8_lossy(&second.stderr);
    assert!(err.contains("in use by another nqueens process"), "{err}");
    assert_eq!(
        std::fs::read(&ckpt).unwrap(),
        before,
        "the refused run wrote nothing"
    );
}

#[test]
fn estimate_json_has_every_field_and_a_consistent_interval() {
    let out = nqueens()
        .args([
            "estimate",
            "13",
            "-j",
            "2",
            "--json",
            "-q",
            "--per-task",
            "1s",
            "--calibrate",
            "0.2s",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["schema"], "nqueens.estimate/1");
    assert_eq!(v["n"], 13);
    let plan = stable_plan(13, &CountOptions::new()).unwrap();
    assert_eq!(v["engine"], plan.engine());
    assert_eq!(
        v["plan_hash"],
        plan.fingerprint(),
        "the plan a sharded count runs"
    );
    assert_eq!(v["tasks"], plan.len());
    for span in ["core_hours", "wall_hours"] {
        let f = |k: &str| v[span][k].as_f64().unwrap();
        assert!(
            0.0 < f("low") && f("low") <= f("estimate") && f("estimate") <= f("high"),
            "{v}"
        );
    }
    let k = v["shards"].as_u64().unwrap();
    assert!(k >= 1 && k <= plan.len() as u64);
    let sbatch = v["sbatch"].as_str().unwrap();
    assert!(sbatch.contains(&format!("--array=0-{}", k - 1)), "{sbatch}");
    assert!(sbatch.contains("--shard auto"), "{sbatch}");
    assert!(v["samples"].as_u64().unwrap() >= 2);
    assert!(v["samples"].as_u64() <= v["samples_drawn"].as_u64());
    assert_eq!(v["pieces"]["draws"], 2);
    assert!(v["pieces"]["partial_tasks"].as_u64().is_some());
    assert!(v["sampled_cost_fraction"].as_f64().unwrap() > 0.0);
    assert!(v["per_task_hours"].as_f64().unwrap() > 0.0);
}

/// A limit the plan alone used up leaves no sampled task: the estimate says so and how to
/// fix it, with status 1, however fast the machine (N = 22's plan takes longer than a
/// millisecond to build, and each of its tasks milliseconds more). How a limit cuts a sample
/// part-way is a unit test of the calibration, with a task that runs until it is let go.
#[test]
fn a_time_limit_spent_before_any_sampled_task_ends_is_an_error_saying_so() {
    let out = nqueens()
        .args(["estimate", "22", "-j", "1", "--json", "-q"])
        .args(["--time-limit", "0.001s", "--calibrate", "0.05s"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(out.stdout.is_empty(), "{out:?}");
    assert!(
        stderr.contains("no sampled task of N = 22 finished") && stderr.contains("--time-limit"),
        "{stderr}"
    );
}

#[test]
fn boards_past_the_mitm_engine_get_an_extrapolated_estimate_marked_so() {
    for n in ["30", "31", "32"] {
        let out = nqueens()
            .args(["estimate", n, "--json", "-q", "-j", "2"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["measured"], false, "{v}");
        assert_eq!(v["engine"], "symmetry");
        let x = &v["extrapolation"];
        assert_eq!(x["engine"], "symmetry");
        assert_eq!(x["from_n"], 24);
        let steps = x["steps"].as_f64().unwrap();
        assert_eq!(steps, n.parse::<f64>().unwrap() - 24.0);
        let grow = |k: &str| x[k].as_f64().unwrap().powf(steps);
        let at = |k: &str| x["core_hours_at_from"][k].as_f64().unwrap();
        let c = |k: &str| v["core_hours"][k].as_f64().unwrap();
        assert!((c("estimate") / (at("estimate") * grow("growth_per_n")) - 1.0).abs() < 1e-9);
        assert!((c("high") / (at("high") * grow("growth_per_n_high")) - 1.0).abs() < 1e-9);
        assert!(c("low") < c("estimate") && c("estimate") < c("high"));
        assert_eq!(v["samples"], 0, "nothing was solved");
        assert!(v["speed"].is_null(), "nor timed: {v}");
        assert!(v["shards"].as_u64().unwrap() >= 1);
    }
    let out = nqueens().args(["estimate", "30"]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("NOT MEASURED") && text.contains("extrapolated"),
        "{text}"
    );
    let note = String::from_utf8_lossy(&out.stderr);
    assert!(note.contains("core-years"), "a note on the cost: {note}");
}

#[test]
fn estimate_checks_gpu_arguments_before_opening_a_gpu_and_says_what_it_counts() {
    // No GPU is opened: a build without one would say so first, a build with one would
    // note the GPU it joins on.
    for args in [
        &["estimate", "30", "--gpu"][..],
        &["estimate", "20", "--gpu", "-e", "symmetry"],
    ] {
        let (code, out, err) = run(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(out.is_empty());
        assert!(err.contains("N = 4 to 29"), "{args:?}: {err}");
        assert!(
            !err.contains("built without GPU") && !err.contains("joining on GPU"),
            "{err}"
        );
    }
    let (code, out, err) = run(&["estimate", "3", "--gpu", "--json", "--calibrate", "0.05s"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("N = 4 to 29") && err.contains("on the CPU"),
        "{err}"
    );
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v["gpu"].is_null());
}

#[test]
fn estimates_of_tiny_boards_read_well() {
    for n in ["1", "2"] {
        let (code, out, err) = run(&["estimate", n, "--calibrate", "0.05s"]);
        assert_eq!(code, 0, "{err}");
        assert!(!out.contains("-0.0"), "{out}");
        if n == "2" {
            assert!(out.contains("nothing to time"), "{out}");
        }
    }
}

/// One 1-thread estimate of N = 13 with seed `seed`, timed for a fraction of a second.
fn estimate_json(seed: &str) -> serde_json::Value {
    let out = nqueens()
        .args(["estimate", "13", "-j1", "--json", "-q", "--seed", seed])
        .args(["--calibrate", "0.1s"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn estimate_names_the_machine_and_measures_its_speed() {
    let v = estimate_json("4");
    assert!(!v["cpu"].as_str().unwrap().is_empty(), "{v}");
    assert_eq!(v["isa"], nqueens::engine::matcher_level());
    assert_eq!(v["threads"], 1);
    let speed = &v["speed"];
    let f = |k: &str| speed[k].as_f64().unwrap();
    assert!(speed["rounds"].as_u64().unwrap() >= 2, "{v}");
    let blocks = speed["blocks"].as_u64().unwrap();
    assert!((2..=10).contains(&blocks), "{v}");
    for k in ["measured_timing_spread", "sampling_spread", "task_spread"] {
        assert!(f(k) >= 0.0 && f(k).is_finite(), "{k}: {v}");
    }
    assert_eq!(
        f("timing_spread"),
        f("measured_timing_spread").max(f("timing_floor"))
    );
    assert!(
        f("timed_seconds") > 0.0 && f("core_seconds_per_unit") > 0.0,
        "{v}"
    );
    let core = v["core_hours"]["estimate"].as_f64().unwrap() * 3600.0;
    let units = v["work"]["total"].as_f64().unwrap();
    let rate = f("core_seconds_per_unit");
    assert!(
        (rate * units - core).abs() <= 1e-9 * core,
        "work × speed = cost: {v}"
    );
    let sbatch = v["sbatch"].as_str().unwrap();
    let limit = v["sbatch_time_s"].as_f64().unwrap();
    let shard_high =
        v["core_hours"]["high"].as_f64().unwrap() * 3600.0 / v["shards"].as_f64().unwrap();
    assert!(limit >= shard_high * 1.25 + 600.0 - 1.0, "{v}");
    assert!(sbatch.contains("--time=0-00:"), "{sbatch}");
}

#[test]
fn estimate_work_is_the_same_for_a_seed_whatever_the_clock_said() {
    let (a, b) = (estimate_json("7"), estimate_json("7"));
    assert_eq!(a["work"], b["work"]);
    // The engine's counters are part of the work (the phases' CPU time is speed).
    let counters = &a["work"]["counters"];
    assert!(
        counters["sampled"]["visited_pairs"].as_f64().unwrap() > 0.0,
        "{a}"
    );
    assert!(counters["plan"]["keys_built"]["estimate"].as_f64().unwrap() > 0.0);
    assert!(counters["sampled"].get("match_seconds").is_none());
    assert!(a["speed"]["phases"]["sampled"]["match_seconds"].is_number());
    assert_eq!(a["work"]["units"], "plan cost model");
    assert_eq!(a["work"]["seed"], 7);
    let w = &a["work"];
    assert!(w["sampled"].as_f64().unwrap() <= w["total"].as_f64().unwrap());
    assert_eq!(w["sampled_tasks"], a["samples"]);
    let other = estimate_json("8");
    assert_ne!(a["work"]["sample_digest"], other["work"]["sample_digest"]);
    assert_eq!(
        a["work"]["total"], other["work"]["total"],
        "the plan's work"
    );
}

/// `estimate N --json -q -j 1 --calibrate 0.05s` with `extra`, which must succeed.
fn quick_estimate(n: &str, extra: &[&str]) -> serde_json::Value {
    let out = nqueens()
        .args([
            "estimate",
            n,
            "--json",
            "-q",
            "-j",
            "1",
            "--calibrate",
            "0.05s",
        ])
        .args(extra)
        .output()
        .unwrap();
    assert!(out.status.success(), "{extra:?}: {out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `--samples` sets the sample's size (a different sample, not a longer one), and
/// `--timing-floor` the least timing spread: the interval's upper end is at least that far
/// above the estimate.
#[test]
fn estimate_samples_and_timing_floor_take_effect() {
    let small = quick_estimate("14", &["--samples", "12"]);
    assert_eq!(small["samples_drawn"], 12, "{small}");
    assert!(small["samples"].as_u64() <= Some(12));
    assert_eq!(small["work"]["sampled_tasks"], small["samples"]);
    let large = quick_estimate("14", &["--samples", "40", "--timing-floor", "60"]);
    assert_eq!(large["samples_drawn"], 40, "{large}");
    assert_ne!(
        large["work"]["sample_digest"],
        small["work"]["sample_digest"]
    );
    let speed = &large["speed"];
    assert_eq!(speed["timing_floor"], 0.6, "{speed}");
    assert!(speed["timing_spread"].as_f64() >= Some(0.6), "{speed}");
    let c = |k: &str| large["core_hours"][k].as_f64().unwrap();
    assert!(c("high") >= 1.59 * c("estimate"), "{large}");
    assert!(small["speed"]["timing_floor"].as_f64() < Some(0.6));
}

/// `--draws` sets the pieces drawn from each very large task: at N = 26 every sampled task is
/// cut into more than four times as many pieces, and solved in part (about 3 CPU seconds).
#[test]
fn estimate_draws_pieces_of_the_largest_tasks_as_asked() {
    let v = quick_estimate("26", &["--samples", "2", "--draws", "1"]);
    let pieces = &v["pieces"];
    assert_eq!(pieces["draws"], 1, "{pieces}");
    assert_eq!(pieces["partial_tasks"], v["samples"], "{v}");
    assert_eq!(v["samples"], 2, "{v}");
    assert!(pieces["of_pieces"].as_u64() > Some(4 * 2), "{pieces}");
}

#[test]
fn estimate_refuses_bad_options() {
    for args in [
        &["estimate", "13", "--per-task", "0h"][..],
        &["estimate", "13", "--samples", "1"],
        &["estimate", "40"],
        &["estimate", "13", "--engine", "banana"],
        &["estimate", "13", "--calibrate", "0s"],
        &["estimate", "13", "--timing-floor", "120"],
        &["estimate", "13", "--draws", "65"],
        &["estimate", "13", "--time-limit", "0s"],
        &["estimate", "13", "--time-limit", "soon"],
    ] {
        let (code, _, err) = run(args);
        assert_eq!(code, 2, "{args:?}: {err}");
    }
}

/// The memory bound at the frontier: 256 MB for the process and 64 MB per worker thread.
#[cfg(target_os = "linux")]
const fn memory_bound(workers: u64) -> u64 {
    (256 + 64 * workers) << 20
}

/// One task of the largest boards, on one worker thread, stays within the memory bound:
/// tasks from several cost strata of N = 24, 26 and 28 (the costliest splits first, then
/// the middle and the tail of each plan).
#[cfg(target_os = "linux")]
#[test]
#[ignore = "counts twelve frontier tasks: about five minutes"]
fn one_frontier_task_on_one_worker_fits_the_memory_bound() {
    let tmp = tempfile::tempdir().unwrap();
    for (n, tasks) in [(24u32, 1_352_540u64), (26, 5_200_300), (28, 183_575_511)] {
        for id in [0, tasks / 100, tasks / 5, tasks * 3 / 5] {
            let out = tmp.path().join(format!("{n}-{id}.json"));
            let shard = format!("{id}/{tasks}");
            let args = ["-j1", "-q", "--shard", &shard, "--out", s(&out)];
            nqueens()
                .args(["count", &n.to_string()])
                .args(args)
                .assert()
                .success();
            let peak = children_peak_rss();
            let bound = memory_bound(1);
            assert!(peak <= bound, "N = {n}, task {id}: {} MB", peak >> 20);
        }
    }
}

/// The N = 28 task with the largest west quarter of 48 random ones (141 MB of words, where a
/// unit kept every word its pattern allowed) stays within 256 MB on one worker, process and
/// plan included: the larger west quarter keeps only the words that can pair.
#[cfg(target_os = "linux")]
#[test]
#[ignore = "counts one N = 28 task: about ten seconds"]
fn the_task_with_the_largest_west_quarter_fits_256_mb() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("28.json");
    let mut child = nqueens_std()
        .args(["count", "28", "-j1", "-q", "--shard", "82946209/183575511"])
        .args(["--out", s(&out)])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let (ok, peak) = wait_with_peak_rss(&mut child);
    assert!(ok, "the count failed");
    let result = PartialResult::load(&out).unwrap();
    assert_eq!(result.tasks, 1);
    assert!(peak <= 256 << 20, "{} MB", peak >> 20);
}

/// Waits for `child` alone; returns whether it succeeded and its peak resident memory in
/// bytes (other tests' children do not count).
#[cfg(target_os = "linux")]
fn wait_with_peak_rss(child: &mut std::process::Child) -> (bool, u64) {
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: wait4 waits for this child (which std has not reaped) and fills `status` and
    // `usage`, or returns -1.
    let rc = unsafe { libc::wait4(pid, &mut status, 0, usage.as_mut_ptr()) };
    assert_eq!(rc, pid, "wait4");
    // SAFETY: filled by the successful call above (and zeroed before it).
    let usage = unsafe { usage.assume_init() };
    let ok = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
    (ok, usage.ru_maxrss.max(0) as u64 * 1024)
}

/// The largest peak resident memory of the children this process has waited for, in bytes.
#[cfg(target_os = "linux")]
fn children_peak_rss() -> u64 {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage fills the rusage it is given and returns 0, or returns -1.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, usage.as_mut_ptr()) };
    assert_eq!(rc, 0, "getrusage");
    // SAFETY: filled by the successful call above (and zeroed before it).
    let usage = unsafe { usage.assume_init() };
    // Linux gives ru_maxrss in kilobytes.
    usage.ru_maxrss.max(0) as u64 * 1024
}
