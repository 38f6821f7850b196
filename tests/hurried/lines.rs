//! Lines for people that fit the run: a finished checkpoint's label.

use nqueens::shard::PartialResult;

use super::*;

#[test]
fn a_finished_checkpoint_keeps_the_label_of_what_counted_it() {
    let dir = tempfile::tempdir().unwrap();
    let ckpt = dir.path().join("c.ckpt");
    let out = dir.path().join("r.json");
    let args = ["count", "12", "-e", "mitm", "-q", "--checkpoint", s(&ckpt)];
    assert_eq!(run(&args).0, 0);
    let label = nqueens::shard::Checkpoint::load(&ckpt)
        .unwrap()
        .unwrap()
        .identity
        .plan;
    // Opened again by a build of another matcher level, which counts nothing.
    let status = nqueens_std()
        .args(args)
        .args(["--out", s(&out)])
        .env(nqueens::engine::ISA_VAR, "portable")
        .status()
        .unwrap();
    assert!(status.success());
    let after = nqueens::shard::Checkpoint::load(&ckpt).unwrap().unwrap();
    assert_eq!(after.identity.plan, label);
    assert_eq!(PartialResult::load(&out).unwrap().identity.plan, label);
}

