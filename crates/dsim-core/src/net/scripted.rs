//! Scripted drops: a deterministic loss pattern on one link direction, for experiments
//! and tests that need "drop segment k", "drop k and k + 2", "drop the retransmission of
//! k".
//!
//! A rule names a flow and either
//! - a packet by its index (`packet = n`): the flow's n-th packet (0-based, in the sending
//!   order of its direction; for TCP every transmission, retransmissions included, has
//!   its own index), or
//! - a TCP data segment by its number (`segment = k`): the segment whose first byte is
//!   byte k * MSS of the stream (segment 0 starts the stream), at its `occurrence`-th
//!   crossing of this link direction (1 = the first transmission, 2 = the first
//!   retransmission that gets here, ...).
//!
//! A matching packet is lost on the wire after its transmission, like a random link loss,
//! and counted with cause `scripted`. Each rule drops one packet. A port without rules
//! holds `None` and pays one branch per packet.

use crate::packet::{Direction, FlowId, Packet};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropMatch {
    Packet { index: u64 },
    Segment { seq: u64, occurrence: u32 },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DropRule {
    pub flow: FlowId,
    pub what: DropMatch,
    /// Crossings of a matching segment seen so far.
    seen: u32,
}

impl DropRule {
    pub fn new(flow: FlowId, what: DropMatch) -> Self {
        DropRule { flow, what, seen: 0 }
    }
}

#[derive(Clone, Debug, Default)]
pub struct ScriptedDrops {
    pub rules: Vec<DropRule>,
}

impl ScriptedDrops {
    /// Whether `p` is to be dropped (a segment rule counts the crossing).
    pub fn matches(&mut self, p: &Packet) -> bool {
        let mut hit = false;
        for r in &mut self.rules {
            if r.flow != p.flow {
                continue;
            }
            match r.what {
                DropMatch::Packet { index } => hit |= index == p.index,
                DropMatch::Segment { seq, occurrence } => {
                    if p.direction == Direction::Forward && p.tcp.len > 0 && p.tcp.seq == seq {
                        r.seen += 1;
                        hit |= r.seen == occurrence;
                    }
                }
            }
        }
        hit
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::TcpHeader;

    fn seg(seq: u64, index: u64) -> Packet {
        Packet {
            flow: 1,
            index,
            tcp: TcpHeader {
                seq,
                len: 1000,
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn drops_the_chosen_occurrence_only() {
        let mut d = ScriptedDrops {
            rules: vec![
                DropRule::new(
                    1,
                    DropMatch::Segment {
                        seq: 5001,
                        occurrence: 2,
                    },
                ),
                DropRule::new(1, DropMatch::Packet { index: 3 }),
            ],
        };
        assert!(!d.matches(&seg(5001, 0)), "first transmission passes");
        assert!(!d.matches(&seg(6001, 1)));
        assert!(d.matches(&seg(5001, 2)), "its retransmission is dropped");
        assert!(!d.matches(&seg(5001, 4)), "the next one passes");
        assert!(d.matches(&seg(7001, 3)), "packet index 3");
        let mut other = seg(5001, 3);
        other.flow = 2;
        assert!(!d.matches(&other));
    }
}
