//! Files: outputs that would replace what is not theirs, empty checkpoints, bad paths,
//! long problem lists, and a run that is done but cannot be merged.

use super::*;

#[test]
fn issue_51_an_empty_checkpoint_file_is_no_checkpoint_yet() {
    let dir = tempfile::tempdir().unwrap();
    let ckpt = dir.path().join("c.ckpt");
    std::fs::write(&ckpt, b"").unwrap(); // what touch or mktemp leaves
    let (code, _, _) = run(&["status", s(dir.path())]);
    assert_eq!(
        code, 1,
        "an empty checkpoint is no run yet, not a damaged file"
    );
    let (code, stdout, stderr) = run(&["count", "10", "--checkpoint", s(&ckpt)]);
    assert_eq!((code, stdout.as_str()), (0, "724\n"), "{stderr}");
    nqueens::shard::Checkpoint::load(&ckpt).unwrap().unwrap();
}

#[test]
fn issue_51_out_replaces_only_this_shards_earlier_result() {
    let dir = tempfile::tempdir().unwrap();
    let binary = dir.path().join("nq");
    std::fs::write(&binary, b"\x7fELF not a result").unwrap();
    let (code, _, stderr) = run(&["count", "10", "--out", s(&binary)]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--force"), "{stderr}");
    assert_eq!(std::fs::read(&binary).unwrap(), b"\x7fELF not a result");
    let out = dir.path().join("r.json");
    std::fs::write(&out, b"").unwrap(); // what mktemp leaves
    for _ in 0..2 {
        assert_eq!(run(&["count", "10", "--out", s(&out), "-q"]).0, 0);
    }
    let before = std::fs::read(&out).unwrap();
    let (code, _, stderr) = run(&["count", "10", "--shard", "1/2", "--out", s(&out)]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("shard 0/1") && stderr.contains("shard 1/2"),
        "{stderr}"
    );
    assert_eq!(std::fs::read(&out).unwrap(), before);
    let forced = run(&["count", "10", "--shard", "1/2", "--out", s(&out), "--force"]);
    assert_eq!(forced.0, 0);
    assert_eq!(
        run(&["count", "10", "--out", s(&binary), "--force", "-q"]).0,
        0
    );
}

#[test]
fn issue_51_bench_exports_replace_only_earlier_exports() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let (json, md, svg) = (path("b.json"), path("b.md"), path("b.svg"));
    let bench = |extra: &[&str]| {
        let args = [
            "bench",
            "--size",
            "tiny",
            "-j",
            "1",
            "-q",
            "--export-json",
            &json,
        ];
        let exports = ["--export-markdown", &md, "--plot", &svg];
        run(&[&args[..], &exports, extra].concat())
    };
    assert_eq!(bench(&[]).0, 0);
    assert_eq!(bench(&[]).0, 0, "earlier exports are replaced");
    let notes = path("notes.txt");
    std::fs::write(&notes, "my notes\n").unwrap();
    for flag in ["--export-json", "--export-markdown", "--plot"] {
        let (code, _, stderr) = run(&["bench", "--size", "tiny", "-q", flag, &notes]);
        assert_eq!(code, 2, "{flag}: {stderr}");
        assert!(
            stderr.contains(flag) && stderr.contains("--force"),
            "{stderr}"
        );
    }
    // A report of one kind is no export of another.
    let (code, _, _) = run(&["bench", "--size", "tiny", "-q", "--plot", &json]);
    assert_eq!(code, 2);
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "my notes\n");
}
