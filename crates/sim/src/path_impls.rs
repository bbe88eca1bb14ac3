//! The simulator's packet and random stream as the path model (`pathmodel`) sees them. Both
//! types and both traits are foreign to this crate, so the impls are on two local wrappers:
//! [`PathPkt`] (a packet inside the path model's stages) and [`LinkRandom`] (a link's stream
//! lent to a mechanism's draw). The flow key is the flow index and the direction, which is
//! what a 5-tuple hash tells apart in a dumbbell. The packet carries ECT as one bit (classic
//! ECT(0)): the simulator's senders mark no ECT(1).

use crate::rng::Rng;
use pathmodel::{Ecn, PathPacket, Random};
use transport::Packet;

/// A simulator packet inside the path model's stages.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PathPkt(pub(crate) Packet);

impl PathPacket for PathPkt {
    fn wire_bytes(&self) -> u32 {
        self.0.wire_bytes
    }
    fn ecn(&self) -> Ecn {
        match (self.0.ect, self.0.ce) {
            (_, true) => Ecn::Ce,
            (true, false) => Ecn::Ect0,
            (false, false) => Ecn::NotEct,
        }
    }
    fn set_ce(&mut self) {
        self.0.ce = true;
    }
    fn flow_key(&self) -> u64 {
        ((self.0.flow as u64) << 1) | self.0.is_data as u64
    }
}

/// A link's random stream, lent to the path model.
pub(crate) struct LinkRandom<'a>(pub(crate) &'a mut Rng);

impl Random for LinkRandom<'_> {
    fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }
}
