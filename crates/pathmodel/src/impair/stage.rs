//! The one API of the timing stages after a link's transmitter ([`Jitter`], [`Reorderer`],
//! [`Aggregator`]), so a link can hold any chain of them: packets go in in arrival order
//! (`push`), the caller comes back at `next_due` (the simulator schedules the link's next
//! event there; the emulator takes the minimum over its stages as its poll deadline), and
//! `pop_due` hands out the released packets in order, each with its release time, which is
//! the arrival time at the next stage (or at the propagation pipe).

use crate::{Nanos, Random};
use std::collections::VecDeque;

pub trait Stage<P> {
    /// A packet arriving at `now` (nondecreasing across calls).
    fn push(&mut self, now: Nanos, p: P, rng: &mut dyn Random);
    /// When the next packet is released (None: the stage is empty).
    fn next_due(&self) -> Option<Nanos>;
    /// The next packet released by `now`, with its release time (≤ now).
    fn pop_due(&mut self, now: Nanos) -> Option<(Nanos, P)>;
    /// Packets in the stage.
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The next of `ready` (release times nondecreasing) released by `now`, with its release time:
/// the `pop_due` of the stages that keep a queue of released packets (`released_via_ready!`).
#[inline]
pub(crate) fn pop_released<P>(ready: &mut VecDeque<(Nanos, P)>, now: Nanos) -> Option<(Nanos, P)> {
    if ready.front()?.0 <= now {
        ready.pop_front()
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::impair::{Aggregator, Jitter, Reorderer};
    use crate::{Ecn, TestPacket, TestRng, MS};

    /// Drive a chain as an event loop would: wake at the earliest `next_due` of any stage and
    /// move every released packet on to the next stage at its release time.
    fn run_chain(chain: &mut [Box<dyn Stage<TestPacket>>], arrivals: &[(Nanos, TestPacket)]) {
        let mut rng = TestRng(5);
        let mut out: Vec<(Nanos, u64)> = vec![];
        let mut next_arrival = 0;
        loop {
            let due = chain.iter().filter_map(|s| s.next_due()).min();
            let arrival = arrivals.get(next_arrival).map(|a| a.0);
            let now = match (due, arrival) {
                (None, None) => break,
                (d, a) => d.unwrap_or(u64::MAX).min(a.unwrap_or(u64::MAX)),
            };
            if arrival == Some(now) {
                chain[0].push(now, arrivals[next_arrival].1.clone(), &mut rng);
                next_arrival += 1;
            }
            for i in 0..chain.len() {
                while let Some((t, p)) = chain[i].pop_due(now) {
                    assert!(t <= now);
                    match chain.get_mut(i + 1) {
                        Some(next) => next.push(t, p, &mut rng),
                        None => out.push((t, p.seq)),
                    }
                }
            }
        }
        // Every packet comes out once; with FIFO jitter and no reordering, in order, and the
        // aggregator's batches of 4 × 1000 bytes leave together.
        assert_eq!(out.len(), arrivals.len());
        assert!(out.windows(2).all(|w| w[0].1 < w[1].1 && w[0].0 <= w[1].0));
        for batch in out.chunks(4) {
            assert!(batch.iter().all(|x| x.0 == batch[0].0), "{batch:?}");
        }
        assert!(out.chunks(4).zip(out.chunks(4).skip(1)).all(|(a, b)| a[0].0 < b[0].0));
    }

    #[test]
    fn a_chain_of_stages_conserves_packets_and_order() {
        let chain: Vec<Box<dyn Stage<TestPacket>>> = vec![
            Box::new(Jitter::new(MS, false)),
            Box::new(Reorderer::new(0.0, 3, MS).unwrap()),
            Box::new(Aggregator::new(Some(4000), 50 * MS).unwrap()),
        ];
        let arrivals: Vec<(Nanos, TestPacket)> = (0..400)
            .map(|seq| {
                let p = TestPacket { bytes: 1000, ecn: Ecn::NotEct, flow: 0, seq };
                (seq * 300_000, p)
            })
            .collect();
        run_chain(&mut { chain }, &arrivals);
    }
}
