//! Applications the core expands into transfers at run time.
//!
//! `query` (partition/aggregate, seed 000 §4.1 and its `aggregator query` mode): the aggregator
//! asks workers 0..n−1 for `bytes / n` bytes each (integer division, as the seed's code). Every
//! sub-query is a new connection (a new flow: fresh congestion state, initial window), whose
//! data starts when the request reaches the worker: after `jitter` (uniform in [0, jitter_ns];
//! thread start-up in the seed's thread-per-connection aggregator), the request's one-way trip
//! (propagation and serialization of a small request packet at every hop), and with
//! `handshake = true` one more RTT for SYN/SYN-ACK. The seed's aggregator accepted the
//! connections before starting its clock, so the default leaves the handshake out of the
//! response time (its RTT still seeds the sender's estimator). The response time runs from
//! the query's start until the aggregator holds every byte of all n responses (receiver side,
//! as the seed's `recv` loop). The next query starts `gap_ns` after the previous one ended.
//!
//! One row per query goes into the `events` table; each transfer is a row of the flows table
//! (columns `app`, `query`, `rx_done_s`).

use super::*;
use metrics::{Column, Table};

/// A request packet on the wire (e.g. "query 52428": TCP/IP + Ethernet + a few bytes).
const REQUEST_WIRE_BYTES: u128 = 100;

pub(crate) struct QueryApp {
    pub cfg: config::App,
    rng: Rng,
    next_query: u32,
    pending: u32,
    query_start: Nanos,
}

impl QueryApp {
    pub(crate) fn new(cfg: config::App, seed: u64, i: usize) -> QueryApp {
        QueryApp { cfg, rng: Rng::new(seed, 7_000 + i as u64), next_query: 0, pending: 0, query_start: 0 }
    }
}

/// Completed queries.
#[derive(Default)]
pub(crate) struct AppEvents {
    app: Vec<i32>,
    query: Vec<i32>,
    n: Vec<i32>,
    bytes: Vec<i64>,
    start_s: Vec<f64>,
    end_s: Vec<f64>,
    response_time_s: Vec<f64>,
}

impl AppEvents {
    pub(crate) fn table(&self) -> Table {
        let mut t = Table::default();
        t.push("app", Column::I32(self.app.clone()));
        t.push("query", Column::I32(self.query.clone()));
        t.push("n", Column::I32(self.n.clone()));
        t.push("bytes", Column::I64(self.bytes.clone()));
        t.push("start_s", Column::F64(self.start_s.clone()));
        t.push("end_s", Column::F64(self.end_s.clone()));
        t.push("response_time_s", Column::F64(self.response_time_s.clone()));
        t
    }
}

impl Simulation {
    /// Start query `next_query` of app `ai` now.
    pub(crate) fn on_app_query(&mut self, ai: usize) {
        let now = self.now;
        let Fabric::Star(star) = &self.fabric else { unreachable!("validated: query apps need a star") };
        let app = &mut self.apps[ai];
        let n = app.cfg.workers as usize;
        let per_worker = app.cfg.bytes / n as u64;
        let q = app.next_query;
        app.query_start = now;
        app.pending = n as u32;
        let mut starts = Vec::with_capacity(n);
        for w in 0..n {
            let (dp, ap, base_rtt) = star.worker_paths(w);
            let jitter = if app.cfg.jitter_ns > 0 { app.rng.next_u64() % (app.cfg.jitter_ns + 1) } else { 0 };
            // The request's one-way trip over the ACK path (aggregator → switch → worker).
            let req: Nanos = ap
                .hops()
                .iter()
                .map(|&l| {
                    let link = &self.links[l as usize];
                    link.delay_ns + (REQUEST_WIRE_BYTES * 8 * 1_000_000_000 / link.rate_bps as u128) as Nanos
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
            self.flows.push(flow);
            self.push(t, EvKind::FlowStart, idx as u32);
        }
    }

    /// Flow `fi` (an app transfer) has delivered its last byte to the aggregator.
    pub(crate) fn on_transfer_done(&mut self, fi: usize) {
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
        let ev = &mut self.app_events;
        ev.app.push(ai as i32);
        ev.query.push(q as i32);
        ev.n.push(app.cfg.workers as i32);
        ev.bytes.push(app.cfg.bytes as i64);
        ev.start_s.push(app.query_start as f64 / 1e9);
        ev.end_s.push(now as f64 / 1e9);
        ev.response_time_s.push((now - app.query_start) as f64 / 1e9);
        app.next_query += 1;
        if app.next_query < app.cfg.repetitions {
            let t = now + app.cfg.gap_ns;
            if t < self.end_ns {
                self.push(t, EvKind::AppQuery, ai as u32);
            }
        }
    }

    /// `flows` columns of application transfers: app and query index (−1 for configured
    /// flows) and when the receiver held the last byte (`rx_done_s`, NaN if not).
    pub(crate) fn push_app_columns(&self, t: &mut Table) {
        let n = self.flows.len();
        let (mut app, mut query, mut done) = (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
        for f in &self.flows {
            app.push(f.app.map_or(-1, |a| a.0 as i32));
            query.push(f.app.map_or(-1, |a| a.1 as i32));
            done.push(f.rx_done_ns.map_or(f64::NAN, |t| t as f64 / 1e9));
        }
        t.push("app", Column::I32(app));
        t.push("query", Column::I32(query));
        t.push("rx_done_s", Column::F64(done));
    }

    /// Queries completed so far (all apps).
    pub fn queries_completed(&self) -> usize {
        self.app_events.app.len()
    }
}
