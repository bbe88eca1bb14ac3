//! BQL — placeholder until the algorithm lands; behaves as BBRv1.
use crate::{bbr1::Bbr1, CaState, CcStateSample, CongestionOps, RateSample, TcpCc};
#[derive(Clone, Debug)]
pub struct Bql { inner: Bbr1 }
impl Default for Bql { fn default() -> Self { Bql { inner: Bbr1::new(0) } } }
impl Bql { pub fn new() -> Self { Bql::default() } }
impl CongestionOps for Bql {
    fn init(&mut self, tp: &mut TcpCc) { self.inner.init(tp) }
    fn ssthresh(&mut self, tp: &TcpCc) -> u32 { self.inner.ssthresh(tp) }
    fn cong_control(&mut self, tp: &mut TcpCc, rs: &RateSample) { self.inner.cong_control(tp, rs) }
    fn set_state(&mut self, tp: &mut TcpCc, s: CaState) { self.inner.set_state(tp, s) }
    fn undo_cwnd(&mut self, tp: &mut TcpCc) -> u32 { self.inner.undo_cwnd(tp) }
    fn sample(&self, tp: &TcpCc) -> CcStateSample { self.inner.sample(tp) }
}
