//! The simulator's random numbers: xoshiro256** seeded through SplitMix64, from the workspace's
//! one RNG module (`cc::rng`, where the generators and their tests live). Each consumer (a link's
//! loss process, an algorithm) gets its own stream derived from the scenario seed and a stream id,
//! so adding a flow does not perturb another link's losses.

pub use cc::rng::Xoshiro256 as Rng;
