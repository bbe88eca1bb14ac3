//! Windowed min/max filters.
//!
//! Kathleen Nichols' algorithm as used by Linux `lib/win_minmax.c` and the BBR draft
//! (§"Windowed Max-Filter"): keep the best, second-best and third-best samples from
//! successive sub-windows, so the running extreme over a sliding window costs O(1) per update and
//! three words of memory. Time may be nanoseconds or round counts — the filter does not care.
//!
//! Whether it keeps the max or the min is a const parameter ([`MaxFilter`], [`MinFilter`]), not
//! a runtime flag: the transport updates its min_rtt filter twice per ACK and BBR its bandwidth
//! filter once, and each comparison then compiles to one instruction instead of a branch on the
//! flag around two.

#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Sample {
    t: u64,
    v: u64,
}

/// Running max (`IS_MAX`) or min of `v` over the last `win` units of `t`.
#[derive(Clone, Debug, PartialEq)]
pub struct WindowedFilter<const IS_MAX: bool> {
    s: [Sample; 3],
}

/// Running maximum (BBR's bandwidth and extra-ACKed filters).
pub type MaxFilter = WindowedFilter<true>;
/// Running minimum (the transport's min_rtt).
pub type MinFilter = WindowedFilter<false>;

impl MaxFilter {
    pub fn new_max() -> Self {
        WindowedFilter { s: [Sample::default(); 3] }
    }
}

impl MinFilter {
    pub fn new_min() -> Self {
        WindowedFilter { s: [Sample { t: 0, v: u64::MAX }; 3] }
    }
}

impl<const IS_MAX: bool> WindowedFilter<IS_MAX> {
    /// Current extreme.
    #[inline]
    pub fn get(&self) -> u64 {
        self.s[0].v
    }

    /// Forget everything and start over with one sample.
    #[inline]
    pub fn reset(&mut self, t: u64, v: u64) {
        self.s = [Sample { t, v }; 3];
    }

    #[inline(always)]
    fn better(a: u64, b: u64) -> bool {
        if IS_MAX {
            a >= b
        } else {
            a <= b
        }
    }

    /// Add a measurement `v` taken at `t`; returns the windowed extreme.
    #[inline]
    pub fn update(&mut self, win: u64, t: u64, v: u64) -> u64 {
        let val = Sample { t, v };
        // A new best, or nothing left in the window: restart.
        if Self::better(v, self.s[0].v) || t.saturating_sub(self.s[2].t) > win {
            self.reset(t, v);
            return v;
        }
        if Self::better(v, self.s[1].v) {
            self.s[1] = val;
            self.s[2] = val;
        } else if Self::better(v, self.s[2].v) {
            self.s[2] = val;
        }
        self.subwin_update(win, val)
    }

    /// Age out the best samples as they fall out of their sub-windows.
    #[inline]
    fn subwin_update(&mut self, win: u64, val: Sample) -> u64 {
        let dt = val.t.saturating_sub(self.s[0].t);
        if dt > win {
            // The best has expired: promote second and third, take the new sample as third.
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = val;
            if val.t.saturating_sub(self.s[0].t) > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = val;
            }
        } else if self.s[1].t == self.s[0].t && dt > win / 4 {
            // A quarter of the window passed without a second choice: take one.
            self.s[1] = val;
            self.s[2] = val;
        } else if self.s[2].t == self.s[1].t && dt > win / 2 {
            // Half the window passed without a third choice: take one.
            self.s[2] = val;
        }
        self.s[0].v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_filter_expires_old_peak() {
        let mut f = MaxFilter::new_max();
        f.update(10, 0, 100);
        for t in 1..=10 {
            assert_eq!(f.update(10, t, 50), 100, "peak held inside window at t={t}");
        }
        // Past the window the peak must be gone and the next best returned.
        let v = f.update(10, 12, 50);
        assert_eq!(v, 50);
    }

    #[test]
    fn min_filter_tracks_minimum_in_window() {
        let mut f = MinFilter::new_min();
        let xs = [30u64, 20, 25, 40, 35, 50, 60, 70, 80, 90, 100, 110, 120];
        for (t, &x) in xs.iter().enumerate() {
            let got = f.update(5, t as u64, x);
            // Nichols' filter keeps only sub-window candidates, so it may answer with a sample a
            // little worse than the exact windowed minimum; it must answer with a real sample that
            // is no worse than the newest one and no older than 1.5 windows.
            assert!(got <= x, "t={t} got {got} worse than newest {x}");
            let lo = t.saturating_sub(5 + 5 / 2 + 1);
            assert!(xs[lo..=t].contains(&got), "t={t} got {got} not a sample of the recent window");
        }
    }
}
