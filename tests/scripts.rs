//! The scripts under `scripts/` run as the docs call them. A script a doc, a usage line or CI
//! runs by its path (`scripts/chaos.sh --seed 1`, not `bash scripts/chaos.sh`) needs its run
//! bit, and CI, which calls most of them through `bash`, would never notice one missing. So:
//!
//! - every file under `scripts/` starts with a `#!` line and is executable (in git's index,
//!   which is what a clone gets, and on disk), or is a library another script sources, with
//!   no `#!` line and no run bit;
//! - every path under `scripts/` that the README, `docs/`, CI, the scripts or the sources
//!   name, other than after `bash`, `sh`, `source` or `.`, is such an executable script.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository's root.
fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every file under `dir`, as paths relative to the root, sorted.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root().join(dir)];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push(path.strip_prefix(root()).unwrap().to_path_buf());
            }
        }
    }
    out.sort();
    out
}

/// Whether the file at `path` (relative to the root) starts with `#!`.
fn has_shebang(path: &Path) -> bool {
    fs::read(root().join(path)).unwrap().starts_with(b"#!")
}

/// The mode git records for each file under `scripts/` (`100755`, `100644`), or `None` where
/// git does not answer (a source tree that is no clone).
fn git_modes() -> Option<BTreeMap<PathBuf, String>> {
    let out = Command::new("git")
        .args(["ls-files", "-s", "--", "scripts"])
        .current_dir(root())
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    let text = String::from_utf8(out.stdout).ok()?;
    let modes: BTreeMap<PathBuf, String> = text
        .lines()
        .filter_map(|line| {
            let (meta, path) = line.split_once('\t')?;
            Some((PathBuf::from(path), meta.split(' ').next()?.to_string()))
        })
        .collect();
    (!modes.is_empty()).then_some(modes)
}

/// Whether the file at `path` is executable on disk (always true where the system has no
/// such bit).
fn executable_on_disk(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::metadata(root().join(path))
            .unwrap()
            .permissions()
            .mode()
            & 0o111
            != 0
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        true
    }
}

/// Whether a script under `scripts/` sources the file at `path`.
fn is_sourced(path: &Path) -> bool {
    let name = path.file_name().unwrap().to_str().unwrap();
    files(Path::new("scripts")).iter().any(|script| {
        let text = fs::read_to_string(root().join(script)).unwrap_or_default();
        text.lines().any(|line| {
            let line = line.trim_start();
            (line.starts_with("source ") || line.starts_with(". ")) && line.contains(name)
        })
    })
}

#[test]
fn every_script_is_executable_with_a_shebang_or_a_sourced_library() {
    let scripts = files(Path::new("scripts"));
    assert!(scripts.len() >= 10, "{scripts:?}");
    let modes = git_modes();
    let mut wrong = Vec::new();
    for path in &scripts {
        let git = modes.as_ref().and_then(|m| m.get(path));
        let in_git = git.map(|mode| mode == "100755");
        let on_disk = executable_on_disk(path);
        if has_shebang(path) {
            if in_git == Some(false) {
                wrong.push(format!(
                    "{}: no run bit in git (git update-index --chmod=+x)",
                    path.display()
                ));
            } else if !on_disk {
                wrong.push(format!("{}: no run bit (chmod +x)", path.display()));
            }
        } else if !is_sourced(path) {
            wrong.push(format!(
                "{}: no #! line, and no script sources it",
                path.display()
            ));
        } else if in_git == Some(true) || (in_git.is_none() && on_disk && cfg!(unix)) {
            wrong.push(format!(
                "{}: a sourced library with a run bit",
                path.display()
            ));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// The paths under `scripts/` that `text` names, each with the word before it (the command
/// that runs it, if any).
fn named_scripts(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut from = 0;
        while let Some(at) = line[from..].find("scripts/") {
            let start = from + at;
            from = start + "scripts/".len();
            let before = line[..start].strip_suffix("./").unwrap_or(&line[..start]);
            let quote = |c: char| c.is_whitespace() || "`'\"(".contains(c);
            if !before.chars().next_back().is_none_or(quote) {
                continue; // part of another path or word
            }
            let rest = &line[start..];
            let len = rest
                .find(|c: char| !(c.is_alphanumeric() || "_./-".contains(c)))
                .unwrap_or(rest.len());
            let path = rest[..len].trim_end_matches('.');
            let word = before
                .trim_end_matches(quote)
                .rsplit(char::is_whitespace)
                .next()
                .unwrap_or("")
                .trim_start_matches(|c: char| !c.is_alphanumeric() && c != '.');
            out.push((path.to_string(), word.to_string()));
        }
    }
    out
}

#[test]
fn every_script_a_doc_runs_by_its_path_is_executable() {
    let mut texts: Vec<PathBuf> = vec!["README.md".into(), ".ci/run".into()];
    for dir in ["docs", "scripts", "src"] {
        texts.extend(files(Path::new(dir)));
    }
    let mut checked = 0;
    let mut wrong = Vec::new();
    for text_path in &texts {
        let Ok(text) = fs::read_to_string(root().join(text_path)) else {
            continue;
        };
        for (path, word) in named_scripts(&text) {
            let is_file = Path::new(&path).extension().is_some();
            if !is_file || ["bash", "sh", "source", "."].contains(&word.as_str()) {
                continue;
            }
            checked += 1;
            let file = Path::new(&path);
            if !root().join(file).is_file() {
                wrong.push(format!(
                    "{}: names {path}, which is not there",
                    text_path.display()
                ));
            } else if !has_shebang(file) {
                wrong.push(format!(
                    "{}: runs {path}, a sourced library",
                    text_path.display()
                ));
            }
        }
    }
    // The reader must find the docs' scripts, or a reader that finds none would pass.
    assert!(checked >= 20, "only {checked} scripts named");
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn script_paths_are_read_with_the_word_that_runs_them() {
    let text = "run `scripts/chaos.sh --seed 1`, or bash scripts/levels.sh; \
                source \"$here/chaos/lib.sh\" (see ./scripts/bench.sh.) my_scripts/x.sh";
    assert_eq!(
        named_scripts(text),
        [
            ("scripts/chaos.sh".to_string(), "run".to_string()),
            ("scripts/levels.sh".into(), "bash".into()),
            ("scripts/bench.sh".into(), "see".into()),
        ]
    );
}
