//! Deterministic random numbers for the whole workspace, in one place.
//!
//! bbrlab runs are reproducible: every random draw comes from a generator seeded by the scenario,
//! never from the OS. Three generators, each for one kind of consumer:
//!
//! - [`SplitMix64`] (Steele, Lea & Flood 2014): one 64-bit word of state, one multiply-xorshift
//!   round per draw. Used where a flow needs a few draws per second (the BBR family's random
//!   PROBE_BW start phase and probe timing) and to seed xoshiro.
//! - [`Xoshiro256`] (xoshiro256**, Blackman & Vigna 2018): 256 bits of state, for the simulator's
//!   per-packet processes (link loss, RED, jitter). Each consumer gets its own stream derived from
//!   the scenario seed and a stream id, so adding a flow does not perturb another link's losses.
//! - [`Lcg64`] (Knuth's MMIX linear congruential generator): the unit-test bottleneck's loss and
//!   CE draws (`testkit`); kept because the unit tests' random streams were written against it.
//!
//! The bit streams are part of bbrlab's results: changing a constant here changes every study.

/// SplitMix64: tiny, seedable, good enough for phase picks and for seeding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// The generator whose first draw mixes `seed + golden ratio`.
    pub const fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, n): multiply-shift of the draw's high 32 bits, as Linux
    /// `get_random_u32_below` / `prandom_u32_max` (no rejection: bias ≤ n / 2^32).
    #[inline]
    pub fn below(&mut self, n: u32) -> u32 {
        (((self.next_u64() >> 32) * n as u64) >> 32) as u32
    }
}

/// xoshiro256**, seeded through SplitMix64.
#[derive(Clone, Debug)]
pub struct Xoshiro256 {
    s: [u64; 4],
}

impl Xoshiro256 {
    /// Stream `stream` of the generator seeded with `seed`.
    pub fn new(seed: u64, stream: u64) -> Xoshiro256 {
        let mut x = SplitMix64::new(seed ^ stream.wrapping_mul(0xD1B5_4A32_D192_ED03));
        let s = [x.next_u64(), x.next_u64(), x.next_u64(), x.next_u64()];
        Xoshiro256 { s }
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform in [0, 1) with 53 random bits.
    #[inline]
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// Knuth's MMIX LCG (multiplier 6364136223846793005, increment 1442695040888963407); the top 53
/// bits of the state give a uniform f64. Weak low bits, so only [`Lcg64::next_f64`] is offered.
#[derive(Clone, Copy, Debug)]
pub struct Lcg64 {
    state: u64,
}

impl Lcg64 {
    pub const fn new(seed: u64) -> Self {
        Lcg64 { state: seed }
    }

    /// Uniform in [0, 1).
    #[inline]
    pub fn next_f64(&mut self) -> f64 {
        self.state = self.state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.state >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_mean_and_bernoulli_rate() {
        let mut r = Xoshiro256::new(42, 7);
        let n = 200_000;
        let mut hits = 0;
        let mut sum = 0.0;
        for _ in 0..n {
            let x = r.next_f64();
            sum += x;
            if x < 0.015 {
                hits += 1;
            }
        }
        let mean = sum / n as f64;
        assert!((mean - 0.5).abs() < 0.005, "mean {mean}");
        // Binomial(n, 0.015): sd = sqrt(n p (1-p)) ≈ 54; accept ±5 sd.
        let expect = n as f64 * 0.015;
        assert!((hits as f64 - expect).abs() < 5.0 * 54.4, "hits {hits}");
    }

    #[test]
    fn streams_differ_and_repeat() {
        let a: Vec<u64> = (0..4)
            .map({
                let mut r = Xoshiro256::new(1, 0);
                move |_| r.next_u64()
            })
            .collect();
        let b: Vec<u64> = (0..4)
            .map({
                let mut r = Xoshiro256::new(1, 1);
                move |_| r.next_u64()
            })
            .collect();
        let a2: Vec<u64> = (0..4)
            .map({
                let mut r = Xoshiro256::new(1, 0);
                move |_| r.next_u64()
            })
            .collect();
        assert_ne!(a, b);
        assert_eq!(a, a2);
    }

    /// The published SplitMix64 reference stream (seed 1234567, Vigna's splitmix64.c): pins the
    /// constants, since BBR's phase picks and every simulator stream depend on them.
    #[test]
    fn splitmix64_matches_the_reference_stream() {
        let mut r = SplitMix64::new(1234567);
        let want = [
            6457827717110365317u64,
            3203168211198807973,
            9817491932198370423,
            4593380528125082431,
            16408922859458223821,
        ];
        for w in want {
            assert_eq!(r.next_u64(), w);
        }
    }

    #[test]
    fn below_is_uniform_and_in_range() {
        let mut r = SplitMix64::new(9);
        let mut seen = [0u32; 7];
        for _ in 0..70_000 {
            let x = r.below(7);
            assert!(x < 7);
            seen[x as usize] += 1;
        }
        // 10 000 expected per value, sd ≈ 93: accept ±5 sd.
        assert!(seen.iter().all(|&n| (n as i64 - 10_000).abs() < 470), "{seen:?}");
        assert_eq!(r.below(1), 0);
    }

    #[test]
    fn lcg_uniform_mean() {
        let mut r = Lcg64::new(1);
        let n = 100_000;
        let mean = (0..n).map(|_| r.next_f64()).sum::<f64>() / n as f64;
        assert!((mean - 0.5).abs() < 0.005, "mean {mean}");
    }
}
