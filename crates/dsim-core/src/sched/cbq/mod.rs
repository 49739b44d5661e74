//! Class-based queueing (CBQ): Floyd and Jacobson's hierarchical link sharing, as ns-2
//! implements it.
//!
//! Sources: S. Floyd and V. Jacobson, "Link-sharing and Resource Management Models for
//! Packet Networks", IEEE/ACM ToN 3(4), 1995 (FJ95; [CBQ] of RFC 2598), and ns-2's
//! `queue/cbq.cc` (`CBQueue`, `WRR_CBQueue`, `CBQClass`) with `tcl/lib/ns-queue.tcl`, the
//! "CBQ modules included with ns-2" that RFC 2598's authors used "as a basis to implement
//! priority queuing and WRR" (appendix A.3). Where ns-2 and FJ95 or ALTQ (the LBL/Sun code
//! in BSD, `altq_rmclass.c`) differ, the choice is an option or is said at the line.
//!
//! The model:
//! - **The class tree** ([`spec`]): the root is the link (share 1); interior classes
//!   divide a parent's share among their children; leaf classes hold the codepoints and a
//!   queue (the rows of the `queues` table). Each class has a share of the link (its
//!   allocated rate b = share x link rate), may borrow from its ancestors or not, and an
//!   estimator. Levels: a leaf is at 1, an interior class one above its highest child.
//! - **The estimator** ([`estimator`]): after each packet, every class from the leaf that
//!   sent it up to the root measures its idle time against s / b, averages it (avgidle), and
//!   is overlimit until its `undertime` when the average falls to 0 or below.
//! - **The general scheduler**: strict priority between leaves (priority 0 first), and
//!   within one priority a round robin from where the last turn ended: packet by packet
//!   (PRR) or weighted by bytes per round (WRR, ns-2's allotments).
//! - **The link-sharing scheduler**: a leaf may send if it is not overlimit, or if it may
//!   borrow and an ancestor is not overlimit and passes the guideline (ancestors-only,
//!   top-level or formal). A leaf with a packet that may not send takes the **delay
//!   action** (its estimator's wait is set to s / b + extradelay from its last start).
//!   If no leaf may send, the first waiting leaf allowed to borrow sends anyway
//!   (`efficient`, ns-2); otherwise the link stays idle while packets wait, until the
//!   earliest instant a waiting leaf or an ancestor it may borrow from is underlimit
//!   (`restart = "timer"`) or the next arrival (`"arrival"`, ns-2).
//!
//! So CBQ is not work conserving: a bounded class (`borrow = false`) is held to its share
//! even on an idle link. The port learns when to ask again from [`Cbq::resume_at`].
//!
//! Plain data ([`Node`], [`CbqParams`]) is fixed at build; the runtime state
//! ([`ClassState`], the round-robin positions, Top-level) and the counters
//! ([`ClassCounters`]) are apart. Nothing allocates per packet.

pub mod estimator;
pub mod spec;
#[cfg(test)]
mod tests;

pub use spec::{CbqClass, CbqInterior, CbqScheduler, CbqSpec, Guideline, Restart};

use self::estimator::{EstimatorParams, EstimatorState};
use super::classes::ClassQueues;
use crate::discipline::{QueueCtx, Verdict};
use crate::packet::PktId;
use crate::time::SimTime;

/// Number of priorities (ns-2 `MAXPRIO`).
pub const PRIORITIES: usize = 10;
/// Top-level when no borrowing is cut off ("infinity").
const NO_CUTOFF: u8 = u8::MAX;

/// One class of the tree (plain data).
#[derive(Debug, Clone)]
pub struct Node {
    /// Index of the parent class; None for the root (the link).
    pub parent: Option<usize>,
    /// May borrow from its ancestors (ns-2 `okborrow_`).
    pub borrow: bool,
    /// 1 for a leaf, one above the highest child for an interior class.
    pub level: u8,
    /// Leaves: the scheduler's priority, 0 first.
    pub priority: u8,
    pub estimator: EstimatorParams,
}

/// The scheduler's settings (plain data).
#[derive(Debug, Clone, Copy)]
pub struct CbqParams {
    pub scheduler: CbqScheduler,
    pub guideline: Guideline,
    pub restart: Restart,
    pub efficient: bool,
    /// Number of leaf classes: the nodes `0..leaves` are the leaves (their index is their
    /// queue's), then the interior classes, then the root.
    pub leaves: usize,
}

/// One class's runtime state.
#[derive(Debug, Clone, Copy, Default)]
pub struct ClassState {
    pub estimator: EstimatorState,
    /// WRR: the bytes left of the class's allowance this round (ns-2 `bytes_alloc_`).
    pub bytes_alloc: i64,
}

/// What one leaf class did (counted over the whole run).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClassCounters {
    /// Packets sent while the class was not overlimit.
    pub sent: u64,
    /// Packets sent by borrowing from an ancestor.
    pub borrowed: u64,
    /// Packets sent with no class allowed to send (`efficient`), uncharged.
    pub unregulated: u64,
    /// Delay actions taken (episodes of being overlimit with a packet, unable to borrow).
    pub delays: u64,
}

/// How a leaf was chosen to send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Grant {
    /// Allowed: not overlimit (the lender is the leaf itself) or borrowing from `lender`.
    Lender(usize),
    /// No class was allowed; the first waiting one that may borrow goes (`efficient`).
    Unregulated,
}

#[derive(Debug, Clone)]
pub struct Cbq {
    /// The leaves' queues (queue i is node i).
    pub classes: ClassQueues,
    nodes: Vec<Node>,
    params: CbqParams,
    /// WRR: each leaf's bytes per round.
    allot: Vec<i64>,
    /// The leaves of each priority in round-robin order (the class list's order).
    rings: [Vec<usize>; PRIORITIES],
    /// Position in its ring of the leaf whose turn comes next, per priority.
    active: [usize; PRIORITIES],
    state: Vec<ClassState>,
    /// The top-level guideline's variable: borrowing from a level above it is cut off.
    toplevel: u8,
    counters: Vec<ClassCounters>,
}

impl Cbq {
    /// `nodes`: the leaves (in queue order), the interior classes, the root last.
    pub fn new(classes: ClassQueues, nodes: Vec<Node>, params: CbqParams, allot: Vec<i64>) -> Self {
        assert_eq!(classes.len(), params.leaves, "one queue per leaf");
        assert!(nodes.len() > params.leaves && nodes.last().is_some_and(|r| r.parent.is_none()));
        let mut rings: [Vec<usize>; PRIORITIES] = Default::default();
        for (leaf, n) in nodes[..params.leaves].iter().enumerate() {
            rings[n.priority as usize].push(leaf);
        }
        Cbq {
            classes,
            state: vec![ClassState::default(); nodes.len()],
            counters: vec![ClassCounters::default(); params.leaves],
            nodes,
            params,
            allot,
            rings,
            active: [0; PRIORITIES],
            toplevel: NO_CUTOFF,
        }
    }

    /// What leaf `class` did so far.
    pub fn counters(&self, class: usize) -> ClassCounters {
        self.counters[class]
    }

    /// The estimator state of node `i` (leaves first, the root last).
    pub fn estimator(&self, i: usize) -> EstimatorState {
        self.state[i].estimator
    }

    #[inline]
    pub fn enqueue(&mut self, id: PktId, ctx: &mut QueueCtx) -> Verdict {
        let class = ClassQueues::class_of(ctx.pkts, id);
        if self.params.guideline == Guideline::TopLevel {
            self.toplevel_arrival(class, ctx.now.0 as i64);
        }
        self.classes.enqueue(class, id, ctx)
    }

    /// The next packet, or None if no class may send now (some may still wait:
    /// [`Self::resume_at`]).
    pub fn dequeue(&mut self, ctx: &mut QueueCtx) -> Option<PktId> {
        let now = ctx.now.0 as i64;
        loop {
            let (leaf, grant) = self.select(now)?;
            let Some(id) = self.classes.dequeue(leaf, ctx) else {
                continue; // an AQM emptied the queue while dequeueing (none does today)
            };
            self.account(leaf, grant, ctx.pkts[id].size, now);
            return Some(id);
        }
    }

    /// When the link, left idle by [`Self::dequeue`] with packets waiting, should ask
    /// again: the earliest instant after `now` at which a waiting leaf, or an ancestor it
    /// may borrow from, stops being overlimit (`restart = "timer"`); None with `"arrival"`
    /// (the next arrival asks) or if nothing waits. `now` itself if the scan's delay action
    /// brought a waiting leaf's own undertime to `now` or before (it drops the avgidle
    /// term): that leaf may send, so asking again at once makes progress.
    pub fn resume_at(&self, now: SimTime) -> Option<SimTime> {
        if self.params.restart == Restart::Arrival {
            return None;
        }
        let now = now.0 as i64;
        (0..self.params.leaves)
            .filter(|&leaf| self.classes.has_packets(leaf))
            .flat_map(|leaf| self.lenders_of(leaf).map(move |i| (leaf, i)))
            .filter_map(|(leaf, i)| match self.state[i].estimator.undertime {
                t if t > now => Some(t),
                // An ancestor not overlimit that the guideline refused stays refused.
                _ if i == leaf => Some(now),
                _ => None,
            })
            .min()
            .map(|t| SimTime(t as u64))
    }

    /// `leaf`, then the ancestors it may borrow from.
    fn lenders_of(&self, leaf: usize) -> impl Iterator<Item = usize> + '_ {
        let first = self.nodes[leaf].borrow.then_some(self.nodes[leaf].parent).flatten();
        std::iter::once(leaf).chain(std::iter::successors(first, |&p| self.nodes[p].parent))
    }

    /// The leaf that sends next and why, after the general scheduler's scan (ns-2
    /// `CBQueue::deque`, `WRR_CBQueue::deque`).
    fn select(&mut self, now: i64) -> Option<(usize, Grant)> {
        let mut first = None;
        for prio in 0..PRIORITIES {
            if self.rings[prio].is_empty() {
                continue;
            }
            let found = match self.params.scheduler {
                CbqScheduler::Prr => self.scan_prr(prio, now, &mut first),
                CbqScheduler::Wrr => self.scan_wrr(prio, now, &mut first),
            };
            if found.is_some() {
                return found;
            }
        }
        if self.params.efficient {
            // ns-2: "did not find anyone so let first go".
            return first.map(|leaf| (leaf, Grant::Unregulated));
        }
        if self.toplevel != NO_CUTOFF {
            // Without `efficient`, Top-level must not keep the link idle: ALTQ raises its
            // cutoff when no class may send; dsim lifts it and scans once more.
            self.toplevel = NO_CUTOFF;
            return self.select(now);
        }
        None
    }

    /// A waiting leaf met by the scan: the first one allowed to borrow is remembered for
    /// `efficient`; then it may send (its lender), or takes the delay action.
    fn visit(&mut self, leaf: usize, now: i64, first: &mut Option<usize>) -> Option<usize> {
        if first.is_none() && self.nodes[leaf].borrow {
            *first = Some(leaf);
        }
        let lender = self.send_permitted(leaf, now);
        if lender.is_none()
            && self.nodes[leaf]
                .estimator
                .delay_action(&mut self.state[leaf].estimator, now)
        {
            self.counters[leaf].delays += 1;
        }
        lender
    }

    /// PRR: one turn around the ring of `prio` from the active position; the first waiting
    /// leaf that may send goes.
    fn scan_prr(&mut self, prio: usize, now: i64, first: &mut Option<usize>) -> Option<(usize, Grant)> {
        let n = self.rings[prio].len();
        for k in 0..n {
            let leaf = self.rings[prio][(self.active[prio] + k) % n];
            if self.classes.has_packets(leaf) {
                if let Some(lender) = self.visit(leaf, now, first) {
                    return Some((leaf, Grant::Lender(lender)));
                }
            }
        }
        None
    }

    /// WRR (ns-2 `WRR_CBQueue::deque`): a turn around the ring of `prio`; a leaf found with
    /// an exhausted allowance gets its allotment first; a waiting leaf that may send goes
    /// if its allowance is positive. Every leaf passed over loses what is left of its
    /// allowance. If a leaf could send but for its allowance, a second turn lets the first
    /// one that may send go whatever its allowance.
    fn scan_wrr(&mut self, prio: usize, now: i64, first: &mut Option<usize>) -> Option<(usize, Grant)> {
        let n = self.rings[prio].len();
        for second_turn in [false, true] {
            let mut short = false;
            for k in 0..n {
                let leaf = self.rings[prio][(self.active[prio] + k) % n];
                if !second_turn && self.state[leaf].bytes_alloc <= 0 {
                    self.state[leaf].bytes_alloc += self.allot[leaf];
                }
                if self.classes.has_packets(leaf) {
                    if let Some(lender) = self.visit(leaf, now, first) {
                        if self.state[leaf].bytes_alloc > 0 || second_turn {
                            return Some((leaf, Grant::Lender(lender)));
                        }
                        short = true;
                    }
                }
                self.state[leaf].bytes_alloc = 0;
            }
            if !short {
                break;
            }
        }
        None
    }

    /// May `leaf` send at `now`, and from whom (ns-2 `send_permitted`): itself if not
    /// overlimit, else a lender per the guideline if it may borrow.
    fn send_permitted(&mut self, leaf: usize, now: i64) -> Option<usize> {
        let est = &mut self.state[leaf].estimator;
        if est.underlimit(now) {
            est.delayed = false;
            return Some(leaf);
        }
        if !self.nodes[leaf].borrow {
            return None;
        }
        self.find_lender(leaf, now)
    }

    /// The ancestor `class` borrows from (ns-2 `find_lender`): the nearest one that is not
    /// overlimit and that the guideline allows. Top-level: an overlimit ancestor above
    /// Top-level ends the search.
    fn find_lender(&self, class: usize, now: i64) -> Option<usize> {
        let mut at = self.nodes[class].parent;
        while let Some(a) = at {
            let node = &self.nodes[a];
            if !self.state[a].estimator.underlimit(now) {
                if self.params.guideline == Guideline::TopLevel && node.level > self.toplevel {
                    return None;
                }
            } else if match self.params.guideline {
                Guideline::AncestorsOnly => true,
                Guideline::TopLevel => node.level <= self.toplevel,
                Guideline::Formal => self.below_all_satisfied(node.level, now),
            } {
                return Some(a);
            }
            at = node.parent;
        }
        None
    }

    /// The formal guideline's second rule: no class at a level below `level` is
    /// unsatisfied (ns-2 `eligible_formal`).
    fn below_all_satisfied(&self, level: u8, now: i64) -> bool {
        (0..self.nodes.len())
            .filter(|&i| self.nodes[i].level < level)
            .all(|i| self.satisfied(i, now))
    }

    /// A class is unsatisfied when it is not overlimit and has demand: a leaf with a
    /// packet, an interior class with a descendant leaf that has one and may borrow from
    /// it (ns-2 `satisfied`, `desc_with_demand`, `ancestor`).
    fn satisfied(&self, i: usize, now: i64) -> bool {
        if !self.state[i].estimator.underlimit(now) {
            return true;
        }
        if i < self.params.leaves {
            return !self.classes.has_packets(i);
        }
        !(0..self.params.leaves).any(|leaf| self.classes.has_packets(leaf) && self.borrows_from(leaf, i))
    }

    /// Is `ancestor` on `leaf`'s chain of lenders (every class up to it may borrow)?
    fn borrows_from(&self, leaf: usize, ancestor: usize) -> bool {
        let mut at = leaf;
        while self.nodes[at].borrow {
            match self.nodes[at].parent {
                Some(p) if p == ancestor => return true,
                Some(p) => at = p,
                None => return false,
            }
        }
        false
    }

    /// After `leaf` sent a packet of `size` bytes at `now`: its WRR allowance and the
    /// round-robin position, the estimators from the leaf to the root, Top-level and the
    /// counters.
    fn account(&mut self, leaf: usize, grant: Grant, size: u32, now: i64) {
        let prio = self.nodes[leaf].priority as usize;
        let ring = &self.rings[prio];
        let pos = ring
            .iter()
            .position(|&l| l == leaf)
            .expect("a leaf is in its priority's ring");
        let mut next = (pos + 1) % ring.len();
        let Grant::Lender(lender) = grant else {
            self.active[prio] = next;
            self.counters[leaf].unregulated += 1;
            return;
        };
        if self.params.scheduler == CbqScheduler::Wrr {
            let alloc = &mut self.state[leaf].bytes_alloc;
            if *alloc > 0 {
                *alloc -= size as i64;
            }
            if *alloc > 0 {
                next = pos; // ns-2: "If we're still positive, we get to go again"
            }
        }
        self.active[prio] = next;
        let mut at = Some(leaf);
        while let Some(i) = at {
            self.nodes[i].estimator.update(&mut self.state[i].estimator, size, now);
            at = self.nodes[i].parent;
        }
        if self.params.guideline == Guideline::TopLevel {
            self.toplevel_departure(leaf, lender, now);
        }
        let c = &mut self.counters[leaf];
        if lender == leaf {
            c.sent += 1;
        } else {
            c.borrowed += 1;
        }
    }

    /// Top-level heuristic on an arrival for `leaf` (FJ95; ns-2 `toplevel_arrival`): a
    /// class that is not overlimit sets Top-level to 1; an overlimit one that may borrow
    /// from a parent that is not sets it to the parent's level, if that is lower (the LBL
    /// code, the non-ALTQ branch of `rmc_queue_packet`; ns-2 writes 2, the same for a
    /// parent of leaves only; ALTQ's branch takes the first ancestor not overlimit).
    fn toplevel_arrival(&mut self, leaf: usize, now: i64) {
        if self.toplevel <= 1 {
            return;
        }
        if self.state[leaf].estimator.underlimit(now) {
            self.toplevel = 1;
            return;
        }
        let node = &self.nodes[leaf];
        if let (true, Some(p)) = (node.borrow, node.parent) {
            let level = self.nodes[p].level;
            if self.toplevel > level && self.state[p].estimator.underlimit(now) {
                self.toplevel = level;
            }
        }
    }

    /// Top-level heuristic after `leaf` sent, helped by `lender` (ns-2
    /// `toplevel_departure`): if the class has at most one packet left (ns-2's test; FJ95
    /// and ALTQ say an empty queue) or its lender is now overlimit, no cutoff; else the
    /// lender's level.
    fn toplevel_departure(&mut self, leaf: usize, lender: usize, now: i64) {
        let level = self.nodes[lender].level;
        if self.toplevel < level {
            return;
        }
        let left = self.classes.queue(leaf).len_packets();
        self.toplevel = if left <= 1 || !self.state[lender].estimator.underlimit(now) {
            NO_CUTOFF
        } else {
            level
        };
    }
}
