//! `--gpu` from the command line: exact counts, bad devices, a wrong count caught by the
//! recheck, a lost device resumed from its checkpoint, and what a build without the `gpu`
//! feature says. The GPU tests run on whatever GPU the machine has (Mesa's lavapipe in CI)
//! and say they were skipped where there is none, unless `NQUEENS_REQUIRE_GPU` is set.

mod common;

use common::run;

#[cfg(not(feature = "gpu"))]
#[test]
fn a_build_without_the_feature_says_how_to_get_one_with_exit_2() {
    let asks: [&[&str]; 4] = [
        &["count", "8", "--gpu"],
        &["estimate", "16", "--gpu-device", "0"],
        &["bench", "--size", "tiny", "--gpu"],
        &["gpus"],
    ];
    for args in asks {
        let (code, out, err) = run(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?}: {out}");
        assert!(err.contains("--features gpu"), "{args:?}: {err}");
    }
}

/// A board the GPU leaves to the CPU opens none: a build without the feature counts it.
#[cfg(not(feature = "gpu"))]
#[test]
fn a_board_below_the_gpus_reach_is_counted_without_opening_one() {
    let (code, out, err) = run(&["count", "3", "--gpu"]);
    assert_eq!((code, out.trim()), (0, "0"), "{err}");
    assert!(err.contains("N = 3 is counted on the CPU"), "{err}");
}

#[test]
fn a_negative_gpu_number_is_named_as_such() {
    let (code, out, err) = run(&["count", "8", "--gpu-device", "-1"]);
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty(), "{out}");
    assert!(
        err.contains("'-1' is not a GPU number") && err.contains("from 0"),
        "{err}"
    );
}

/// `nqueens gpus` without a usable GPU, for whatever reason: an empty list, the reason, exit 0.
#[cfg(feature = "gpu")]
#[test]
fn gpus_answers_alike_without_a_driver_and_with_a_broken_loader() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("libvulkan.so.1"), b"not a library").unwrap();
    let no_driver = [("VK_ICD_FILENAMES", tmp.path().join("none.json"))];
    let broken = [("LD_LIBRARY_PATH", tmp.path().to_path_buf())];
    for (env, why) in [
        (no_driver, "no driver offers a device"),
        (broken, "could not be loaded"),
    ] {
        let out = common::nqueens_std()
            .args(["gpus", "--json"])
            .envs(env.iter().map(|(k, v)| (k, v)))
            .env_remove("VK_DRIVER_FILES")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{text}");
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["gpus"], serde_json::json!([]), "{v}");
        let reason = v["reason"].as_str().unwrap();
        assert!(reason.contains(why), "{reason}");
        // The loader is not said to be both there and missing.
        let says_there = reason.contains("loader loads");
        assert!(
            !(says_there && reason.contains("install the Vulkan loader")),
            "{reason}"
        );
    }
}

/// Usage errors are found before a GPU is opened: no GPU needed, and nothing said about one.
#[cfg(feature = "gpu")]
#[test]
fn usage_errors_with_gpu_are_refused_before_a_gpu_is_opened() {
    let (code, out, err) = run(&["count", "30", "--gpu"]);
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty(), "{out}");
    assert!(err.contains("--gpu counts N = 4 to 29"), "{err}");
    assert_eq!(err.matches("nqueens:").count(), 1, "one message: {err}");
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("f").to_str().unwrap().to_string();
    let args = ["count", "10", "--gpu", "--checkpoint", &f, "--out", &f];
    let (code, _, err) = run(&args);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("name the same file") && !err.contains("GPU"),
        "{err}"
    );
    let (code, _, err) = run(&["count", "10", "--gpu", "--split-depth", "3"]);
    assert_eq!(code, 2, "{err}");
    assert!(!err.contains("GPU 0"), "{err}");
}

#[cfg(feature = "gpu")]
mod with_gpu {
    use super::run;

    /// Whether `nqueens gpus` lists a GPU; if not, the test is skipped (saying so) unless
    /// `NQUEENS_REQUIRE_GPU` is set.
    fn have_gpu(test: &str) -> bool {
        let (code, out, err) = run(&["gpus", "--json"]);
        let listed = code == 0
            && serde_json::from_str::<serde_json::Value>(&out)
                .ok()
                .and_then(|v| v["gpus"].as_array().map(|a| !a.is_empty()))
                .unwrap_or(false);
        if !listed {
            assert!(
                std::env::var_os("NQUEENS_REQUIRE_GPU").is_none(),
                "{test}: no GPU, and NQUEENS_REQUIRE_GPU is set: {out}{err}"
            );
            eprintln!("{test}: skipped, no GPU: {out}{err}");
        }
        listed
    }

    #[test]
    fn counts_on_the_gpu_are_exact_and_name_it() {
        if !have_gpu("counts_on_the_gpu_are_exact_and_name_it") {
            return;
        }
        for (n, total) in [("6", "4"), ("11", "2680"), ("13", "73712")] {
            let (code, out, err) = run(&["count", n, "--gpu", "-j", "2"]);
            assert_eq!((code, out.trim()), (0, total), "N = {n}: {err}");
            assert!(err.contains("joining on GPU 0"), "{err}");
        }
        // The run's device counters, under the names scripts and the docs read.
        let (code, out, err) = run(&["count", "13", "--gpu", "-j", "2", "--json"]);
        assert_eq!(code, 0, "{err}");
        let report: serde_json::Value = serde_json::from_str(&out).unwrap();
        let gpu = &report["gpu"];
        for name in [
            "gpu_submits",
            "gpu_waits",
            "gpu_steps",
            "gpu_bytes_up",
            "gpu_bytes_down",
            "host_tree_keys",
        ] {
            assert!(gpu[name].is_u64(), "{name}: {out}");
        }
        assert!(gpu["gpu_submits"].as_u64() > Some(0), "{out}");
        assert_eq!(gpu["host_tree_keys"], 0, "{out}");
        assert_eq!(gpu["pass_seconds"].as_object().map(|o| o.len()), Some(6));
    }

    /// Every batch slot size `NQUEENS_GPU_SLOT_MIB` takes (16 to 65,536 MiB) counts exactly,
    /// or is refused before any batch with one line that says the most this GPU takes
    /// (lavapipe's bindings make the largest sizes pointless); empty, it is unset.
    #[test]
    fn every_slot_size_counts_or_is_refused_in_one_line() {
        if !have_gpu("every_slot_size_counts_or_is_refused_in_one_line") {
            return;
        }
        for mib in ["", "16", "65536"] {
            let out = super::common::nqueens_std()
                .args(["count", "8", "--gpu", "-q"])
                .env("NQUEENS_GPU_SLOT_MIB", mib)
                .output()
                .unwrap();
            let (stdout, err) = (
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr),
            );
            let errors: Vec<_> = err.lines().filter(|l| l.starts_with("nqueens:")).collect();
            match out.status.code() {
                Some(0) => assert_eq!(stdout.trim(), "92", "{mib}: {err}"),
                Some(2) => assert!(
                    mib == "65536"
                        && errors.len() == 1
                        && errors[0].contains("takes batch slots of at most")
                        && !err.contains("Validation"),
                    "{mib}: {err}"
                ),
                other => panic!("{mib}: {other:?} {err}"),
            }
        }
    }

    #[test]
    fn a_gpu_that_is_not_there_or_another_engine_is_a_usage_error() {
        if !have_gpu("a_gpu_that_is_not_there_or_another_engine_is_a_usage_error") {
            return;
        }
        let (code, out, err) = run(&["count", "10", "--gpu-device", "99"]);
        assert_eq!(code, 2, "{err}");
        assert!(out.is_empty() && err.contains("0: "), "{err}");
        let (code, _, err) = run(&["count", "10", "--gpu", "-e", "symmetry"]);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("mitm"), "{err}");
    }

    /// Runs `nqueens args` with `NQUEENS_GPU_SLOT_MIB` set to `slot` (or unset).
    fn run_with_slot(slot: Option<&str>, args: &[&str]) -> (i32, String, String) {
        let mut cmd = crate::common::nqueens();
        match slot {
            Some(mib) => cmd.env("NQUEENS_GPU_SLOT_MIB", mib),
            None => cmd.env_remove("NQUEENS_GPU_SLOT_MIB"),
        };
        let out = cmd.args(args).output().unwrap();
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        let code = out.status.code().unwrap_or(-1);
        (code, text(&out.stdout), text(&out.stderr))
    }

    /// `NQUEENS_GPU_SLOT_MIB`: the least batch slot, 16 MiB, still counts exactly; a value
    /// outside 16 to 65,536 is refused with status 2, naming the variable (an empty one is
    /// unset: `every_slot_size_counts_or_is_refused_in_one_line`).
    #[test]
    fn a_small_gpu_slot_counts_exactly_and_a_bad_one_is_refused() {
        if !have_gpu("a_small_gpu_slot_counts_exactly_and_a_bad_one_is_refused") {
            return;
        }
        let args = ["count", "14", "--gpu", "-j", "1", "--json"];
        let submits = |slot: Option<&str>| {
            let (code, out, err) = run_with_slot(slot, &args);
            assert_eq!(code, 0, "{slot:?}: {err}");
            let v: serde_json::Value = serde_json::from_str(&out).unwrap();
            assert_eq!(v["total"], "365596", "{slot:?}: {out}");
            v["gpu"]["gpu_submits"].as_u64().unwrap()
        };
        // How many batches each takes depends on when the worker waits (15 against 16 by
        // default on a loaded machine): only the counts are asserted.
        let (small, default) = (submits(Some("16")), submits(None));
        eprintln!("N = 14: {small} submissions with a 16 MiB slot, {default} by default");
        for bad in ["8", "65537", "lots", "-16"] {
            let (code, out, err) = run_with_slot(Some(bad), &["count", "13", "--gpu"]);
            assert_eq!(code, 2, "{bad:?}: {err}");
            assert!(out.is_empty(), "{bad:?}: {out}");
            assert!(err.contains("NQUEENS_GPU_SLOT_MIB"), "{bad:?}: {err}");
        }
    }

    /// `gpus` says how much memory each Vulkan GPU has (the default slots take half of it),
    /// in its text as in its JSON.
    #[test]
    fn gpus_state_each_vulkan_adapters_memory() {
        if !have_gpu("gpus_state_each_vulkan_adapters_memory") {
            return;
        }
        let (code, out, err) = run(&["gpus", "--json"]);
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let gpus = v["gpus"].as_array().unwrap();
        for gpu in gpus {
            if gpu["backend"] == "Vulkan" {
                assert!(gpu["memory_bytes"].as_u64() > Some(0), "{gpu}");
            }
        }
        let stated = gpus.iter().filter(|g| g["memory_bytes"].is_u64()).count();
        let (code, text, err) = run(&["gpus"]);
        assert_eq!(code, 0, "{err}");
        assert_eq!(
            text.lines().filter(|l| l.ends_with(" GiB")).count(),
            stated,
            "{text}"
        );
    }

    /// `--gpu-device` with a real index: the first GPU `nqueens gpus` lists, by number.
    #[test]
    fn a_gpu_chosen_by_its_index_counts_and_estimates() {
        if !have_gpu("a_gpu_chosen_by_its_index_counts_and_estimates") {
            return;
        }
        let (code, out, err) = run(&["count", "13", "--gpu-device", "0", "-j", "2"]);
        assert_eq!((code, out.trim()), (0, "73712"), "{err}");
        assert!(err.contains("joining on GPU 0"), "{err}");
        let args = ["estimate", "14", "--gpu-device", "0", "--json", "-q"];
        let (code, out, err) =
            run(&[&args[..], &["--samples", "16", "--calibrate", "0.05s"]].concat());
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert!(v["gpu"].as_str().unwrap().starts_with("GPU "), "{out}");
    }

    #[test]
    fn a_wrong_gpu_count_is_caught_by_the_recheck_with_exit_3() {
        if !have_gpu("a_wrong_gpu_count_is_caught_by_the_recheck_with_exit_3") {
            return;
        }
        let args = [
            "count",
            "12",
            "--gpu",
            "--recheck",
            "1",
            "--test-inject-fault",
            "5",
        ];
        let (code, out, err) = run(&args);
        assert_eq!(code, 3, "{out}{err}");
        assert!(err.contains("task 5"), "{err}");
    }

    #[test]
    fn a_lost_device_keeps_finished_tasks_and_a_resume_is_exact() {
        if !have_gpu("a_lost_device_keeps_finished_tasks_and_a_resume_is_exact") {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let ckpt = dir.path().join("c.ckpt");
        let ckpt = ckpt.to_str().unwrap();
        let lost = [
            "count",
            "14",
            "--gpu",
            "-j",
            "1",
            "--checkpoint",
            ckpt,
            "--test-gpu-fail-after",
            "300",
        ];
        let (code, out, err) = run(&lost);
        assert_eq!(code, 1, "{out}{err}");
        assert!(out.is_empty(), "{out}");
        assert!(err.contains("GPU") && err.contains("to resume"), "{err}");
        let (code, out, err) = run(&["count", "14", "--checkpoint", ckpt]);
        assert_eq!((code, out.trim()), (0, "365596"), "{err}");
        let left = err
            .split_once("': ")
            .and_then(|(_, rest)| rest.split_once(" of 1716 tasks left"))
            .map(|(left, _)| left.parse::<usize>().unwrap());
        assert!(left.is_some_and(|l| l < 1716), "{err}");
    }

    #[test]
    fn a_gpu_failure_without_a_checkpoint_says_the_work_is_lost() {
        if !have_gpu("a_gpu_failure_without_a_checkpoint_says_the_work_is_lost") {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("s.json");
        let args = ["count", "14", "--gpu", "-j", "1", "--shard", "0/2", "--out"];
        let fail = ["--test-gpu-fail-after", "100"];
        let (code, _, err) = run(&[&args[..], &[out.to_str().unwrap()], &fail].concat());
        assert_eq!(code, 1, "{err}");
        assert!(
            err.contains("are lost") && err.contains("--checkpoint FILE"),
            "{err}"
        );
        assert!(!err.contains("resume"), "{err}");
        let (code, _, err) = run(&[
            "count",
            "14",
            "--gpu",
            "-j",
            "1",
            "--test-gpu-fail-after",
            "100",
        ]);
        assert_eq!(code, 1, "{err}");
        assert!(err.contains("are lost") && !err.contains("resume"), "{err}");
    }

    /// An estimate whose GPU fails reports nothing: the sampled tasks' joins past the
    /// failure counted nothing, so their counters and times would claim work not done.
    #[test]
    fn a_gpu_failure_in_an_estimate_gives_no_estimate() {
        if !have_gpu("a_gpu_failure_in_an_estimate_gives_no_estimate") {
            return;
        }
        let args = ["estimate", "14", "--gpu", "-j", "1", "--json"];
        let (code, out, err) = run(&[&args[..], &["--test-gpu-fail-after", "20"]].concat());
        assert_eq!(code, 1, "{out}{err}");
        assert!(out.is_empty(), "{out}");
        assert!(
            err.contains("no estimate") && err.contains("the GPU failed"),
            "{err}"
        );
    }

    #[test]
    fn a_small_board_on_the_gpu_says_the_cpu_counts_it() {
        if !have_gpu("a_small_board_on_the_gpu_says_the_cpu_counts_it") {
            return;
        }
        for (n, total) in [("1", "1"), ("3", "0")] {
            let (code, out, err) = run(&["count", n, "--gpu"]);
            assert_eq!((code, out.trim()), (0, total), "{err}");
            assert!(
                err.contains(&format!("N = {n} is counted on the CPU")),
                "{err}"
            );
            // No GPU is opened for a board it leaves to the CPU.
            assert!(!err.contains("joining on GPU"), "{err}");
        }
    }

    #[test]
    fn a_judge_line_past_the_gpus_reach_is_named_by_its_number() {
        if !have_gpu("a_judge_line_past_the_gpus_reach_is_named_by_its_number") {
            return;
        }
        let out = crate::common::nqueens()
            .args(["count", "--stdin", "--gpu", "-q"])
            .write_stdin("8\n30\n")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "92\n");
        assert!(err.contains("<stdin>: line 2: N = 30"), "{err}");
    }

    #[test]
    fn a_run_of_gpu_and_cpu_shards_names_both_and_a_cpu_finish_is_labelled_so() {
        if !have_gpu("a_run_of_gpu_and_cpu_shards_names_both_and_a_cpu_finish_is_labelled_so") {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let file = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
        let shard = |i: usize, gpu: &[&str]| {
            let spec = format!("{i}/2");
            let (out, ckpt) = (file(&format!("s{i}.json")), file(&format!("s{i}.ckpt")));
            let args = [
                "count",
                "14",
                "-j",
                "1",
                "--shard",
                &spec,
                "--out",
                &out,
                "--checkpoint",
                &ckpt,
            ];
            run(&[&args[..], gpu].concat())
        };
        // Shard 0 starts on the GPU, which fails, and is finished on the CPU.
        let (code, _, err) = shard(0, &["--gpu", "--test-gpu-fail-after", "200"]);
        assert_eq!(code, 1, "{err}");
        assert_eq!(shard(0, &[]).0, 0);
        let finished = nqueens::shard::PartialResult::load(dir.path().join("s0.json").as_path());
        let plan = finished.unwrap().identity.plan;
        assert!(!plan.contains("GPU") && plan.contains("matcher"), "{plan}");
        // A GPU shard's summary says what the GPU did, as `count --json` does.
        let (code, out, err) = shard(1, &["--gpu", "--json"]);
        assert_eq!(code, 0, "{err}");
        let summary: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(summary["schema"], "nqueens.shard-summary/1", "{out}");
        assert!(summary["gpu"]["gpu_submits"].as_u64() > Some(0), "{out}");
        // Status tells the GPU's shard from the CPU's.
        let (_, out, err) = run(&["status", dir.path().to_str().unwrap(), "--json"]);
        let status: serde_json::Value =
            serde_json::from_str(&out).unwrap_or_else(|_| panic!("{err}"));
        let cpus = status["cpus"].as_array().unwrap();
        assert_eq!(cpus.len(), 2, "{out}");
        assert_eq!(
            cpus.iter().filter(|c| c["gpu"].is_null()).count(),
            1,
            "{out}"
        );
        assert!(cpus.iter().all(|c| c["shards"] == 1), "{out}");
        let (code, out, err) = run(&["merge", &file("s0.json"), &file("s1.json"), "--json"]);
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let plan = v["plan"].as_str().unwrap();
        assert!(
            plan.contains("GPU") && plan.contains("matcher") && plan.contains("(1 file)"),
            "{plan}"
        );
    }

    #[test]
    fn the_dispatch_probe_reports_a_figure_for_every_measure() {
        if !have_gpu("the_dispatch_probe_reports_a_figure_for_every_measure") {
            return;
        }
        let args = ["gpus", "--probe-dispatch", "--dispatches", "8", "--json"];
        let (code, out, err) = run(&args);
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["schema"], "nqueens.probe-dispatch/1", "{out}");
        assert_eq!(v["dispatches"], 8, "{out}");
        // A figure, whatever its size: how long a dispatch takes is the machine's business.
        let figure = |key: &str| v[key].as_f64().is_some_and(|x| x.is_finite() && x >= 0.0);
        for key in [
            "dependent_dispatch_us",
            "round_trip_us",
            "submit_us",
            "other_wait_us",
            "model_step_us",
        ] {
            assert!(figure(key), "{key}: {out}");
        }
        // Without timestamps, or without a sample beside the waiting thread: null.
        for key in [
            "dependent_dispatch_us_gpu",
            "round_trip_us_while_other_waits",
        ] {
            assert!(v[key].is_null() || figure(key), "{key}: {out}");
        }
        assert!(
            v["samples_while_other_waits"].as_u64().unwrap() <= 8,
            "{out}"
        );
        let (code, _, err) = run(&["gpus", "--dispatches", "8"]);
        assert_eq!(code, 2, "--dispatches alone: {err}");
    }

    #[test]
    fn bench_and_estimate_on_the_gpu_say_which() {
        if !have_gpu("bench_and_estimate_on_the_gpu_say_which") {
            return;
        }
        let (code, out, err) = run(&["bench", "--gpu", "--size", "tiny", "-j", "1", "--json"]);
        assert_eq!(code, 0, "{err}");
        let report: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(report["verified"], true);
        assert!(report["gpu"].as_str().unwrap().starts_with("GPU "), "{out}");
        assert!(report["rechecked"].as_u64().unwrap() > 0, "{out}");
        // A small sample rather than a short --time-limit: a limit the plan's build used up
        // on a loaded machine left no sampled task.
        let args = [
            "estimate",
            "15",
            "--gpu",
            "--samples",
            "16",
            "--calibrate",
            "0.05s",
            "--json",
        ];
        let (code, out, err) = run(&args);
        assert_eq!(code, 0, "{err}");
        let report: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert!(report["gpu"].as_str().unwrap().starts_with("GPU "), "{out}");
        assert!(
            report["sbatch"].to_string().contains("--gres=gpu:1"),
            "{out}"
        );
        let model = report["work"]["counters"]["gpu_model_seconds"].as_f64();
        assert!(model.is_some_and(|s| s > 0.0), "{out}");
        // The span model prices an H100's slot (half its 80 GB in three slots), whatever
        // GPU sampled the work, unless a slot is asked for.
        if std::env::var_os("NQUEENS_GPU_SLOT_MIB").is_none() {
            let slot = &report["work"]["counters"]["gpu_model_slot_bytes"];
            assert_eq!(slot.as_u64(), Some(12_800 << 20), "{out}");
        }
        let passes = report["speed"]["phases"]["gpu_pass_seconds"].as_object();
        let names: Vec<&str> = passes
            .iter()
            .flat_map(|o| o.keys())
            .map(|k| k.as_str())
            .collect();
        let want = ["count", "half_join", "routing", "sieve", "tables", "ties"];
        assert_eq!(names, want, "{out}");
    }
}
