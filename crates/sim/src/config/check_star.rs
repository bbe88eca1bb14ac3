//! Checks of a star (`topology.rs`): its PFC thresholds, the racks its workers are placed
//! in, and its buffers (each port's, the shared pool's), every error naming one field.

use super::check::{err, Check};
use super::*;

/// PFC thresholds, and the racks the workers are placed in.
pub(super) fn check_star_racks(st: &Star) -> Check {
    if st.pfc.xon_bytes >= st.pfc.xoff_bytes {
        return err(
            "topology.pfc.xon_bytes",
            format!(
                "{} must be smaller than xoff ({})",
                human::size(st.pfc.xon_bytes),
                human::size(st.pfc.xoff_bytes)
            ),
        );
    }
    if let Some(racks) = &st.worker_racks {
        let Some(per_rack) = st.hosts_per_rack else {
            return err(
                "topology.worker_racks",
                "needs topology.hosts_per_rack (the racks it places workers in)",
            );
        };
        if racks.is_empty() {
            return err(
                "topology.worker_racks",
                "is empty; give at least one rack number (0 = the aggregator's rack)",
            );
        }
        if racks.len() > MAX_WORKERS as usize {
            return err(
                "topology.worker_racks",
                format!("has {} entries; at most {MAX_WORKERS} (one per worker)", racks.len()),
            );
        }
        if let Some((r, n)) =
            st.rack_hosts().into_iter().enumerate().find(|&(_, n)| n > per_rack as u64)
        {
            return err(
                "topology.worker_racks",
                format!(
                    "puts {n} hosts in rack {r}{}, more than hosts_per_rack ({per_rack})",
                    if r == 0 { " (the aggregator's, counting it)" } else { "" }
                ),
            );
        }
    }
    Ok(())
}

/// The lossless ports' buffers and the shared pool against PFC's thresholds.
pub(super) fn check_star_buffers(st: &Star) -> Check {
    if st.lossless && st.pfc.accounting == PfcAccounting::Egress && st.buffer_bytes.is_none() {
        // With egress accounting a lossless port has no limit: only PAUSE holds it back.
        let ignored = if !st.pfc.nic_honours_pause {
            Some("topology.pfc.nic_honours_pause")
        } else if !st.pfc.switches_honour_pause && st.racks() > 1 {
            Some("topology.pfc.switches_honour_pause")
        } else {
            None
        };
        if let Some(field) = ignored {
            return err(
                    "topology.buffer_bytes",
                    format!("is needed with {field} = false and egress accounting: a link that ignores PAUSE fills the port until it drops there"),
                );
        }
    }
    if st.racks() > 1 && st.shared_buffer_bytes.is_some() {
        return err(
            "topology.shared_buffer_bytes",
            "is one switch's pool; with more than one rack leave it out",
        );
    }
    check_alpha_has_pool("topology", st.shared_buffer_bytes, st.shared_buffer_alpha)?;
    if !st.lossless {
        return Ok(());
    }
    // The sizes a lossless star needs at least XOFF of: the shared pool (with ingress
    // accounting) and each port's buffer.
    let ingress_pool =
        st.shared_buffer_bytes.filter(|_| st.pfc.accounting == PfcAccounting::Ingress);
    for (key, size, why) in [
        ("topology.shared_buffer_bytes", ingress_pool, "no ingress port could reach XOFF"),
        ("topology.buffer_bytes", st.buffer_bytes, "a lossless port needs room above XOFF"),
    ] {
        if let Some(bytes) = size.filter(|&b| b < st.pfc.xoff_bytes) {
            return err(
                key,
                format!(
                    "{} is below pfc.xoff ({}); {why}",
                    human::size(bytes),
                    human::size(st.pfc.xoff_bytes)
                ),
            );
        }
    }
    Ok(())
}

/// The `shared_buffer!` keys of a star (`prefix` "topology") or a graph's fabric
/// ("topology.fabric"): the dynamic threshold divides the shared pool, so it needs one.
pub(super) fn check_alpha_has_pool(prefix: &str, pool: Option<u64>, alpha: Option<f64>) -> Check {
    if alpha.is_some() && pool.is_none() {
        return err(
            format!("{prefix}.shared_buffer_alpha"),
            format!("needs {prefix}.shared_buffer (the pool the dynamic threshold divides)"),
        );
    }
    Ok(())
}
