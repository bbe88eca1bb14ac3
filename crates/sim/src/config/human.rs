//! Values in the units a scenario file uses, for error messages ("30s", "2.5Gbps", "64KB"), so a
//! message reads the same whether the front or the core found the problem. Parsing human units
//! is the front's job (`python/bbrlab/units.py`); this side only prints them.

/// Shortest exact form of `v / unit` with up to 9 decimals ("1.5", "70", "0.001").
fn scaled(v: u64, unit: u64) -> String {
    let whole = v / unit;
    let frac = v % unit;
    if frac == 0 {
        return whole.to_string();
    }
    let digits = unit.ilog10() as usize;
    let s = format!("{frac:0digits$}");
    format!("{whole}.{}", s.trim_end_matches('0'))
}

/// Pick the shortest of the candidate forms (ties: the larger unit).
fn shortest(v: u64, units: &[(&str, u64)], plain: &str) -> String {
    let mut best = format!("{v}{plain}");
    for &(suffix, unit) in units {
        if v >= unit {
            let text = format!("{}{suffix}", scaled(v, unit));
            if text.len() < best.len() {
                best = text;
            }
        }
    }
    best
}

/// Nanoseconds as "70ms", "1.5s", "250us".
pub fn time(ns: u64) -> String {
    if ns == 0 {
        return "0s".into();
    }
    shortest(ns, &[("s", 1_000_000_000), ("ms", 1_000_000), ("us", 1_000)], "ns")
}

/// Bits per second as "2.5Gbps".
pub fn rate(bps: u64) -> String {
    shortest(
        bps,
        &[
            ("Tbps", 1_000_000_000_000),
            ("Gbps", 1_000_000_000),
            ("Mbps", 1_000_000),
            ("kbps", 1_000),
        ],
        "bps",
    )
}

/// Bytes as "64KB", "1.5MB", "64KiB".
pub fn size(bytes: u64) -> String {
    shortest(
        bytes,
        &[
            ("TB", 1_000_000_000_000),
            ("GB", 1_000_000_000),
            ("MB", 1_000_000),
            ("KB", 1_000),
            ("GiB", 1 << 30),
            ("MiB", 1 << 20),
            ("KiB", 1 << 10),
        ],
        "B",
    )
}

/// A config field's scenario name: its name without the unit suffix (`rate_bps` → `rate`).
pub fn field_name(core: &str) -> &str {
    for suffix in ["_bps", "_ns", "_bytes", "_segs"] {
        if let Some(stem) = core.strip_suffix(suffix) {
            return stem;
        }
    }
    core
}

/// A value of the field `core_name` in its human unit (raw when the name carries no unit).
pub fn value(core_name: &str, v: u64) -> String {
    if core_name.ends_with("_bps") {
        rate(v)
    } else if core_name.ends_with("_ns") {
        time(v)
    } else if core_name.ends_with("_bytes") || core_name == "bytes" {
        size(v)
    } else {
        v.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_match_the_scenario_files() {
        assert_eq!(time(70_000_000), "70ms");
        assert_eq!(time(1_500_000_000), "1.5s");
        assert_eq!(time(250_000), "250us");
        assert_eq!(time(7), "7ns");
        assert_eq!(rate(2_500_000_000), "2.5Gbps");
        assert_eq!(rate(100_000_000), "100Mbps");
        assert_eq!(size(64_000), "64KB");
        assert_eq!(size(65_536), "64KiB");
        assert_eq!(size(1448), "1448B");
        assert_eq!(field_name("initial_cwnd_segs"), "initial_cwnd");
        assert_eq!(field_name("loss"), "loss");
        assert_eq!(value("min_rto_ns", 200_000_000), "200ms");
    }
}
