//! Drop-tail: a finite FIFO buffer. A packet that would wait is dropped when the bytes waiting
//! plus its own exceed the byte limit, or the packets waiting plus one exceed the packet limit
//! (as Linux `bfifo` / `pfifo` count; the packet serializing is not waiting). Either limit may
//! be absent; a buffer with neither is no discipline at all (`DropTail::new` gives `None`).

use super::{Occupancy, QueueDiscipline};

#[derive(Clone, Debug)]
pub(crate) struct DropTail {
    /// Most bytes that may wait (u64::MAX: no byte limit).
    limit_bytes: u64,
    /// Most packets that may wait (u64::MAX: no packet limit).
    limit_pkts: u64,
}

impl DropTail {
    /// A buffer of at most `limit_bytes` and/or `limit_pkts` waiting; `None` if neither is set.
    pub fn new(limit_bytes: Option<u64>, limit_pkts: Option<u64>) -> Option<DropTail> {
        (limit_bytes.is_some() || limit_pkts.is_some()).then(|| DropTail {
            limit_bytes: limit_bytes.unwrap_or(u64::MAX),
            limit_pkts: limit_pkts.unwrap_or(u64::MAX),
        })
    }
}

impl QueueDiscipline for DropTail {
    const ADMITS: bool = true;

    #[inline(always)]
    fn admits(&self, q: Occupancy, wire_bytes: u32) -> bool {
        q.bytes + wire_bytes as u64 <= self.limit_bytes && q.packets < self.limit_pkts
    }

    fn bounds_queue(&self) -> bool {
        true
    }
}
