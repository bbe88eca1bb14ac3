//! BBRv2 — placeholder until the algorithm lands; behaves as BBRv1.
use crate::{bbr1::Bbr1, CaState, CcStateSample, CongestionOps, RateSample, TcpCc};
#[derive(Clone, Debug)]
pub struct Bbr2 { inner: Bbr1, many_flows: bool }
impl Bbr2 {
    pub fn new(seed: u64, many_flows: bool) -> Self { Bbr2 { inner: Bbr1::new(seed), many_flows } }
    pub fn name(&self) -> &'static str { if self.many_flows { "bbr2_new" } else { "bbr2" } }
}
impl CongestionOps for Bbr2 {
    fn init(&mut self, tp: &mut TcpCc) { self.inner.init(tp) }
    fn ssthresh(&mut self, tp: &TcpCc) -> u32 { self.inner.ssthresh(tp) }
    fn cong_control(&mut self, tp: &mut TcpCc, rs: &RateSample) { self.inner.cong_control(tp, rs) }
    fn set_state(&mut self, tp: &mut TcpCc, s: CaState) { self.inner.set_state(tp, s) }
    fn undo_cwnd(&mut self, tp: &mut TcpCc) -> u32 { self.inner.undo_cwnd(tp) }
    fn tso_segs(&self, tp: &TcpCc) -> Option<u32> { self.inner.tso_segs(tp) }
    fn sample(&self, tp: &TcpCc) -> CcStateSample { self.inner.sample(tp) }
}
