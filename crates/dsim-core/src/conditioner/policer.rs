//! Policers: blocks whose out-of-profile action drops (or demotes) packets.
//!
//! A policer is a block with a meter and a `drop` (or `demote`) action for the colours out
//! of profile; dsim needs no separate mechanism for it. Two presets come from the
//! documents:
//!
//! - The aggregate policer of draft-ibanez-diffserv-assured-eval (seed 002) section 2.2
//!   and appendix: at a router, a token bucket on the aggregate of IN-marked packets; "if
//!   the target rate is exceeded, the packets arriving with marked IN get remarked
//!   (demoted) to OUT before being forwarded". In a scenario: match the IN codepoint(s),
//!   `meter = token_bucket`, `red = { demote = OUT }`. Demotions are counted per block.
//!
//! - The EF edge policer of RFC 2598 section 3: "the edge of a DS domain MUST strictly
//!   police all EF marked packets to a rate negotiated with the adjacent upstream domain
//!   ... Packets in excess of the negotiated rate MUST be dropped. If two adjacent domains
//!   have not negotiated an EF rate, the downstream domain MUST use 0 as the rate (i.e.,
//!   drop all EF marked packets)", and these drops "SHOULD be noted ... as possible
//!   security violations or serious misconfiguration": [`ef_policer`] meters EF packets
//!   with a token bucket of the negotiated rate and burst and drops the red ones with
//!   cause `security`. With rate 0 the burst is 0 as well, so every EF packet is dropped.

use serde::{Deserialize, Serialize};

use super::marker::Action;
use super::token_bucket::TokenBucket;
use super::{Match, Meter};
use crate::packet::Dscp;
use crate::params::{ConfigError, KeyPath, Params};
use crate::stats::DropCause;
use crate::time::{Bytes, Rate};

/// `ef_policer = { rate, burst }`: RFC 2598 section 3's EF edge policer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, Params)]
#[serde(deny_unknown_fields)]
#[param(document = "RFC 2598")]
pub struct EfPolicerSpec {
    /// The negotiated EF rate; 0 (the default) when none was negotiated.
    #[serde(default)]
    #[param(section = "3")]
    pub rate: Rate,
    /// Burst allowance (bucket depth); must be 0 when the rate is 0.
    #[serde(default)]
    #[param(section = "3")]
    pub burst: Bytes,
}

impl EfPolicerSpec {
    /// The policer's block parts: its match, meter and actions per colour.
    pub fn parts(&self, path: &KeyPath) -> Result<(Match, Meter, [Action; 3]), ConfigError> {
        self.check(path)?;
        // RFC 2598 section 3: no negotiated rate means rate 0, "i.e., drop all EF marked
        // packets": a burst allowance would let some through.
        if self.rate.0 == 0 && self.burst.0 > 0 {
            return Err(ConfigError::new(
                path.key("burst"),
                Some(format!("\"{}\"", self.burst)),
                "with no negotiated EF rate (rate = 0) every EF packet is dropped (RFC 2598 section 3); the burst must be 0",
            ));
        }
        if self.rate.0 > 0 && self.burst.0 == 0 {
            return Err(ConfigError::new(
                path.key("burst"),
                Some("\"0B\"".into()),
                "a negotiated EF rate needs a burst of at least one packet (the largest EF packet)",
            ));
        }
        Ok(ef_policer(self.rate, self.burst))
    }
}

/// The EF edge policer of RFC 2598 section 3: match EF packets (both directions), token
/// bucket (rate, burst), pass green, drop red as a security event.
pub fn ef_policer(rate: Rate, burst: Bytes) -> (Match, Meter, [Action; 3]) {
    let matcher = Match {
        dscp: Some(1 << Dscp::EF.0),
        ..Default::default()
    };
    let meter = Meter::TokenBucket(TokenBucket::new(rate, burst));
    let drop = Action::Drop(DropCause::Security);
    (matcher, meter, [Action::Pass, drop, drop])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conditioner::tests::{def, start};
    use crate::conditioner::{ChainRef, Conditioners, Instance, Outcome};
    use crate::engine::rng::stream;
    use crate::packet::{Color, Packet, PacketArena};
    use crate::stats::Window;
    use crate::time::SimTime;

    fn window() -> Window {
        Window {
            start: SimTime::ZERO,
            end: SimTime(u64::MAX),
        }
    }

    fn ms(v: u64) -> SimTime {
        SimTime(v * 1_000_000)
    }

    /// One EF policer at the ingress of port 0.
    fn ef_chain(rate: Rate, burst: Bytes) -> Conditioners {
        let (matcher, meter, actions) = ef_policer(rate, burst);
        let mut c = Conditioners::new(1);
        c.add_block(
            def("ef", matcher, actions),
            vec![Instance::new(0, None, None, Some(meter), stream(1, "ef"))],
            None,
            &[ChainRef::Ingress(0)],
        );
        c
    }

    #[test]
    fn aggregate_policer_demotion_count() {
        // Seed 002 section 3.5 style: 1500 B packets, aggregate policer of 200 kbit/s =
        // 25 B/ms with a 6-packet (9000 B) bucket, on IN (AF11) packets only; OUT (AF12)
        // packets pass unmetered. Two profiled sources each send one IN packet every 30 ms
        // (offset 15 ms) plus one OUT packet in between: IN aggregate = 1500 B / 15 ms =
        // 100 B/ms = 4 x the policed rate.
        // Bucket T_k before IN packet k (t = 15k ms): T_0 = 9000; green iff T_k >= 1500
        // (then -1500); T_{k+1} = T_k' + 375.
        //   k:   0    1    2    3    4    5    6    7    8   9   10   11   12 ...
        //   T: 9000 7875 6750 5625 4500 3375 2250 1125 1500 375 750 1125 1500 ...
        //   c:   G    G    G    G    G    G    G    R    G   R   R    R    G  ...
        // From k = 8 on the pattern repeats every 4 packets (G R R R): greens at k = 0..6
        // and 8, 12, ..., 36: 7 + 8 = 15 of 40. 25 IN packets are demoted to AF12; the 40
        // OUT packets are neither metered nor changed.
        let mut c = Conditioners::new(1);
        let matcher = Match {
            dscp: Some(1 << Dscp::af(1, 1).0),
            ..Default::default()
        };
        let meter = Meter::TokenBucket(TokenBucket::new(Rate(200_000), Bytes(9000)));
        c.add_block(
            def(
                "policer",
                matcher,
                [Action::Pass, Action::Pass, Action::Demote(Dscp::af(1, 2))],
            ),
            vec![Instance::new(0, None, None, Some(meter), stream(1, "p"))],
            None,
            &[ChainRef::Ingress(0)],
        );
        let mut pkts = PacketArena::default();
        let w = window();
        let (mut kept, mut demoted, mut out_untouched) = (0, 0, 0);
        for k in 0..40u64 {
            for (dscp, t) in [(Dscp::af(1, 1), ms(15 * k)), (Dscp::af(1, 2), ms(15 * k + 7))] {
                let id = pkts.alloc(Packet {
                    size: 1500,
                    dscp,
                    flow: (k % 2) as u32,
                    ..Default::default()
                });
                assert_eq!(
                    c.run(start(ChainRef::Ingress(0)), false, id, &mut pkts, t, &w),
                    Outcome::Pass
                );
                match (dscp == Dscp::af(1, 1), pkts[id].dscp == Dscp::af(1, 1)) {
                    (true, true) => kept += 1,
                    (true, false) => demoted += 1,
                    (false, _) => {
                        assert_eq!(pkts[id].color, None, "OUT packets are not metered");
                        out_untouched += 1
                    }
                }
                pkts.free(id);
            }
        }
        assert_eq!((kept, demoted, out_untouched), (15, 25, 40));
        let s = &c.instances[0].stats;
        assert_eq!(s.demoted, [0, 0, 25]);
        assert_eq!(s.pkts, [15, 0, 25]);
    }

    #[test]
    fn ef_policer_discards_exactly_beyond_rate_and_burst() {
        // Negotiated 80 kbit/s = 10 B/ms, burst 3000 B; 1000 B EF packets every 50 ms
        // (20 B/ms, twice the rate) for 1 s, plus a BE packet each time (never policed).
        // Bucket before EF packet k (t = 50k ms): 3000 + 500 k - 1000 g (g granted so far).
        //   k=0: 3000 -> g1; k=1: 2500 -> g2; k=2: 2000 -> g3; k=3: 1500 -> g4;
        //   k=4: 1000 -> g5; k=5: 500 (drop); k=6: 1000 -> g6; k=7: 500 (drop); ...
        // From k = 4 on, every other packet passes: granted = 5 + (19 - 4) / 2 = 12 of 20
        // for k = 0..19, i.e. 3000 B burst + 10 B/ms x 950 ms = 12500 B allowance -> 12
        // whole packets. 8 are dropped as security events.
        let mut c = ef_chain(Rate(80_000), Bytes(3000));
        let mut pkts = PacketArena::default();
        let w = window();
        let mut dropped_at = Vec::new();
        for k in 0..20u64 {
            for dscp in [Dscp::EF, Dscp::BE] {
                let id = pkts.alloc(Packet {
                    size: 1000,
                    dscp,
                    ..Default::default()
                });
                match c.run(start(ChainRef::Ingress(0)), false, id, &mut pkts, ms(50 * k), &w) {
                    Outcome::Pass => {}
                    Outcome::Drop { cause, .. } => {
                        assert_eq!(cause, DropCause::Security);
                        assert_eq!(dscp, Dscp::EF);
                        dropped_at.push(k);
                    }
                    o => panic!("{o:?}"),
                }
                pkts.free(id);
            }
        }
        assert_eq!(dropped_at, vec![5, 7, 9, 11, 13, 15, 17, 19]);
        assert_eq!(c.instances[0].stats.dropped_pkts[Color::Red as usize], 8);
    }

    #[test]
    fn ef_policer_without_negotiated_rate_drops_all_ef() {
        let mut c = ef_chain(Rate(0), Bytes(0));
        let mut pkts = PacketArena::default();
        for k in 0..10u64 {
            let id = pkts.alloc(Packet {
                size: 40,
                dscp: Dscp::EF,
                ..Default::default()
            });
            let o = c.run(
                start(ChainRef::Ingress(0)),
                false,
                id,
                &mut pkts,
                ms(1000 * k),
                &window(),
            );
            assert!(matches!(
                o,
                Outcome::Drop {
                    cause: DropCause::Security,
                    ..
                }
            ));
            pkts.free(id);
        }
    }
}
