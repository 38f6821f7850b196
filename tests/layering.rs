//! The modules under `src/` import each other without a circle: every module can be read,
//! changed and tested on top of the ones it uses, and shared names live in a module below
//! both users.
//!
//! The graph comes from the source text: `use` items and inline `crate::`/`super::` paths,
//! outside comments, string literals and `#[cfg(test)] mod tests` blocks (a test may use
//! anything). A module using one of its ancestors is not an edge: parents declare and
//! re-export their children, so that direction is the language's own.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

/// Module path (`shard::checkpoint`; the crate roots are ``) → the modules it imports.
type Graph = BTreeMap<String, BTreeSet<String>>;

#[test]
fn no_module_of_src_imports_itself_through_others() {
    let graph = graph();
    // The reader must see the imports it is meant to judge, or an empty graph would pass.
    let checkpoint = &graph["shard::checkpoint"];
    assert!(checkpoint.contains("shard::blocks"), "{checkpoint:?}");
    assert!(graph["engine::mitm::task"].contains("engine::mitm::join"));
    if let Some(circle) = find_circle(&graph) {
        panic!("an import circle: {}", circle.join(" -> "));
    }
}

/// Folders whose modules import nothing from a `mod.rs` above them: a name that module
/// defines or re-exports is one its children share, so it lives in a module below both
/// users, and the folder's `mod.rs` only declares and re-exports its children.
const FOLDERS_WITHOUT_UPWARD_IMPORTS: [&str; 1] = ["gpu"];

#[test]
fn no_module_imports_what_a_mod_rs_above_it_holds() {
    let (sources, known) = sources();
    let mut upward = Vec::new();
    for (module, code) in &sources {
        let checked = FOLDERS_WITHOUT_UPWARD_IMPORTS
            .iter()
            .any(|f| module.starts_with(&format!("{f}::")));
        if !checked {
            continue;
        }
        for path in paths(&strip(code)) {
            let Some((to, rest)) = resolve_with_rest(module, &path, &known) else {
                continue;
            };
            let above = !to.is_empty() && module.starts_with(&format!("{to}::"));
            if above && rest > 0 {
                upward.push(format!("{module}: {path}"));
            }
        }
    }
    assert!(
        upward.is_empty(),
        "imports from a mod.rs above: {upward:#?}"
    );
}

#[test]
fn an_item_of_the_mod_rs_above_is_told_from_a_module_below_it() {
    let known: BTreeSet<String> = ["", "gpu", "gpu::device", "gpu::feeder", "gpu::feeder::run"]
        .map(String::from)
        .into();
    let at = |module: &str, path: &str| resolve_with_rest(module, path, &known);
    let to = |module: &str, rest: usize| Some((module.to_string(), rest));
    assert_eq!(at("gpu::feeder", "super::Device"), to("gpu", 1));
    assert_eq!(at("gpu::feeder::run", "super::*"), to("gpu::feeder", 1));
    assert_eq!(at("gpu::feeder::run", "crate::gpu::Gpu"), to("gpu", 1));
    assert_eq!(
        at("gpu::feeder", "super::device::Device"),
        to("gpu::device", 1)
    );
    assert_eq!(
        at("gpu::feeder::run", "super::super::device"),
        to("gpu::device", 0)
    );
}

#[test]
fn a_circle_is_found_and_named() {
    let mut graph = Graph::new();
    for (from, to) in [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")] {
        graph.entry(from.into()).or_default().insert(to.into());
    }
    let circle = find_circle(&graph).expect("a -> b -> c -> a");
    assert_eq!(circle, ["a", "b", "c", "a"]);
    graph.get_mut("c").unwrap().remove("a");
    assert_eq!(find_circle(&graph), None);
}

#[test]
fn imports_are_read_from_use_items_and_inline_paths_only() {
    let code = "use super::{a::X, b::{self, Y as W}};\n// use crate::c;\n\
                let s = \"crate::d\"; crate::e::f(); '{'; r#\"\"crate::\"\"#;\n\
                #[cfg(test)]\nmod tests { use crate::g; }\nuse self::h::Z;";
    let found = paths(&strip(code));
    assert_eq!(
        found,
        [
            "super::a::X",
            "super::b::self",
            "super::b::Y",
            "self::h::Z",
            "crate::e::f"
        ]
    );
}

/// Every module under `src/` with its source (a folder's `mod.rs` as the folder), and
/// their paths.
fn sources() -> (BTreeMap<String, String>, BTreeSet<String>) {
    let mut sources = BTreeMap::new();
    read_modules(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        "",
        &mut sources,
    );
    let known = sources.keys().cloned().collect();
    (sources, known)
}

/// The import graph of every module under `src/`.
fn graph() -> Graph {
    let (sources, known) = sources();
    let mut graph = Graph::new();
    for (module, code) in &sources {
        let edges = graph.entry(module.clone()).or_default();
        for path in paths(&strip(code)) {
            if let Some(to) = resolve(module, &path, &known) {
                let is_ancestor = to.is_empty() || module.starts_with(&format!("{to}::"));
                if to != *module && !is_ancestor {
                    edges.insert(to);
                }
            }
        }
    }
    graph
}

/// Reads every `.rs` file under `dir` into `out`, keyed by its module path.
fn read_modules(dir: &Path, prefix: &str, out: &mut BTreeMap<String, String>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_str().unwrap().to_string();
        let child = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}::{name}")
        };
        if path.is_dir() {
            read_modules(&path, &child, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let module = match name.as_str() {
                "mod" | "lib" | "main" => prefix.to_string(),
                _ => child,
            };
            let code = fs::read_to_string(&path).unwrap();
            out.entry(module).or_default().push_str(&code);
        }
    }
}

/// `code` without comments, string and char literals, and `#[cfg(test)] mod tests { … }`.
fn strip(code: &str) -> String {
    let mut out = String::new();
    let mut chars = code.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('/', Some('/')) => {
                chars.by_ref().find(|&c| c == '\n');
                out.push('\n');
            }
            ('/', Some('*')) => {
                let mut last = ' ';
                chars
                    .by_ref()
                    .find(|&c| std::mem::replace(&mut last, c) == '*' && c == '/');
            }
            ('r', Some('#' | '"')) if !out.ends_with(|c: char| c.is_alphanumeric() || c == '_') => {
                // A raw string: r"…" or r#"…"#, which may hold quotes.
                let hashes = chars.by_ref().take_while(|&c| c == '#').count();
                let close: String = std::iter::once('"')
                    .chain((0..hashes).map(|_| '#'))
                    .collect();
                let mut body = String::new();
                chars.by_ref().find(|&c| {
                    body.push(c);
                    body.ends_with(&close)
                });
                out.push_str("\"\"");
            }
            ('"', _) => {
                let mut escaped = false;
                chars.by_ref().find(|&c| {
                    let end = c == '"' && !escaped;
                    escaped = c == '\\' && !escaped;
                    end
                });
                out.push_str("\"\"");
            }
            ('\'', _) => {
                // A char literal ('x', '\n'); a lifetime ('a) has no closing quote after one
                // character.
                let rest: String = chars.clone().take(3).collect();
                if rest.starts_with('\\') || rest.chars().nth(1) == Some('\'') {
                    chars.by_ref().skip(1).find(|&c| c == '\'');
                } else {
                    out.push(c);
                }
            }
            _ => out.push(c),
        }
    }
    drop_test_modules(&out)
}

/// `code` without its `#[cfg(test)] mod tests { … }` blocks.
fn drop_test_modules(code: &str) -> String {
    let mut rest = code;
    let mut out = String::new();
    while let Some(at) = rest.find("#[cfg(test)]") {
        let after = rest[at + 12..].trim_start();
        if !(after.starts_with("mod tests")
            && after["mod tests".len()..].trim_start().starts_with('{'))
        {
            out.push_str(&rest[..at + 12]);
            rest = &rest[at + 12..];
            continue;
        }
        out.push_str(&rest[..at]);
        let open = at + rest[at..].find('{').unwrap();
        let mut depth = 0;
        let close = rest[open..]
            .char_indices()
            .find(|&(_, c)| {
                depth += i32::from(c == '{') - i32::from(c == '}');
                depth == 0
            })
            .map_or(rest.len(), |(i, _)| open + i + 1);
        rest = &rest[close..];
    }
    out + rest
}

/// The paths that `code` imports: every `use` item, braces expanded, then every inline path
/// that starts at `crate::` or `super::`.
fn paths(code: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = String::new();
    let mut tail = code;
    while let Some(at) = find_word(tail, "use") {
        rest.push_str(&tail[..at]);
        let end = at + tail[at..].find(';').unwrap_or(tail.len() - at);
        found.extend(expand(&drop_renames(&tail[at + 3..end])));
        tail = &tail[end..];
    }
    rest.push_str(tail);
    for start in ["crate::", "super::"] {
        let mut from = 0;
        while let Some(at) = find_word(&rest[from..], start) {
            let begin = from + at;
            let len = rest[begin..]
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(rest.len() - begin);
            found.push(rest[begin..begin + len].trim_end_matches(':').to_string());
            from = begin + len;
        }
    }
    found
}

/// Where `word` starts in `text` with no identifier character or `:` just before it.
fn find_word(text: &str, word: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(at) = text[from..].find(word) {
        let at = from + at;
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        let bounded_after = word.ends_with(':') || after.is_some_and(char::is_whitespace);
        if !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') && bounded_after {
            return Some(at);
        }
        from = at + word.len();
    }
    None
}

/// `a as b, c` as `a,c`: the imported paths without renames or blanks.
fn drop_renames(item: &str) -> String {
    let mut out = String::new();
    let mut words = item.split_whitespace();
    while let Some(word) = words.next() {
        if word == "as" {
            let alias = words.next().unwrap_or("");
            out.push_str(alias.trim_start_matches(|c: char| c.is_alphanumeric() || c == '_'));
        } else {
            out.push_str(word);
        }
    }
    out
}

/// `a::{b, c::{d, e}}` as `a::b`, `a::c::d`, `a::c::e`.
fn expand(item: &str) -> Vec<String> {
    let Some(open) = item.find('{') else {
        return vec![item.to_string()];
    };
    let (prefix, inner) = (&item[..open], &item[open + 1..item.len() - 1]);
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        depth += i32::from(c == '{') - i32::from(c == '}');
        if c == ',' && depth == 0 {
            parts.push(&inner[start..i]);
            start = i + 1;
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|p| !p.is_empty())
        .flat_map(|p| expand(&format!("{prefix}{p}")))
        .collect()
}

/// The module that `path`, written in `module`, names: its longest prefix that is a module.
fn resolve(module: &str, path: &str, known: &BTreeSet<String>) -> Option<String> {
    resolve_with_rest(module, path, known).map(|(to, _)| to)
}

/// [`resolve`], with how many segments of `path` come after that module (0: the path names
/// the module itself; more: an item in it, or `*`).
fn resolve_with_rest(
    module: &str,
    path: &str,
    known: &BTreeSet<String>,
) -> Option<(String, usize)> {
    let mut segments: Vec<&str> = path.split("::").collect();
    let mut base: Vec<&str> = module.split("::").filter(|s| !s.is_empty()).collect();
    match segments.first() {
        Some(&"crate") => base.clear(),
        Some(&"super") | Some(&"self") => {}
        _ => return None,
    }
    while let Some(&first) = segments.first() {
        match first {
            "crate" | "self" => {}
            "super" => {
                base.pop();
            }
            _ => break,
        }
        segments.remove(0);
    }
    let full: Vec<&str> = base.into_iter().chain(segments).collect();
    (0..=full.len())
        .rev()
        .map(|k| (full[..k].join("::"), full.len() - k))
        .find(|(m, _)| known.contains(m))
}

/// A circle in `graph` as the modules along it, the first repeated at the end; `None` if
/// there is none.
fn find_circle(graph: &Graph) -> Option<Vec<String>> {
    let mut done = BTreeSet::new();
    for start in graph.keys() {
        let mut path = Vec::new();
        if let Some(circle) = visit(graph, start, &mut path, &mut done) {
            return Some(circle);
        }
    }
    None
}

/// Depth-first search from `node` along `path`, skipping nodes already cleared.
fn visit(
    graph: &Graph,
    node: &str,
    path: &mut Vec<String>,
    done: &mut BTreeSet<String>,
) -> Option<Vec<String>> {
    if let Some(at) = path.iter().position(|m| m == node) {
        let mut circle = path[at..].to_vec();
        circle.push(node.to_string());
        return Some(circle);
    }
    if done.contains(node) {
        return None;
    }
    path.push(node.to_string());
    for next in graph.get(node).into_iter().flatten() {
        if let Some(circle) = visit(graph, next, path, done) {
            return Some(circle);
        }
    }
    path.pop();
    done.insert(node.to_string());
    None
}
