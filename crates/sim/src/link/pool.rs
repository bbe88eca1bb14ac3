//! A switch's shared buffer: the output ports' queues draw on one pool of bytes. A port that is
//! a member (`Link::in_pool`) admits a packet only if it fits in the pool and, with a dynamic
//! threshold, its queue is below alpha × the free pool ("region usage < alpha × free buffer",
//! as Mellanox states the rule; Choudhury and Hahne, "Dynamic queue length thresholds for
//! shared-memory packet switches", IEEE/ACM ToN 1998). With PFC's ingress accounting the
//! ingress ports' usage below XOFF is what the pool holds (headroom is outside it; `pfc.rs`).

/// The pool's state.
#[derive(Clone, Debug)]
pub(crate) struct SharedPool {
    /// Bytes queued in the pool.
    pub bytes: u64,
    /// Its size (u64::MAX: no pool).
    pub limit: u64,
    /// The dynamic threshold (alpha), if any.
    pub alpha: Option<f64>,
}

impl SharedPool {
    pub fn new(limit: u64, alpha: Option<f64>) -> SharedPool {
        SharedPool { bytes: 0, limit, alpha }
    }

    /// Whether a packet of `wire` bytes may join a member queue holding `q_bytes`.
    #[inline]
    pub fn admits(&self, q_bytes: u64, wire: u32) -> bool {
        if self.bytes + wire as u64 > self.limit {
            return false;
        }
        self.alpha.is_none_or(|a| (q_bytes as f64) < a * (self.limit - self.bytes) as f64)
    }
}
