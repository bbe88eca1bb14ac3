//! Burst loss: netem's 4-parameter Gilbert–Elliott model (`tc qdisc … netem loss gemodel p r
//! 1-h 1-k`; Gilbert 1960, Elliott 1963). A two-state Markov chain, one step per packet:
//!
//! - p = P(good → bad), r = P(bad → good);
//! - in the bad state a packet is lost with probability 1 − h, in the good state with 1 − k
//!   (h and k are the probabilities of getting through; the scenario writes p, r, h, k).
//!
//! Order of the draws, as Linux's `loss_gilb_ell` in `net/sched/sch_netem.c` does them: the
//! first draw moves the state (good → bad with p, or bad → good with r), the second decides
//! the loss with the probability of the state the packet *found* (the `case` it entered), not
//! the one it left behind. So packet n is lost with the probability of state S(n) and the chain
//! then moves to S(n+1). (iproute2's `q_netem.c` turns the written 1-h into the kernel's h;
//! the kernel compares `prandom_u32() > h` in the bad state and `< 1-k` in the good state.)
//!
//! The chain starts in the good state (netem's `GOOD_STATE` after `tc qdisc add`). Long run:
//! π_bad = p / (p + r), loss = (p(1 − h) + r(1 − k)) / (p + r); bad-state sojourns last 1/r
//! packets on average, so with k = 1 and h = 0 the mean loss burst is 1/r packets.

use super::{check_probability, ParamError};
use crate::Random;

#[derive(Clone, Debug)]
pub struct GilbertElliott {
    p: f64,
    r: f64,
    h: f64,
    k: f64,
    bad: bool,
}

impl GilbertElliott {
    /// The chain with netem's parameters (each in [0, 1]), starting in the good state.
    pub fn new(p: f64, r: f64, h: f64, k: f64) -> Result<GilbertElliott, ParamError> {
        Ok(GilbertElliott {
            p: check_probability("p", p)?,
            r: check_probability("r", r)?,
            h: check_probability("h", h)?,
            k: check_probability("k", k)?,
            bad: false,
        })
    }

    /// Whether the next packet is lost (two draws from `rng`, as netem).
    #[inline]
    pub fn lose(&mut self, rng: &mut dyn Random) -> bool {
        if self.bad {
            if rng.next_f64() < self.r {
                self.bad = false;
            }
            rng.next_f64() >= self.h
        } else {
            if rng.next_f64() < self.p {
                self.bad = true;
            }
            rng.next_f64() < 1.0 - self.k
        }
    }

    /// Whether the chain is in the bad state (the state the next packet will find).
    pub fn is_bad(&self) -> bool {
        self.bad
    }

    /// The long-run loss probability (p(1 − h) + r(1 − k)) / (p + r); with p = r = 0 the chain
    /// stays good: 1 − k.
    pub fn mean_loss(&self) -> f64 {
        let (p, r) = (self.p, self.r);
        if p + r == 0.0 {
            return 1.0 - self.k;
        }
        (p * (1.0 - self.h) + r * (1.0 - self.k)) / (p + r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TestRng;

    const N: usize = 2_000_000;

    #[test]
    fn long_run_loss_matches_the_stationary_formula() {
        let (p, r, h, k) = (0.01, 0.3, 0.5, 0.99);
        let mut ge = GilbertElliott::new(p, r, h, k).unwrap();
        let mut rng = TestRng(1);
        let lost = (0..N).filter(|_| ge.lose(&mut rng)).count() as f64 / N as f64;
        let want = (p * (1.0 - h) + r * (1.0 - k)) / (p + r);
        assert!((want - 0.025806).abs() < 1e-5, "{want}");
        assert!((lost - want).abs() < 0.03 * want, "lost {lost} want {want}");
        assert!((ge.mean_loss() - want).abs() < 1e-12);
    }

    #[test]
    fn simple_gilbert_bursts_last_one_over_r() {
        // k = 1, h = 0: every packet in the bad state is lost, none in the good state; a
        // burst is one bad sojourn: geometric with mean 1/r. Loss fraction p / (p + r).
        let (p, r) = (0.02, 0.25);
        let mut ge = GilbertElliott::new(p, r, 0.0, 1.0).unwrap();
        let mut rng = TestRng(2);
        let (mut lost, mut bursts, mut prev) = (0usize, 0usize, false);
        for _ in 0..N {
            let l = ge.lose(&mut rng);
            lost += l as usize;
            bursts += (l && !prev) as usize;
            prev = l;
        }
        let mean_burst = lost as f64 / bursts as f64;
        assert!((mean_burst - 1.0 / r).abs() < 0.03 / r, "mean burst {mean_burst}");
        let frac = lost as f64 / N as f64;
        assert!((frac - p / (p + r)).abs() < 0.03 * p / (p + r), "loss {frac}");
    }

    #[test]
    fn the_first_packet_after_going_bad_sees_the_good_state_loss() {
        // p = 1: every good packet moves the chain to bad, but is judged by the good state's
        // 1 − k = 0, as netem's loss_gilb_ell does; r = 1 brings it back the same way. So
        // the chain alternates and only the packets that found it bad are lost (1 − h = 1).
        let mut ge = GilbertElliott::new(1.0, 1.0, 0.0, 1.0).unwrap();
        let mut rng = TestRng(3);
        let pattern: Vec<bool> = (0..6).map(|_| ge.lose(&mut rng)).collect();
        assert_eq!(pattern, [false, true, false, true, false, true]);
    }

    #[test]
    fn probabilities_outside_0_1_are_errors() {
        assert_eq!(GilbertElliott::new(0.1, 1.5, 0.0, 1.0).unwrap_err().field, "r");
        assert_eq!(GilbertElliott::new(0.1, 0.5, 0.0, -0.1).unwrap_err().field, "k");
    }
}
