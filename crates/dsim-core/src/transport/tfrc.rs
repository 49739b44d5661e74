//! TCP-Friendly Rate Control (TFRC), RFC 5348.
//!
//! This file holds the throughput equation (section 3.1).

/// The TCP throughput equation of RFC 5348 section 3.1 (Padhye et al.), in bytes/s:
///
/// ```text
/// X_Bps = s / (R sqrt(2 b p / 3) + t_RTO (3 sqrt(3 b p / 8)) p (1 + 32 p^2))
/// ```
///
/// s: segment size (bytes); R: round-trip time (s); p: loss event rate (0, 1];
/// t_RTO: retransmission timeout (s; RFC 5348 recommends 4 R); b: packets acknowledged by
/// one TCP acknowledgement (RFC 5348 recommends 1).
pub fn throughput_equation(s: f64, r: f64, p: f64, t_rto: f64, b: f64) -> f64 {
    let denom = r * (2.0 * b * p / 3.0).sqrt() + t_rto * (3.0 * (3.0 * b * p / 8.0).sqrt()) * p * (1.0 + 32.0 * p * p);
    s / denom
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equation_by_hand() {
        // s = 1000 B, R = 0.1 s, p = 0.01, t_RTO = 0.4 s, b = 1:
        // R sqrt(2p/3) = 0.1 * 0.0816497 = 0.00816497
        // t_RTO 3 sqrt(3p/8) p (1 + 32p^2) = 0.4 * 3 * 0.0612372 * 0.01 * 1.0032 = 0.000737194
        // X = 1000 / 0.00890216 = 112332.2 B/s
        let x = throughput_equation(1000.0, 0.1, 0.01, 0.4, 1.0);
        assert!((x - 112_332.2).abs() < 0.5, "{x}");
        // Monotone: more loss or more delay, less rate.
        assert!(throughput_equation(1000.0, 0.1, 0.02, 0.4, 1.0) < x);
        assert!(throughput_equation(1000.0, 0.2, 0.01, 0.8, 1.0) < x);
    }
}
