//! A wrong count saved in a checkpoint.

use super::*;

#[test]
fn a_wrong_count_in_a_checkpoint_is_explained_found_and_counted_again() {
    let dir = tempfile::tempdir().unwrap();
    let cp = dir.path().join("f.json");
    let count = |extra: &[&str]| {
        nqueens()
            .args(["count", "12", "--checkpoint", s(&cp)])
            .args(extra)
            .assert()
    };
    // Task 0's count is off by one on the fast path, and the run saves it.
    count(&["-q", "--test-inject-fault", "0"])
        .code(3)
        .stdout("14201\n");
    // A resume takes it from the checkpoint, and says so.
    count(&["-q"]).code(3).stdout("14201\n").stderr(
        predicate::str::contains("taken from the checkpoint")
            .and(predicate::str::contains(s(&cp)))
            .and(predicate::str::contains("--recheck")),
    );
    // --recheck 1 re-solves every saved block, names the wrong one and replaces it.
    count(&["--recheck", "1"])
        .success()
        .stdout("14200\n")
        .stderr(
            predicate::str::contains("WRONG COUNT IN THE CHECKPOINT: block 0 (tasks 0")
                .and(predicate::str::contains("saved with")),
        );
    let saved = nqueens::shard::Checkpoint::load(&cp).unwrap().unwrap();
    assert_eq!(saved.total, 14200, "the replaced counts are saved");
    count(&["-q"]).success().stdout("14200\n");
}
