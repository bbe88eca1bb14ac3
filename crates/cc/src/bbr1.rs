//! BBRv1 — placeholder until the algorithm lands; behaves as Reno.
use crate::{reno::Reno, CcStateSample, CongestionOps, RateSample, TcpCc};
#[derive(Clone, Debug)]
pub struct Bbr1 { reno: Reno }
impl Bbr1 { pub fn new(_seed: u64) -> Self { Bbr1 { reno: Reno::new() } } }
impl CongestionOps for Bbr1 {
    fn init(&mut self, tp: &mut TcpCc) { tp.pacing_enabled = true; }
    fn ssthresh(&mut self, tp: &TcpCc) -> u32 { self.reno.ssthresh(tp) }
    fn cong_control(&mut self, tp: &mut TcpCc, rs: &RateSample) {
        if tp.ca_state < crate::CaState::Recovery { self.reno.cong_avoid(tp, rs.acked_sacked); }
        let srtt = tp.srtt_ns.max(1_000_000);
        tp.pacing_rate_bytes_per_s = (tp.snd_cwnd as u64 * tp.mss as u64 * 1_000_000_000 / srtt) * 5 / 4;
    }
    fn sample(&self, tp: &TcpCc) -> CcStateSample { self.reno.sample(tp) }
}
