//! BBRv3 — placeholder until the algorithm lands; behaves as BBRv1.
use crate::{bbr1::Bbr1, CaState, CcStateSample, CongestionOps, RateSample, TcpCc};
#[derive(Clone, Debug)]
pub struct Bbr3 { inner: Bbr1, variant: Variant }
/// Constants of draft-ietf-ccwg-bbr or of Linux v3 where they differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant { Draft, Linux }
impl Bbr3 {
    pub fn new(seed: u64, variant: Variant) -> Self { Bbr3 { inner: Bbr1::new(seed), variant } }
    pub fn name(&self) -> &'static str { if self.variant == Variant::Linux { "bbr3_linux" } else { "bbr3" } }
}
impl CongestionOps for Bbr3 {
    fn init(&mut self, tp: &mut TcpCc) { self.inner.init(tp) }
    fn ssthresh(&mut self, tp: &TcpCc) -> u32 { self.inner.ssthresh(tp) }
    fn cong_control(&mut self, tp: &mut TcpCc, rs: &RateSample) { self.inner.cong_control(tp, rs) }
    fn set_state(&mut self, tp: &mut TcpCc, s: CaState) { self.inner.set_state(tp, s) }
    fn undo_cwnd(&mut self, tp: &mut TcpCc) -> u32 { self.inner.undo_cwnd(tp) }
    fn tso_segs(&self, tp: &TcpCc) -> Option<u32> { self.inner.tso_segs(tp) }
    fn sample(&self, tp: &TcpCc) -> CcStateSample { self.inner.sample(tp) }
}
