//! Words for the POSIX shell lines a person pastes. `status` prints `sbatch` lines whose
//! `--wrap` command Slurm runs through `sh -c`, so a path in them is quoted twice: once for
//! that `sh`, once for the shell it is pasted into.
//!
//! Printable text is quoted by [`shlex`], which also keeps `!` and `^` out of reach of an
//! interactive bash's history expansion. A control character (a newline, a tab, an escape)
//! is never written as itself: pasted into a terminal, the line editor would act on it. It is
//! made by `printf` when the command runs instead, and a newline, which command substitution
//! would strip, is kept in the variable `$nl` that [`NEWLINE_PRELUDE`] sets.

use std::fmt::Write as _;

/// Sets `$nl` to a newline (a command substitution strips trailing newlines, hence the `x`).
/// A script whose words [`quote`] wrote with `newline` allowed starts with it.
pub(crate) const NEWLINE_PRELUDE: &str = "nl=$(printf '\\nx'); nl=${nl%x}; ";

/// `word` as text that a POSIX shell reads back as exactly that one word, holding no control
/// character itself. A newline becomes `"$nl"` where `newline` allows (the script then starts
/// with [`NEWLINE_PRELUDE`]); `None` where it does not, or for a NUL, which no shell word
/// holds.
pub(crate) fn quote(word: &str, newline: bool) -> Option<String> {
    if word.is_empty() {
        return Some("''".into());
    }
    let mut out = String::new();
    let mut rest = word;
    while let Some(c) = rest.chars().next() {
        let cut = match c {
            '\0' => return None,
            '\n' if !newline => return None,
            '\n' => {
                out.push_str("\"$nl\"");
                1
            }
            c if c.is_control() => {
                let end = rest
                    .find(|c: char| !c.is_control() || c == '\n' || c == '\0')
                    .unwrap_or(rest.len());
                out.push_str("\"$(printf '");
                for byte in rest[..end].bytes() {
                    let _ = write!(out, "\\{byte:03o}");
                }
                out.push_str("')\"");
                end
            }
            _ => {
                let end = rest.find(char::is_control).unwrap_or(rest.len());
                out.push_str(&shlex::try_quote(&rest[..end]).ok()?);
                end
            }
        };
        rest = &rest[cut..];
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    /// Every character of ASCII but NUL, and non-ASCII ones a terminal or shell may treat
    /// specially (C1 controls, a no-break space, a line separator).
    fn hostile() -> Vec<String> {
        let mut chars: Vec<char> = (1u8..=127).map(char::from).collect();
        chars.extend(['\u{85}', '\u{9b}', '\u{a0}', '\u{2028}', 'é', '😀']);
        let mut words: Vec<String> = chars.iter().map(|c| c.to_string()).collect();
        words.extend(chars.iter().map(|c| format!("a{c}b{c}{c}")));
        words.push(chars.iter().collect());
        words.push("'\"$(touch PWNED)`x`\\\n".into());
        words.push("-".into());
        words.push(String::new());
        words
    }

    /// What `shell -c LINE` prints, where LINE runs `sh -c` on the quoted script that prints
    /// each word of `words` followed by a NUL: the two layers of a pasted `--wrap`.
    fn twice_through(shell: &str, words: &[String]) -> Vec<String> {
        let mut script = format!("{NEWLINE_PRELUDE}printf '%s\\0'");
        for w in words {
            script.push(' ');
            script.push_str(&quote(w, true).unwrap());
        }
        let line = format!("sh -c {}", quote(&script, false).unwrap());
        assert!(!line.contains(|c: char| c.is_control()), "{line:?}");
        let out = Command::new(shell).arg("-c").arg(&line).output().unwrap();
        assert!(out.status.success(), "{out:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        let mut printed: Vec<String> = text.split('\0').map(String::from).collect();
        assert_eq!(printed.pop().as_deref(), Some(""));
        printed
    }

    #[test]
    fn every_character_survives_two_shells_and_no_control_character_is_printed() {
        let words = hostile();
        for shell in ["sh", "bash"] {
            if Command::new(shell).arg("-c").arg(":").status().is_err() {
                eprintln!("skipped: no {shell}");
                continue;
            }
            assert_eq!(twice_through(shell, &words), words, "through {shell}");
        }
    }

    #[test]
    fn newlines_need_the_prelude_and_nul_is_refused() {
        assert_eq!(quote("a\nb", false), None);
        assert_eq!(quote("a\0b", true), None);
        assert_eq!(quote("a\nb", true).as_deref(), Some("a\"$nl\"b"));
        assert_eq!(
            quote("x\t", true).as_deref(),
            Some("x\"$(printf '\\011')\"")
        );
        assert_eq!(
            quote("plain/path-1.ckpt", false).as_deref(),
            Some("plain/path-1.ckpt")
        );
        assert_eq!(quote("", false).as_deref(), Some("''"));
    }
}
