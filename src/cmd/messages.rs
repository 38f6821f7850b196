//! Every line the binary writes to stderr for people goes through these macros, so each one
//! starts with `nqueens: ` (ripgrep's `messages.rs`). Stdout carries results only.

/// Prints `nqueens: MESSAGE` on stderr. With `new_line;` first, starts on a fresh line (after a
/// `^C` the terminal echoed).
macro_rules! message {
    (new_line; $($arg:tt)*) => {
        eprintln!("\nnqueens: {}", format_args!($($arg)*))
    };
    ($($arg:tt)*) => {
        eprintln!("nqueens: {}", format_args!($($arg)*))
    };
}

/// Prints `nqueens: note: MESSAGE` on stderr: something worth knowing that is not a problem.
macro_rules! note {
    ($($arg:tt)*) => {
        $crate::cmd::messages::message!("note: {}", format_args!($($arg)*))
    };
}

/// Prints `nqueens: warning: MESSAGE` on stderr: a problem that does not stop the command.
macro_rules! warning {
    ($($arg:tt)*) => {
        $crate::cmd::messages::message!("warning: {}", format_args!($($arg)*))
    };
}

pub(crate) use {message, note, warning};

/// An error chain as `{:#}` prints it (`outer: cause: …`), with the command line's advice
/// after the library errors that have some: the library states the fact, the command line
/// knows which flag to change. One line: a control character (in a file name, say) is
/// written as an escape, so it neither breaks the line nor acts on the terminal.
pub(crate) fn error_text(err: &anyhow::Error) -> String {
    let links: Vec<String> = err
        .chain()
        .map(|link| match link.downcast_ref::<nqueens::Error>() {
            Some(e) => advised(e),
            None => link.to_string(),
        })
        .collect();
    nqueens::report::printable(&links.join(": ")).into_owned()
}

/// A library error in the command line's words.
fn advised(e: &nqueens::Error) -> String {
    use nqueens::Error;
    match e {
        Error::SplitDepthUnsupported { engine } => format!(
            "the {engine} engine does not support --split-depth (its tasks are row splits; use \
             mirror or symmetry)"
        ),
        Error::UniqueUnsupported { .. } => format!("{e} (try --engine symmetry)"),
        Error::AutoUnsupported { others, .. } => format!("{e} (use --engine {})", others[0]),
        Error::Unsupported {
            engine: "min-conflicts",
            ..
        } => format!("{e}; use --method construct"),
        Error::CheckpointMismatch { .. } => format!("{e} (use another --checkpoint FILE)"),
        Error::Gpu(_) => format!("{e} (run it again, with --gpu or without)"),
        Error::CheckpointLocked { .. } => {
            format!("{e}; wait for it to finish or use another --checkpoint FILE")
        }
        _ => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn error_text_joins_the_chain_like_the_alternate_format() {
        let err = anyhow::Error::from(std::io::Error::other("disk full")).context("writing 'x'");
        assert_eq!(error_text(&err), format!("{err:#}"));
    }

    #[test]
    fn library_errors_get_the_flag_to_change() {
        let err = anyhow::Error::from(nqueens::Error::UniqueUnsupported { engine: "mitm" })
            .context("counting");
        assert_eq!(
            error_text(&err),
            "counting: the mitm engine does not support unique counts (try --engine symmetry)"
        );
        let locked = nqueens::Error::CheckpointLocked {
            path: PathBuf::from("c.ckpt"),
            lock: PathBuf::from("c.ckpt.lock"),
        };
        let text = error_text(&locked.into());
        assert!(text.ends_with("use another --checkpoint FILE"), "{text}");
    }

    #[test]
    fn library_messages_name_no_flags() {
        let errors = [
            nqueens::Error::UniqueUnsupported { engine: "mitm" },
            nqueens::Error::SplitDepthUnsupported { engine: "mitm" },
            nqueens::Error::AutoUnsupported {
                n: 30,
                refusal: Box::new(nqueens::Error::Unsupported {
                    engine: "mitm",
                    what: "N = 30".into(),
                }),
                others: vec!["symmetry", "mirror"],
            },
            nqueens::Error::CheckpointLocked {
                path: PathBuf::from("c.ckpt"),
                lock: PathBuf::from("c.ckpt.lock"),
            },
        ];
        for e in errors {
            assert!(!e.to_string().contains("--"), "{e}");
            assert!(advised(&e).contains("--"), "{e}");
        }
    }
}
