//! Step ECN marking on the instantaneous queue, DCTCP's switch rule (Alizadeh et al., "Data
//! Center TCP", SIGCOMM 2010, §3.1; RFC 8257 §3.1): an ECN-capable packet that arrives when
//! more than K is waiting gets CE. K in bytes and/or packets (either exceeded marks); the packet
//! serializing does not count. Only packets that will wait are marked (one that finds the link
//! idle found no queue), and a packet already marked upstream is not counted again.

use super::{Occupancy, QueueDiscipline, Verdict};
use transport::{Ecn, Packet};

#[derive(Clone, Debug)]
pub(crate) struct StepEcn {
    k_bytes: Option<u64>,
    k_pkts: Option<u64>,
}

impl StepEcn {
    /// Marking above `k_bytes` and/or `k_pkts` waiting; `None` if neither is set.
    pub fn new(k_bytes: Option<u64>, k_pkts: Option<u64>) -> Option<StepEcn> {
        (k_bytes.is_some() || k_pkts.is_some()).then_some(StepEcn { k_bytes, k_pkts })
    }
}

impl QueueDiscipline for StepEcn {
    const ON_ENQUEUE: bool = true;

    #[inline(always)]
    fn on_enqueue(&mut self, q: Occupancy, p: &Packet) -> Verdict {
        if matches!(p.ecn, Ecn::Ect0 | Ecn::Ect1) {
            let over_bytes = self.k_bytes.is_some_and(|k| q.bytes > k);
            let over_pkts = self.k_pkts.is_some_and(|k| q.packets > k);
            if over_bytes || over_pkts {
                return Verdict::Mark;
            }
        }
        Verdict::Accept
    }
}
