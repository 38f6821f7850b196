//! CLI tests of the companion puzzles: solutions, count --mask, two-colour, place,
//! verify.

mod common;

use std::io::Read;
use std::process::Stdio;

use common::{nqueens, nqueens_std};
use nqueens::puzzles::verify::check;
use predicates::prelude::*;

/// Runs nqueens with `args` and returns its stdout (asserting success).
fn stdout_of(args: &[&str]) -> String {
    let out = nqueens()
        .args(args)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    String::from_utf8(out).unwrap()
}

/// Parses lines of space-separated numbers.
fn perms(text: &str) -> Vec<Vec<u32>> {
    text.lines()
        .map(|l| l.split(' ').map(|x| x.parse().unwrap()).collect())
        .collect()
}

#[test]
fn solutions_of_four_are_the_two_boards() {
    nqueens()
        .args(["solutions", "4"])
        .assert()
        .success()
        .stdout(".Q..\n...Q\nQ...\n..Q.\n\n..Q.\nQ...\n...Q\n.Q..\n");
}

#[test]
fn solutions_of_eight_in_perm_format_are_92_sorted_valid_lines() {
    let all = perms(&stdout_of(&["solutions", "8", "--format", "perm", "-q"]));
    assert_eq!(all.len(), 92);
    assert_eq!(all[0], [1, 5, 8, 6, 3, 7, 2, 4]);
    assert!(all.windows(2).all(|w| w[0] < w[1]), "lexicographic order");
    assert!(all.iter().all(|p| check(p, Some(8)).is_valid()));
}

#[test]
fn solutions_limit_stops_early() {
    let text = stdout_of(&["solutions", "10", "--format", "perm", "--limit", "3"]);
    assert_eq!(text.lines().count(), 3);
    assert_eq!(stdout_of(&["solutions", "10", "--limit", "0"]), "");
}

#[test]
fn solutions_json_lines_deserialize() {
    let text = stdout_of(&["solutions", "6", "--json"]);
    let all: Vec<Vec<u32>> = text
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            assert_eq!(v["schema"], "nqueens.solution/1");
            serde_json::from_value(v["cols"].clone()).unwrap()
        })
        .collect();
    assert_eq!(
        all,
        vec![
            vec![2, 4, 6, 1, 3, 5],
            vec![3, 6, 2, 5, 1, 4],
            vec![4, 1, 5, 2, 6, 3],
            vec![5, 3, 1, 6, 4, 2]
        ]
    );
}

#[test]
fn a_closed_pipe_ends_solutions_quietly_with_status_0() {
    let mut child = nqueens_std()
        .args(["solutions", "16"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut head = [0u8; 100];
    child.stdout.take().unwrap().read_exact(&mut head).unwrap();
    // Dropping our end of the pipe is what `head` does after its lines.
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&output.stderr), "");
}

#[test]
fn solutions_reject_bad_sizes_and_markdown() {
    nqueens().args(["solutions", "0"]).assert().code(2);
    nqueens().args(["solutions", "33"]).assert().code(2);
    nqueens()
        .args(["solutions", "5", "--format", "markdown"])
        .assert()
        .code(2);
}

/// The 8x8 mask with the main diagonal and one more cell blocked, and its count from the
/// plain solution list (an oracle that does not use the mask code).
fn diagonal_mask() -> (String, usize) {
    let mut text = String::new();
    for r in 0..8 {
        let row: String = (0..8)
            .map(|c| if c == r || (r, c) == (0, 5) { '#' } else { '.' })
            .collect();
        text.push_str(&row);
        text.push('\n');
    }
    let all = perms(&stdout_of(&["solutions", "8", "--format", "perm", "-q"]));
    let fitting = all
        .iter()
        .filter(|p| {
            p.iter()
                .enumerate()
                .all(|(r, &c)| c as usize - 1 != r && !(r == 0 && c == 6))
        })
        .count();
    (text, fitting)
}

#[test]
fn count_with_a_mask_matches_the_filtered_solution_list() {
    let (mask, expected) = diagonal_mask();
    nqueens()
        .args(["count", "8", "--mask", "-", "-j", "2"])
        .write_stdin(mask)
        .assert()
        .success()
        .stdout(format!("{expected}\n"))
        .stderr(predicate::str::contains("no symmetry"));
}

#[test]
fn count_with_a_full_mask_is_checked_against_oeis_and_uses_symmetry() {
    let mask = "1 1 1 1 1 1 1 1 1 1\n".repeat(10);
    nqueens()
        .args(["count", "10", "--mask", "-"])
        .write_stdin(mask)
        .assert()
        .success()
        .stdout("724\n")
        .stderr(predicate::str::contains("mirror symmetry"));
}

#[test]
fn malformed_masks_exit_2_naming_line_and_column() {
    let cases = [
        ("1111\n11z1\n1111\n1111\n", "line 2, column 3"),
        ("1111\n1111\n111\n1111\n", "line 3"),
        ("1111\n1111\n1111\n", "line 4"),
        ("1111\n1111\n1111\n1111\n1111\n", "line 5"),
    ];
    for (mask, place) in cases {
        nqueens()
            .args(["count", "4", "--mask", "-"])
            .write_stdin(mask)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(place));
    }
    nqueens()
        .args(["count", "4", "--mask", "/nonexistent/mask.txt"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("/nonexistent/mask.txt"));
}

#[test]
fn two_colour_classic_samples() {
    nqueens()
        .args(["two-colour", "-"])
        .write_stdin("4\n1 1 1 1\n1 1 1 1\n1 1 1 1\n1 1 1 1\n")
        .assert()
        .success()
        .stdout("2\n");
    nqueens()
        .arg("two-colour")
        .write_stdin("4\n1 0 1 1\n1 1 1 1\n1 1 1 1\n1 1 1 1\n")
        .assert()
        .success()
        .stdout("0\n");
}

#[test]
fn two_colour_json_reports_solutions_and_pairs() {
    let board = format!("8\n{}", "1 1 1 1 1 1 1 1\n".repeat(8));
    let out = nqueens()
        .args(["two-colour", "--json"])
        .write_stdin(board)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["schema"], "nqueens.two-colour/1");
    assert_eq!(v["solutions"], 92);
    assert_eq!(v["pairs"], "3252");
}

#[test]
fn two_colour_no_symmetry_agrees_with_the_symmetry_reduction() {
    let open = format!("7\n{}", "1 1 1 1 1 1 1\n".repeat(7));
    let masked =
        "6\n1 1 1 1 1 1\n1 1 0 1 1 1\n1 1 1 1 1 1\n1 1 1 1 1 1\n1 0 1 1 1 1\n1 1 1 1 1 1\n";
    for (board, pairs) in [(open.as_str(), "496\n"), (masked, "")] {
        let with = stdout_of_stdin(&["two-colour", "-q"], board);
        let without = stdout_of_stdin(&["two-colour", "-q", "--no-symmetry"], board);
        assert_eq!(with, without, "{board}");
        assert!(with.ends_with(pairs), "{with}");
    }
    nqueens()
        .args(["two-colour", "--no-symmetry"])
        .write_stdin(open)
        .assert()
        .success()
        .stderr(predicate::str::contains("1 symmetry (40 processed)"));
}

#[test]
fn two_colour_refuses_boards_that_would_take_decades() {
    let board = format!("20\n{}", format!("{}\n", ["1"; 20].join(" ")).repeat(20));
    nqueens()
        .arg("two-colour")
        .write_stdin(board)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("2^64").and(predicate::str::contains("39029188884")));
}

#[test]
fn a_full_mask_says_it_matches_oeis_and_blank_lines_around_it_are_not_rows() {
    nqueens()
        .args(["count", "6", "--mask", "-"])
        .write_stdin("\n\n......\n......\n......\n......\n......\n......\n\n")
        .assert()
        .success()
        .stdout("4\n")
        .stderr(predicate::str::contains("matches OEIS A000170"));
}

#[test]
fn two_colour_malformed_input_exits_2() {
    nqueens()
        .arg("two-colour")
        .write_stdin("3\n1 1 1\n1 2 1\n1 1 1\n")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("line 3, column 3"));
}

#[test]
fn place_prints_the_construction() {
    nqueens()
        .args(["place", "8"])
        .assert()
        .success()
        .stdout("2 4 6 8 3 1 7 5\n");
    nqueens()
        .args(["place", "4", "--format", "board"])
        .assert()
        .success()
        .stdout("..Q.\nQ...\n...Q\n.Q..\n");
}

#[test]
fn place_output_verifies_for_many_n() {
    for n in [
        1u64, 4, 5, 6, 7, 8, 9, 14, 15, 20, 21, 1000, 123_457, 1_000_000,
    ] {
        let text = stdout_of(&["place", &n.to_string(), "-q"]);
        let rows = perms(&text).remove(0);
        assert!(check(&rows, Some(n)).is_valid(), "n = {n}");
        nqueens()
            .args(["verify", "-q"])
            .write_stdin(text)
            .assert()
            .success();
    }
}

#[test]
fn place_two_and_three_have_no_solution() {
    for n in ["2", "3"] {
        nqueens()
            .args(["place", n])
            .assert()
            .code(1)
            .stdout("")
            .stderr(predicate::str::contains("no solution"));
    }
    nqueens().args(["place", "0"]).assert().code(2);
    nqueens().args(["place", "abc"]).assert().code(2);
    nqueens().args(["place", "-4"]).assert().code(2);
}

#[test]
fn min_conflicts_is_valid_and_reproducible_by_seed() {
    for seed in ["1", "2", "3", "99"] {
        let args = ["place", "300", "--method", "min-conflicts", "--seed", seed];
        let a = stdout_of(&args);
        assert_eq!(a, stdout_of(&args), "seed {seed}");
        assert!(check(&perms(&a)[0], Some(300)).is_valid(), "seed {seed}");
    }
    nqueens()
        .args(["place", "50", "--method", "min-conflicts"])
        .assert()
        .success()
        .stderr(predicate::str::contains("seed"));
}

#[test]
fn place_judge_format() {
    let out = stdout_of_stdin(&["place", "--stdin"], "8\n\n4\n0\n9\n");
    assert_eq!(
        out, "2 4 6 8 3 1 7 5\n\n2 4 1 3\n",
        "a blank line for a blank line"
    );
    nqueens()
        .args(["place", "--stdin"])
        .write_stdin("5\n3\n4\n")
        .assert()
        .code(1)
        .stdout("2 4 1 3 5\nno solution\n2 4 1 3\n")
        .stderr(predicate::str::contains("no solution exists for n = 3"));
}

#[test]
fn place_judge_boards_are_separated_and_json_always_names_the_method() {
    let out = stdout_of_stdin(&["place", "--stdin", "--format", "board"], "4\n1\n");
    assert_eq!(out, "..Q.\nQ...\n...Q\n.Q..\n\nQ\n");
    let out = nqueens()
        .args(["place", "--stdin", "--json"])
        .write_stdin("2\n\n4\n")
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let lines: Vec<serde_json::Value> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "{lines:?}");
    for line in &lines {
        assert_eq!(line["method"], "construct", "{line}");
    }
    assert_eq!(
        (lines[0]["n"].as_u64(), lines[0]["rows"].is_null()),
        (Some(2), true)
    );
    assert!(lines[1]["n"].is_null());
    assert_eq!(lines[2]["n"], 4);
}

#[test]
fn place_judge_output_verifies_past_its_no_solution_lines() {
    let answers = nqueens()
        .args(["place", "--stdin", "-q"])
        .write_stdin("8\n3\n10\n")
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let out = nqueens()
        .arg("verify")
        .write_stdin(answers)
        .assert()
        .code(1)
        .get_output()
        .clone();
    let report = String::from_utf8(out.stdout).unwrap();
    assert!(
        report.starts_with("line 1: valid, n = 8\nline 2: no solution claimed\n"),
        "{report}"
    );
    assert!(report.contains("line 3: valid, n = 10"), "{report}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("1 'no solution' not checked"));
    nqueens()
        .args(["verify", "--size", "3"])
        .write_stdin("no solution\n")
        .assert()
        .success()
        .stdout("line 1: valid, no solution for n = 3\n");
    nqueens()
        .args(["verify", "--size", "8"])
        .write_stdin("no solution\n")
        .assert()
        .code(1)
        .stdout(
            predicate::str::contains("INVALID")
                .and(predicate::str::contains("n = 8 has solutions")),
        );
}

#[test]
fn verify_checks_a_line_too_long_to_keep_as_it_streams() {
    // One past the values a line keeps: checked in a few bits per value instead.
    let n = (nqueens::puzzles::verify::STREAM_FROM + 1).to_string();
    let line = stdout_of(&["place", &n, "-q"]);
    let report = stdout_of_stdin(&["verify"], &line);
    assert_eq!(report, format!("line 1: valid, n = {n}\n"));
    let mut bad = line.into_bytes();
    bad.truncate(bad.len() - 1);
    bad.extend_from_slice(b" 1\n");
    nqueens()
        .arg("verify")
        .write_stdin(bad)
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "is on a row an earlier queen holds",
        ));
}

fn stdout_of_stdin(args: &[&str], input: &str) -> String {
    let out = nqueens()
        .args(args)
        .write_stdin(input)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    String::from_utf8(out).unwrap()
}

#[test]
fn verify_accepts_solutions_from_solutions() {
    let all = stdout_of(&["solutions", "8", "--format", "perm", "-q"]);
    let report = stdout_of_stdin(&["verify"], &all);
    assert_eq!(report.lines().count(), 92);
    assert!(report.lines().all(|l| l.ends_with("valid, n = 8")));
}

#[test]
fn verify_rejects_crafted_bad_permutations() {
    let cases = [
        ("2 4 2 3\n", "columns 1 and 3 attack each other along row 2"),
        ("2 4 1 5\n", "row 5, outside 1..=4"),
        ("2 4 0 3\n", "row 0, outside"),
        ("1 3 2\n", "(column 2, row 3) and (column 3, row 2)"),
        ("1 2 3 4 5 6 7 8\n", "diagonal"),
        ("2 4 1\n", "outside 1..=3"),
    ];
    for (input, says) in cases {
        nqueens()
            .arg("verify")
            .write_stdin(input)
            .assert()
            .code(1)
            .stdout(predicate::str::contains("INVALID").and(predicate::str::contains(says)));
    }
    nqueens()
        .args(["verify", "--size", "5"])
        .write_stdin("2 4 1 3\n")
        .assert()
        .code(1)
        .stdout(predicate::str::contains("4 values, expected 5"));
}

#[test]
fn verify_junk_and_empty_input_fail() {
    for (input, place) in [
        ("2 4 x 3\n", "line 1, column 5"),
        ("1\n2 4 1 3,\n", "line 2, column 8"),
    ] {
        nqueens()
            .arg("verify")
            .write_stdin(input)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(place));
    }
    nqueens()
        .arg("verify")
        .write_stdin("\n\n")
        .assert()
        .code(1)
        .stderr(predicate::str::contains("no permutation"));
}

#[test]
fn verify_json_names_the_problems() {
    let out = stdout_of_stdin(&["verify", "--json"], "2 4 1 3\n");
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["valid"], true);
    let out = nqueens()
        .args(["verify", "--json"])
        .write_stdin("1 1\n")
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["valid"], false);
    assert_eq!(v["conflicts"], 1);
    assert!(v["problems"][0]
        .as_str()
        .unwrap()
        .contains("columns 1 and 2"));
}

#[test]
fn place_rejects_formats_it_cannot_draw() {
    nqueens()
        .args(["place", "1001", "--format", "board"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("n > 1000"));
    nqueens()
        .args(["place", "8", "--format", "markdown"])
        .assert()
        .code(2);
}

#[test]
fn count_with_a_mask_reports_json() {
    let out = nqueens()
        .args(["count", "6", "--mask", "-", "--json"])
        .write_stdin(".#....\n......\n......\n......\n......\n......\n")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let report: nqueens::report::CountReport = serde_json::from_slice(&out).unwrap();
    // Of the 4 solutions of 6x6, one has its first queen in column 2.
    let all = perms(&stdout_of(&["solutions", "6", "--format", "perm", "-q"]));
    let expected = all.iter().filter(|p| p[0] != 2).count();
    assert_eq!(expected, 3);
    assert_eq!(report.total, expected.to_string());
    assert_eq!(report.engine, "mask");
    assert_eq!(report.verified, None);
}

// Boards of 17 to 32 columns, where the row masks reach bit 31 and the diagonals shift out of
// the 32-bit word: heavily blocked masks, each keeping the cells of two random solutions,
// counted by `count --mask` and by the library against an independent solver.

/// Placements of one queen per row on the allowed cells, no two attacking: a plain search
/// row by row over explicit sets of used columns and diagonals (none of the kernel's
/// bitmasks).
fn independent_count(board: &[Vec<bool>]) -> u64 {
    fn place(board: &[Vec<bool>], r: usize, used: &mut [Vec<bool>; 3]) -> u64 {
        let n = board.len();
        if r == n {
            return 1;
        }
        let mut count = 0;
        for c in (0..n).filter(|&c| board[r][c]) {
            let keys = [c, r + c, r + n - c];
            if (0..3).any(|k| used[k][keys[k]]) {
                continue;
            }
            (0..3).for_each(|k| used[k][keys[k]] = true);
            count += place(board, r + 1, used);
            (0..3).for_each(|k| used[k][keys[k]] = false);
        }
        count
    }
    let n = board.len();
    place(
        board,
        0,
        &mut [vec![false; n], vec![false; 2 * n], vec![false; 2 * n]],
    )
}

/// Which symmetry a wide test mask has, and what `count --mask` says of it.
#[derive(Clone, Copy, Debug)]
enum Shape {
    Asymmetric,
    /// Each row reads the same backwards: the plan uses mirror symmetry.
    Mirror,
    /// Row r equals row n − 1 − r: the plan transposes it first.
    Flipped,
}

/// A heavily blocked `n`×`n` board of `shape`: two random solutions' cells and one cell in
/// 32 of the rest allowed, or for a symmetric shape one solution's and one in 64, with their
/// images (more makes millions of partial placements at 32 columns, the independent
/// solver's time).
fn wide_board(n: usize, shape: Shape, rng: &mut fastrand::Rng) -> Vec<Vec<bool>> {
    let (solutions, sparse) = match shape {
        Shape::Asymmetric => (2, 32),
        Shape::Mirror | Shape::Flipped => (1, 64),
    };
    let mut board = vec![vec![false; n]; n];
    for _ in 0..solutions {
        let rows = nqueens::puzzles::place::min_conflicts(n as u64, rng.u64(..)).unwrap();
        let cols: Vec<usize> = rows.iter().map(|&r| r as usize - 1).collect();
        assert!(common::is_solution(&cols), "{cols:?}");
        for (r, &c) in cols.iter().enumerate() {
            board[r][c] = true;
        }
    }
    for cell in board.iter_mut().flatten() {
        *cell |= rng.u32(..sparse) == 0;
    }
    for r in 0..n {
        for c in 0..n {
            let image = match shape {
                Shape::Asymmetric => false,
                Shape::Mirror => board[r][n - 1 - c],
                Shape::Flipped => board[n - 1 - r][c],
            };
            board[r][c] |= image;
        }
    }
    board
}

fn mask_text(board: &[Vec<bool>]) -> String {
    let line = |row: &Vec<bool>| row.iter().map(|&a| if a { '.' } else { '#' }).collect();
    board.iter().map(line).collect::<Vec<String>>().join("\n") + "\n"
}

#[test]
fn wide_masked_boards_of_17_to_32_columns_match_an_independent_solver() {
    use nqueens::puzzles::mask::{count_masked, Mask};
    let shapes = [Shape::Asymmetric, Shape::Mirror, Shape::Flipped];
    let said = [
        "no symmetry",
        "mirror symmetry",
        "mirror symmetry after transposing",
    ];
    let mut rng = fastrand::Rng::with_seed(32);
    for n in 17..=32 {
        for (k, &shape) in shapes.iter().enumerate() {
            let board = wide_board(n, shape, &mut rng);
            let expected = independent_count(&board);
            assert!(expected >= 1, "n = {n}: two solutions were kept");
            let text = mask_text(&board);
            let mask = Mask::parse(&text, n as u32, "test").unwrap();
            for threads in [1, 2] {
                let count = count_masked(&mask, threads, &nqueens::NoProgress).unwrap();
                assert_eq!(count.total, u128::from(expected), "n = {n} {shape:?}");
            }
            // One command line per size, the shapes in turn.
            if n % 3 == k {
                nqueens()
                    .args(["count", &n.to_string(), "--mask", "-", "-j", "2"])
                    .write_stdin(text)
                    .assert()
                    .success()
                    .stdout(format!("{expected}\n"))
                    .stderr(predicate::str::contains(said[k]));
            }
        }
    }
    let full = Mask::full(32).unwrap();
    assert!(full.row_masks().iter().all(|&m| m == u32::MAX));
    assert!(full.is_allowed(31, 31) && full.is_full());
}
