//! DCTCP — placeholder until the algorithm lands; behaves as Reno.
use crate::{reno::Reno, CcStateSample, CongestionOps, TcpCc};
#[derive(Clone, Debug, Default)]
pub struct Dctcp { reno: Reno }
impl Dctcp { pub fn new() -> Self { Dctcp::default() } }
impl CongestionOps for Dctcp {
    fn init(&mut self, tp: &mut TcpCc) { tp.ecn_ok = true; }
    fn ssthresh(&mut self, tp: &TcpCc) -> u32 { self.reno.ssthresh(tp) }
    fn cong_avoid(&mut self, tp: &mut TcpCc, acked: u32) { self.reno.cong_avoid(tp, acked) }
    fn sample(&self, tp: &TcpCc) -> CcStateSample { self.reno.sample(tp) }
}
