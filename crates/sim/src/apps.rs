//! Applications the core expands into transfers at run time.
//!
//! `query` (partition/aggregate, the Waterloo DC study's §4.1 and its `aggregator query` mode): the
//! aggregator asks workers 0..n−1 for `bytes / n` bytes each (integer division, as the study's
//! code). Every sub-query is a new connection (a new flow: fresh congestion state, initial window),
//! whose data starts when the request reaches the worker: after `jitter` (uniform in [0,
//! jitter_ns]; thread start-up in the study's thread-per-connection aggregator), the request's
//! one-way trip (propagation and serialization of a small request packet at every hop), and with
//! `handshake = true` one more RTT for SYN/SYN-ACK. The study's aggregator accepted the
//! connections before starting its clock, so the default leaves the handshake out of the
//! response time (its RTT still seeds the sender's estimator). The response time runs from
//! the query's start until the aggregator holds every byte of all n responses (receiver side,
//! as the study's `recv` loop). The next query starts `gap_ns` after the previous one ended.
//!
//! One row per query goes into the `events` table; each transfer is a row of the flows table
//! (columns `app`, `query`, `rx_done_s`).

use crate::rng::Rng;
use crate::topology::Fabric;
use crate::{config, metrics, EvKind, Simulation};
use cc::Nanos;

/// A request packet on the wire (e.g. "query 52428": TCP/IP + Ethernet + a few bytes).
const REQUEST_WIRE_BYTES: u128 = 100;

pub(crate) struct QueryApp {
    pub cfg: config::QueryApp,
    rng: Rng,
    next_query: u32,
    pending: u32,
    query_start: Nanos,
}

impl QueryApp {
    pub(crate) fn new(cfg: config::QueryApp, seed: u64, i: usize) -> QueryApp {
        QueryApp {
            cfg,
            rng: Rng::new(seed, 7_000 + i as u64),
            next_query: 0,
            pending: 0,
            query_start: 0,
        }
    }
}

/// Completed queries.
pub(crate) type AppEvents = metrics::QueryEventCols;

impl Simulation {
    /// Start query `next_query` of app `ai` now.
    #[inline(never)]
    pub(crate) fn on_app_query(&mut self, ai: usize) {
        let now = self.now;
        let Fabric::Star(star) = &self.fabric else {
            unreachable!("validated: query apps need a star")
        };
        let app = &mut self.apps[ai];
        let n = app.cfg.workers as usize;
        let per_worker = app.cfg.size_bytes / n as u64;
        let q = app.next_query;
        app.query_start = now;
        app.pending = n as u32;
        let mut starts = Vec::with_capacity(n);
        for w in 0..n {
            let (dp, ap, base_rtt) = star.worker_paths(w);
            let jitter = if app.cfg.jitter_ns > 0 {
                app.rng.next_u64() % (app.cfg.jitter_ns + 1)
            } else {
                0
            };
            // The request's one-way trip over the ACK path (aggregator → switch → worker).
            let req: Nanos = ap
                .hops()
                .iter()
                .map(|&l| {
                    let link = &self.links[l as usize];
                    link.delay_ns
                        + (REQUEST_WIRE_BYTES * 8 * 1_000_000_000 / link.rate_bps as u128) as Nanos
                })
                .sum();
            let hs = if app.cfg.handshake { 2 * req } else { 0 };
            starts.push((w, dp, ap, base_rtt, now + jitter + hs + req));
        }
        let tmpl = app.cfg.flow.clone();
        for (w, dp, ap, base_rtt, t) in starts {
            let mut f = tmpl.clone();
            f.bytes = Some(per_worker);
            f.start_ns = t;
            f.stop_ns = None;
            f.sender = Some(w as u32);
            let idx = self.flows.len();
            let mut flow = Self::new_flow(self.cfg.seed, &f, idx, dp, ap, base_rtt, None);
            flow.app = Some((ai as u32, q));
            flow.sampled = false;
            if let Some(hm) = self.hosts.as_mut() {
                flow.tx_core = hm.core_for(flow.data_path.first(), true, idx);
                flow.rx_core = hm.core_for(flow.ack_path.first(), false, idx);
            }
            self.flows.push(flow);
            self.push(t, EvKind::FlowStart, idx as u32);
        }
    }

    /// Flow `fi` (an app transfer) has delivered its last byte to the aggregator.
    pub(crate) fn on_transfer_done(&mut self, fi: usize) {
        if self.flows[fi].workload != crate::arrivals::NOT_WORKLOAD {
            return self.workload_flow_done(fi);
        }
        let now = self.now;
        let Some((ai, q)) = self.flows[fi].app else { return };
        let app = &mut self.apps[ai as usize];
        if q != app.next_query || app.pending == 0 {
            return;
        }
        app.pending -= 1;
        if app.pending > 0 {
            return;
        }
        self.app_events.push(metrics::QueryEventRow {
            app: ai as i32,
            query: q as i32,
            n: app.cfg.workers as i32,
            bytes: app.cfg.size_bytes as i64,
            start_s: app.query_start as f64 / 1e9,
            end_s: now as f64 / 1e9,
            response_time_s: (now - app.query_start) as f64 / 1e9,
        });
        app.next_query += 1;
        if app.next_query < app.cfg.repetitions {
            let t = now + app.cfg.gap_ns;
            if t < self.end_ns {
                self.push(t, EvKind::AppQuery, ai);
            }
        }
    }

    /// Queries completed so far (all apps).
    pub fn queries_completed(&self) -> usize {
        self.app_events.app.len()
    }
}
