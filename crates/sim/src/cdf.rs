//! Flow-size distributions from CDF files (the workload app, `arrivals.rs`).
//!
//! Format (as the HPCC and pFabric simulators' traffic generators read them): one point per
//! line, `size_bytes cumulative_probability`, sizes and probabilities non-decreasing, the last
//! probability 1; `#` starts a comment. Between points the CDF is linear in size (a size is
//! drawn by inverting it: uniform u, the segment where u falls, linear interpolation), so the
//! mean is the sum over segments of their probability times their midpoint size.

/// A parsed CDF: (size_bytes, cumulative probability) points.
#[derive(Clone, Debug)]
pub struct Cdf {
    points: Vec<(f64, f64)>,
}

impl Cdf {
    /// Parse a CDF file's text; an error names the line (1-based) and what is wrong.
    pub fn parse(text: &str) -> Result<Cdf, String> {
        let mut points: Vec<(f64, f64)> = Vec::new();
        let mut last_line = 0;
        for (i, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let n = i + 1;
            let mut it = line.split_whitespace();
            let (Some(s), Some(p), None) = (it.next(), it.next(), it.next()) else {
                return Err(format!("line {n}: expected `size_bytes probability`, got {line:?}"));
            };
            let size: f64 =
                s.parse().map_err(|_| format!("line {n}: size {s:?} is not a number"))?;
            let prob: f64 =
                p.parse().map_err(|_| format!("line {n}: probability {p:?} is not a number"))?;
            if !(size.is_finite() && size >= 0.0) {
                return Err(format!("line {n}: size {s} must be >= 0"));
            }
            if !(0.0..=1.0).contains(&prob) {
                return Err(format!("line {n}: probability {p} must be in [0, 1]"));
            }
            if let Some(&(ps, pp)) = points.last() {
                if size < ps || prob < pp {
                    return Err(format!(
                        "line {n}: not monotone ({size} B at {prob} after {ps} B at {pp}); sizes \
                         and probabilities must not decrease"
                    ));
                }
            }
            points.push((size, prob));
            last_line = n;
        }
        match points.last() {
            None => Err("no points (lines of `size_bytes probability`)".into()),
            Some(&(_, p)) if p != 1.0 => {
                Err(format!("line {last_line}: the CDF ends at {p}; it must reach 1"))
            }
            Some(_) => Ok(Cdf { points }),
        }
    }

    /// Mean size in bytes (linear between points; below the first point's probability, the
    /// first size).
    pub fn mean_bytes(&self) -> f64 {
        let (s0, p0) = self.points[0];
        let mut mean = s0 * p0;
        for w in self.points.windows(2) {
            let ((sa, pa), (sb, pb)) = (w[0], w[1]);
            mean += (pb - pa) * (sa + sb) / 2.0;
        }
        mean
    }

    /// The size at cumulative probability `u` in [0, 1) (at least 1 byte).
    pub fn sample(&self, u: f64) -> u64 {
        let i = self.points.partition_point(|&(_, p)| p <= u);
        let size = if i == 0 {
            self.points[0].0
        } else if i >= self.points.len() {
            self.points[self.points.len() - 1].0
        } else {
            let ((sa, pa), (sb, pb)) = (self.points[i - 1], self.points[i]);
            sa + (sb - sa) * (u - pa) / (pb - pa)
        };
        (size.round() as u64).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cdf_parses_samples_and_has_its_mean() {
        let c = Cdf::parse("# comment\n100 0\n100 0.5\n300 1\n").unwrap();
        // Half at 100 B, half uniform in [100, 300]: mean 0.5·100 + 0.5·200.
        assert!((c.mean_bytes() - 150.0).abs() < 1e-9);
        assert_eq!(c.sample(0.25), 100);
        assert_eq!(c.sample(0.75), 200);
        let n = 100_000;
        let mut rng = crate::rng::Rng::new(1, 1);
        let mean = (0..n).map(|_| c.sample(rng.next_f64()) as f64).sum::<f64>() / n as f64;
        assert!((mean / 150.0 - 1.0).abs() < 0.01, "{mean}");
    }

    #[test]
    fn bad_cdfs_name_the_line() {
        let e = Cdf::parse("100 0.1\n50 0.5\n300 1\n").unwrap_err();
        assert!(e.contains("line 2") && e.contains("not monotone"), "{e}");
        let e = Cdf::parse("100 0.1\n\n300 0.9\n").unwrap_err();
        assert!(e.contains("line 3") && e.contains("must reach 1"), "{e}");
        let e = Cdf::parse("100 x\n").unwrap_err();
        assert!(e.contains("line 1"), "{e}");
    }
}
