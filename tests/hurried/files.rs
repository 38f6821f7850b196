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
