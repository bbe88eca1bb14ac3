//! CUBIC (RFC 9438) — placeholder until the algorithm lands; behaves as Reno.
use crate::{reno::Reno, CcStateSample, CongestionOps, TcpCc};
#[derive(Clone, Debug)]
pub struct Cubic { reno: Reno, #[allow(dead_code)] hystart: bool }
impl Cubic { pub fn new(hystart: bool) -> Self { Cubic { reno: Reno::new(), hystart } } }
impl CongestionOps for Cubic {
    fn ssthresh(&mut self, tp: &TcpCc) -> u32 { (tp.snd_cwnd * 7 / 10).max(2) }
    fn cong_avoid(&mut self, tp: &mut TcpCc, acked: u32) { self.reno.cong_avoid(tp, acked) }
    fn sample(&self, tp: &TcpCc) -> CcStateSample { self.reno.sample(tp) }
}
