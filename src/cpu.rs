//! A name for this machine's CPU that tells node types apart.
//!
//! Virtual machines often report a bare brand ("AMD EPYC") that two generations share, so the
//! name adds the numbers the platform gives: x86's family, model and stepping, or ARM's
//! implementer, part, variant and revision. Where none can be read (another OS, a sandbox
//! without `/proc`), the name says so and gives the architecture.

/// The CPU's name, e.g. `AMD EPYC (family 25, model 17, stepping 1)`; `unknown <arch> CPU`
/// where the platform gives nothing.
pub fn name() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|text| from_cpuinfo(&text))
        .unwrap_or_else(|| format!("unknown {} CPU", std::env::consts::ARCH))
}

/// The CPU's name from the text of Linux's `/proc/cpuinfo` (its first processor); `None` if
/// it names none.
pub fn from_cpuinfo(text: &str) -> Option<String> {
    // Every processor repeats the same fields; the first block is enough.
    let first = text.split("\n\n").next().unwrap_or_default();
    let field = |key: &str| {
        first.lines().find_map(|line| {
            let (k, v) = line.split_once(':')?;
            (k.trim() == key && !v.trim().is_empty()).then(|| v.trim().to_string())
        })
    };
    let numbers = |keys: &[(&str, &str)]| {
        let parts: Vec<String> = keys
            .iter()
            .filter_map(|(key, label)| field(key).map(|v| format!("{label} {v}")))
            .collect();
        (!parts.is_empty()).then(|| parts.join(", "))
    };
    let x86 = numbers(&[
        ("cpu family", "family"),
        ("model", "model"),
        ("stepping", "stepping"),
    ]);
    let arm = numbers(&[
        ("CPU implementer", "implementer"),
        ("CPU part", "part"),
        ("CPU variant", "variant"),
        ("CPU revision", "revision"),
    ]);
    let brand = field("model name").or_else(|| field("Hardware"));
    match (brand, x86.or(arm)) {
        (Some(b), Some(n)) => Some(format!("{b} ({n})")),
        (Some(b), None) => Some(b),
        (None, Some(n)) => Some(format!("{} CPU ({n})", std::env::consts::ARCH)),
        (None, None) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_x86_name_carries_family_model_and_stepping() {
        let text = "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\n\
                    model\t\t: 17\nmodel name\t: AMD EPYC\nstepping\t: 1\n\n\
                    processor\t: 1\ncpu family\t: 99\n";
        assert_eq!(
            from_cpuinfo(text).as_deref(),
            Some("AMD EPYC (family 25, model 17, stepping 1)")
        );
    }

    #[test]
    fn an_arm_name_carries_implementer_and_part() {
        let text = "processor\t: 0\nBogoMIPS\t: 50.00\nCPU implementer\t: 0x41\n\
                    CPU architecture: 8\nCPU variant\t: 0x1\nCPU part\t: 0xd0c\n\
                    CPU revision\t: 1\n";
        let name = from_cpuinfo(text).unwrap();
        assert!(
            name.ends_with("(implementer 0x41, part 0xd0c, variant 0x1, revision 1)"),
            "{name}"
        );
    }

    #[test]
    fn text_without_a_cpu_names_none() {
        assert_eq!(from_cpuinfo(""), None);
        assert_eq!(from_cpuinfo("processor\t: 0\nmodel name\t:\n"), None);
    }
}
