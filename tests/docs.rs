//! Every relative link of the project's Markdown resolves: the file it names exists, and its
//! anchor (`#section`) is a heading of that file, slugged as GitHub slugs headings. The README,
//! the changelog and `docs/` link each other's sections in many places, and a renamed heading
//! breaks a link without a word from any build. The sources and scripts cite the docs too,
//! as `docs/NAME.md#anchor` or as `docs/NAME.md, "heading"`; those must resolve as well.
//!
//! Quick and offline: it reads files only. Links with a scheme (`https://`) are not followed.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Component, Path, PathBuf};

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

/// The repository's root.
fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Folders never read: build output, git's own and other hidden folders.
fn is_skipped(name: &str) -> bool {
    name == "target" || name.starts_with('.')
}

/// Every file under the root whose name ends with `ext`, relative to the root, sorted.
fn files_ending(ext: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root().to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = entry.path();
            if path.is_dir() {
                if !is_skipped(&name) {
                    stack.push(path);
                }
            } else if name.ends_with(ext) {
                out.push(path.strip_prefix(root()).unwrap().to_path_buf());
            }
        }
    }
    out.sort();
    out
}

/// A heading's anchor as GitHub makes it: lower case, every character but letters, digits,
/// `-` and `_` dropped, each space a `-` (so `N = 28` gives `n--28`).
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            '-' | '_' => Some(c),
            c if c.is_alphanumeric() && !matches!(c, '²' | '³' | '¹') => Some(c),
            _ => None,
        })
        .collect()
}

/// What one Markdown text holds: its headings' anchors and its links' targets.
#[derive(Debug, Default)]
struct Page {
    anchors: BTreeSet<String>,
    headings: Vec<String>,
    links: Vec<String>,
}

/// Reads `text`'s headings (anchors numbered `-1`, `-2` on repeats, as GitHub does) and the
/// targets of its links and images; code spans and code blocks hold neither.
fn page(text: &str) -> Page {
    let mut out = Page::default();
    let mut heading: Option<String> = None;
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    for event in Parser::new_ext(text, options) {
        match event {
            Event::Start(Tag::Heading { .. }) => heading = Some(String::new()),
            Event::Text(t) | Event::Code(t) => {
                if let Some(h) = heading.as_mut() {
                    h.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                let h = heading.take().unwrap_or_default();
                let base = slug(&h);
                let mut anchor = base.clone();
                let mut n = 0;
                while out.anchors.contains(&anchor) {
                    n += 1;
                    anchor = format!("{base}-{n}");
                }
                out.anchors.insert(anchor);
                out.headings.push(h);
            }
            Event::Start(Tag::Link { dest_url, .. })
            | Event::Start(Tag::Image { dest_url, .. }) => {
                out.links.push(dest_url.into_string());
            }
            _ => {}
        }
    }
    out
}

/// Whether `target` leaves the repository (a scheme such as `https:` or `mailto:`).
fn is_external(target: &str) -> bool {
    let scheme = target.split(':').next().unwrap_or("");
    target.contains(':')
        && !scheme.is_empty()
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c))
}

/// `base` joined with the relative `rel`, `..` and `.` resolved, relative to the root; `None`
/// where it climbs out of the repository.
fn resolve(base: &Path, rel: &str) -> Option<PathBuf> {
    let mut parts: Vec<String> = Vec::new();
    for component in base.join(rel).components() {
        match component {
            Component::Normal(p) => parts.push(p.to_string_lossy().into_owned()),
            Component::ParentDir => {
                parts.pop()?;
            }
            Component::CurDir => {}
            _ => return None,
        }
    }
    Some(parts.iter().collect())
}

/// The pages of every Markdown file, by path relative to the root.
fn pages() -> BTreeMap<PathBuf, Page> {
    files_ending(".md")
        .into_iter()
        .map(|path| {
            let text = fs::read_to_string(root().join(&path)).unwrap();
            (path, page(&text))
        })
        .collect()
}

/// What is wrong with the link `target` of the file `from`, if anything.
fn check_link(pages: &BTreeMap<PathBuf, Page>, from: &Path, target: &str) -> Option<String> {
    let (path, anchor) = match target.split_once('#') {
        Some((p, a)) => (p, Some(a)),
        None => (target, None),
    };
    let dir = from.parent().unwrap_or(Path::new(""));
    let file = if path.is_empty() {
        from.to_path_buf()
    } else {
        match resolve(dir, path) {
            Some(f) => f,
            None => return Some(format!("{target}: leaves the repository")),
        }
    };
    if !root().join(&file).exists() {
        return Some(format!("{target}: no file {}", file.display()));
    }
    let anchor = anchor.filter(|a| !a.is_empty())?;
    match pages.get(&file) {
        Some(p) if p.anchors.contains(anchor) => None,
        Some(_) => Some(format!(
            "{target}: no heading of {} has that anchor",
            file.display()
        )),
        None => Some(format!(
            "{target}: an anchor into a file that is not Markdown"
        )),
    }
}

#[test]
fn every_relative_link_and_anchor_of_the_markdown_resolves() {
    let pages = pages();
    let mut checked = 0;
    let mut wrong = Vec::new();
    for (from, page) in &pages {
        for target in page.links.iter().filter(|t| !is_external(t)) {
            checked += 1;
            if let Some(problem) = check_link(&pages, from, target) {
                wrong.push(format!("{}: {problem}", from.display()));
            }
        }
    }
    // The reader must find the links, or a reader that found none would pass.
    assert!(checked >= 100, "only {checked} relative links found");
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// The places a source text cites in the docs.
#[derive(Debug, Default)]
struct Citations {
    /// `(path, anchor)` for `docs/NAME.md#anchor` and `README.md#anchor`.
    anchors: Vec<(String, String)>,
    /// `(path, heading)` for `docs/NAME.md, "heading"`.
    headings: Vec<(String, String)>,
}

/// The citations of the docs in `text`.
fn citations(text: &str) -> Citations {
    let mut out = Citations::default();
    for (at, _) in text.match_indices(".md") {
        let start = text[..at]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || "/_-.".contains(c)))
            .map_or(0, |i| i + 1);
        let path = &text[start..at + 3];
        if !(path.starts_with("docs/") || path == "README.md") {
            continue;
        }
        let rest = &text[at + 3..];
        if let Some(anchor) = rest.strip_prefix('#') {
            let end = anchor
                .find(|c: char| !(c.is_alphanumeric() || c == '-' || c == '_'))
                .unwrap_or(anchor.len());
            out.anchors
                .push((path.to_string(), anchor[..end].to_string()));
        } else if let Some(quoted) = rest.strip_prefix(", \"") {
            if let Some(end) = quoted.find('"') {
                out.headings
                    .push((path.to_string(), quoted[..end].to_string()));
            }
        }
    }
    out
}

#[test]
fn the_sources_and_scripts_cite_sections_that_exist() {
    let pages = pages();
    let this = Path::new("tests/docs.rs");
    let mut texts: Vec<PathBuf> = Vec::new();
    for ext in [".rs", ".sh", ".wgsl", ".toml", ".sbatch"] {
        texts.extend(files_ending(ext).into_iter().filter(|p| p != this));
    }
    let mut checked = 0;
    let mut wrong = Vec::new();
    for path in &texts {
        let Ok(text) = fs::read_to_string(root().join(path)) else {
            continue;
        };
        let cited = citations(&text);
        for (file, anchor) in cited.anchors {
            checked += 1;
            let target = format!("{file}#{anchor}");
            if let Some(problem) = check_link(&pages, Path::new("citing.md"), &target) {
                wrong.push(format!("{}: {problem}", path.display()));
            }
        }
        for (file, heading) in cited.headings {
            checked += 1;
            let found = pages.get(Path::new(&file)).is_some_and(|p| {
                let wanted = heading.to_lowercase();
                p.headings
                    .iter()
                    .any(|h| h.to_lowercase().contains(&wanted))
            });
            if !found {
                wrong.push(format!(
                    "{}: no heading of {file} says \"{heading}\"",
                    path.display()
                ));
            }
        }
    }
    assert!(checked >= 3, "only {checked} citations found");
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn headings_are_slugged_as_github_slugs_them() {
    assert_eq!(
        slug("What Q(22)…Q(28) cost with this tool"),
        "what-q22q28-cost-with-this-tool"
    );
    assert_eq!(
        slug("mitm by sampled cost, N = 20..26"),
        "mitm-by-sampled-cost-n--2026"
    );
    assert_eq!(slug("nqueens status RUN_DIR"), "nqueens-status-run_dir");
    assert_eq!(slug("A cross task's last row"), "a-cross-tasks-last-row");
    assert_eq!(
        slug("Fundamental solutions (--unique)"),
        "fundamental-solutions---unique"
    );
    let page = page("# A\n\n## A\n\n```md\n## Not a heading [x](nowhere.md)\n```\n\n## `A`\n");
    let anchors: Vec<&str> = page.anchors.iter().map(String::as_str).collect();
    assert_eq!(anchors, ["a", "a-1", "a-2"]);
    assert!(page.links.is_empty());
}

#[test]
fn links_are_read_outside_code_and_resolved_against_their_file() {
    let page = page("[a](x.md#b) `[c](y.md)` ![i](p.svg) [w](https://e.org) [t](#top)\n");
    assert_eq!(page.links, ["x.md#b", "p.svg", "https://e.org", "#top"]);
    assert!(is_external("https://e.org") && is_external("mailto:a@b.c"));
    assert!(!is_external("x.md#b") && !is_external("#top"));
    let up = resolve(Path::new("docs/history"), "../../README.md").unwrap();
    assert_eq!(up, PathBuf::from("README.md"));
    assert_eq!(resolve(Path::new("docs"), "../../x.md"), None);
}

#[test]
fn citations_in_sources_are_found_in_both_forms() {
    let text = concat!(
        "see docs/gpu",
        ".md#the-model and (README",
        ".md#library); ",
        "docs/algorithms",
        ".md, \"symmetry weights\"; docs/x",
        ".md plain"
    );
    let cited = citations(text);
    assert_eq!(
        cited.anchors,
        [
            ("docs/gpu.md".into(), "the-model".into()),
            ("README.md".into(), "library".into())
        ]
    );
    assert_eq!(
        cited.headings,
        [("docs/algorithms.md".into(), "symmetry weights".into())]
    );
}

#[test]
fn headings_at_every_level_are_anchors() {
    let page = page("###### Deep one\n\nSetext\n------\n");
    assert!(page.anchors.contains("deep-one") && page.anchors.contains("setext"));
}
