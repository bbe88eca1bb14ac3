//! Deterministic random numbers: xoshiro256** seeded through SplitMix64 (Blackman & Vigna).
//! Each consumer (a link's loss process, an algorithm) gets its own stream derived from the
//! scenario seed and a stream id, so adding a flow does not perturb another link's losses.

#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

fn splitmix64(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Rng {
    /// Stream `stream` of the generator seeded with `seed`.
    pub fn new(seed: u64, stream: u64) -> Rng {
        let mut x = seed ^ stream.wrapping_mul(0xD1B5_4A32_D192_ED03);
        let s = [splitmix64(&mut x), splitmix64(&mut x), splitmix64(&mut x), splitmix64(&mut x)];
        Rng { s }
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

    /// Uniform in [0, 1).
    #[inline]
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_mean_and_bernoulli_rate() {
        let mut r = Rng::new(42, 7);
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
        let a: Vec<u64> = (0..4).map({ let mut r = Rng::new(1, 0); move |_| r.next_u64() }).collect();
        let b: Vec<u64> = (0..4).map({ let mut r = Rng::new(1, 1); move |_| r.next_u64() }).collect();
        let a2: Vec<u64> = (0..4).map({ let mut r = Rng::new(1, 0); move |_| r.next_u64() }).collect();
        assert_ne!(a, b);
        assert_eq!(a, a2);
    }
}
