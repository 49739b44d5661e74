//! CBQ's estimator: is a class over its allocated share of the link? (Floyd and Jacobson
//! 1995, the link-sharing estimator; ns-2 `CBQClass::update` and `CBQClass::delayed`.)
//!
//! After each packet a class sends (and, by the same packet, each of its ancestors up to the
//! root), the estimator measures how long the link stayed away from the class beyond the
//! time the packet is worth at the class's allocated rate b:
//!
//! ```text
//!   fin     = now + s / R                    (R the link rate: the packet's last bit)
//!   idle    = (fin - last) - s / b           (negative: the class sent faster than b)
//!   avgidle = avgidle + (idle - avgidle) / 2^k        EWMA, weight 2^-k (ns-2: 1/16)
//!   avgidle = min(avgidle, maxidle)                    the credit an idle class keeps
//!   avgidle = max(avgidle, -minidle)                   (ALTQ; ns-2 sets no lower bound)
//!   if avgidle <= 0:  undertime = now + s / b + (2^k - 1) (-avgidle)
//!   last    = fin
//! ```
//!
//! The class is overlimit while `now < undertime`: `(2^k - 1)(-avgidle)` is the extra idle
//! time one more sample needs to bring the average back to 0. A class that may not send
//! because it is overlimit and cannot borrow takes the **delay action** once per episode
//! (ns-2 `delayed`): its undertime drops that penalty and gains `extradelay`, so that it
//! waits `s / b + extradelay` from the start of its last packet, i.e. `s/R (R/b - 1)` after
//! its end ("txtime x (1/allot - 1)").
//!
//! Arithmetic: integer nanoseconds. avgidle is kept scaled by 2^k (as ALTQ's
//! `rmc_update_class_util`), `A = 2^k avgidle`, so the EWMA is `A += idle - (A >> k)`
//! (`>>` floors) and the penalty `((2^k - 1) A) >> k`: exact, and the delay action takes
//! back exactly what the update added. s / R and s / b are [`Rate::tx_time`] (rounded to
//! the nanosecond) at the link rate and at the class rate (share x link rate, rounded to
//! 1 bit/s).

use crate::time::Rate;

/// The estimator's settings for one class (plain data, fixed at build).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EstimatorParams {
    /// The link's rate: a packet's transmission time s / R.
    pub link: Rate,
    /// The class's allocated rate b (share x link rate).
    pub rate: Rate,
    /// The EWMA's weight is 2^-k.
    pub k: u32,
    /// The largest avgidle, ns.
    pub maxidle: i64,
    /// The smallest avgidle is -minidle (ns), if set.
    pub minidle: Option<i64>,
    /// Added to the undertime by the delay action, ns.
    pub extradelay: i64,
}

/// The estimator's state for one class (ns-2's initial values: all zero).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EstimatorState {
    /// avgidle x 2^k, ns.
    pub avgidle: i64,
    /// When the class's last packet finished (ns-2 `last_time_`), ns.
    pub last: i64,
    /// Before this instant the class is overlimit, ns.
    pub undertime: i64,
    /// The delay action was taken since the class was last underlimit.
    pub delayed: bool,
}

impl EstimatorState {
    /// Not overlimit at `now`: the class may send on its own.
    #[inline]
    pub fn underlimit(&self, now: i64) -> bool {
        self.undertime <= now
    }

    /// avgidle in ns (floored).
    pub fn avgidle_ns(&self, k: u32) -> i64 {
        self.avgidle >> k
    }
}

impl EstimatorParams {
    /// (2^k - 1) avgidle, ns: the idle time beyond s / b that one more sample needs to bring a
    /// negative average back to 0 (negated).
    #[inline]
    fn penalty(&self, scaled: i64) -> i64 {
        (((1i64 << self.k) - 1) * scaled) >> self.k
    }

    /// s / b: what a packet of `size` bytes is worth at the class's rate, ns.
    #[inline]
    fn worth(&self, size: u32) -> i64 {
        self.rate.tx_time(size as u64).0 as i64
    }

    /// The class sent `size` bytes, starting at `now` (ns-2 `update`).
    pub fn update(&self, s: &mut EstimatorState, size: u32, now: i64) {
        let fin = now + self.link.tx_time(size as u64).0 as i64;
        let idle = (fin - s.last) - self.worth(size);
        let mut a = s.avgidle + idle - (s.avgidle >> self.k);
        a = a.min(self.maxidle << self.k);
        if let Some(min) = self.minidle {
            a = a.max(-(min << self.k));
        }
        s.avgidle = a;
        if a <= 0 {
            s.undertime = now + self.worth(size) - self.penalty(a);
        }
        s.last = fin;
    }

    /// The class has a packet but may not send it at `now` (ns-2 `delayed`): once per
    /// episode, its undertime gains `extradelay` and loses the avgidle penalty.
    pub fn delay_action(&self, s: &mut EstimatorState, now: i64) -> bool {
        if s.undertime - now + self.extradelay > 0 && !s.delayed {
            s.undertime += self.extradelay + self.penalty(s.avgidle);
            s.delayed = true;
            return true;
        }
        false
    }
}

/// ns-2's `maxidle = auto` (tcl/lib/ns-queue.tcl, `CBQClass instproc automaxidle`), ns: with
/// the filter gain g = 1 - 2^-k (ns-2's `automaxidle_gain_` 0.9375 for k = 4), n = 8 x
/// priority and t the time of a `maxpkt`-byte packet at the link rate,
/// `maxidle = t max((1/share - 1)(1 - g^n) / g^n, 1 - g)`: Floyd and Jacobson's credit for a
/// burst of n back-to-back packets, at least one sample's worth.
pub fn auto_maxidle(share: f64, priority: u8, k: u32, maxpkt: u64, link: Rate) -> i64 {
    let g = 1.0 - 1.0 / (1u64 << k) as f64;
    let g_n = g.powi(8 * priority as i32);
    let burst = (1.0 / share - 1.0) * (1.0 - g_n) / g_n;
    let t = maxpkt as f64 * 8.0 / link.0 as f64;
    (t * burst.max(1.0 - g) * 1e9).round() as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 1 Mbit/s link (1000 B = 8 ms), a class of share 1/4 (250 kbit/s: 1000 B = 32 ms),
    /// k = 4, maxidle 10 ms, no minidle, extradelay 0.
    fn quarter() -> EstimatorParams {
        EstimatorParams {
            link: Rate(1_000_000),
            rate: Rate(250_000),
            k: 4,
            maxidle: 10_000_000,
            minidle: None,
            extradelay: 0,
        }
    }

    const MS: i64 = 1_000_000;

    #[test]
    fn back_to_back_packets_by_hand() {
        // 1000 B packets back to back from t = 200 ms (each starts when the last ends), the
        // class idle before. A = 16 avgidle, in ns; A >> 4 floors.
        // 1: fin 208 ms, idle = 208 - 0 - 32 = 176 ms; A = 176 ms > 16 maxidle = 160 ms:
        //    capped, A = 160 000 000. A > 0: the undertime stays 0.
        // 2: start 208, fin 216, idle = 8 - 32 = -24 ms; A = 160 - 24 - 10 = 126 ms.
        // 3: A = 126 000 000 - 24 000 000 - 7 875 000 = 94 125 000.
        // 4: 94 125 000 - 24 000 000 - 5 882 812 = 64 242 188.
        // 5: 64 242 188 - 24 000 000 - 4 015 136 = 36 227 052.
        // 6: 36 227 052 - 24 000 000 - 2 264 190 = 9 962 862.
        // 7 (start 248 ms): 9 962 862 - 24 000 000 - 622 678 = -14 659 816 <= 0: overlimit,
        //    undertime = 248 + 32 ms - ((15 x -14 659 816) >> 4 = -13 743 578) = 293 743 578.
        let p = quarter();
        let mut s = EstimatorState::default();
        let want = [
            160_000_000,
            126_000_000,
            94_125_000,
            64_242_188,
            36_227_052,
            9_962_862,
            -14_659_816,
        ];
        for (i, &a) in want.iter().enumerate() {
            let now = 200 * MS + 8 * MS * i as i64;
            p.update(&mut s, 1000, now);
            assert_eq!(s.avgidle, a, "packet {}", i + 1);
            assert_eq!(s.last, now + 8 * MS);
            assert_eq!(s.undertime, if a > 0 { 0 } else { 293_743_578 });
        }
        assert!(!s.underlimit(293_743_577) && s.underlimit(293_743_578));
        // The delay action (extradelay 0) takes the penalty back: the class waits s/b = 32 ms
        // from the start of its last packet, 24 ms after its end.
        assert!(p.delay_action(&mut s, 256 * MS));
        assert_eq!(s.undertime, 280 * MS);
        assert!(!p.delay_action(&mut s, 257 * MS), "once per episode");
        assert_eq!(s.undertime, 280 * MS);
    }

    #[test]
    fn a_class_sending_at_its_rate_stays_at_the_limit() {
        // Every 32 ms one 1000 B packet: idle = 32 - 32 = 0 each time after the first, so
        // the average decays towards 0 from maxidle and never goes below: never overlimit.
        let p = quarter();
        let mut s = EstimatorState::default();
        for i in 0..200 {
            p.update(&mut s, 1000, 1000 * MS + 32 * MS * i);
            assert!(s.avgidle >= 0, "packet {i}: {}", s.avgidle);
            assert_eq!(s.undertime, 0);
        }
        // The first sample (idle 976 ms) fills the credit, A = 160 ms; each later one takes
        // floor(A / 16) off it: 199 decays later A = 432 ns (160 ms x (15/16)^199 = 420 ns,
        // less the floors).
        assert_eq!(s.avgidle, 432);
    }

    #[test]
    fn minidle_bounds_the_debt_and_extradelay_lengthens_the_delay() {
        // From zero, packets back to back (idle -24 ms each): A = -24 ms, then -24 - 24 + 1.5
        // = -46.5 ms, held at -32 ms by minidle 2 ms (A >= -16 x 2 ms); the third, -54, too.
        let p = EstimatorParams {
            minidle: Some(2 * MS),
            extradelay: 5 * MS,
            ..quarter()
        };
        let mut s = EstimatorState {
            last: 0,
            ..Default::default()
        };
        p.update(&mut s, 1000, 0);
        assert_eq!(s.avgidle, -24 * MS);
        p.update(&mut s, 1000, 8 * MS);
        assert_eq!(s.avgidle, -32 * MS);
        p.update(&mut s, 1000, 16 * MS);
        assert_eq!(s.avgidle, -32 * MS);
        // undertime = 16 + 32 + 15 x 2 ms = 78 ms; the delay action: -30 + 5 -> 53 ms.
        assert_eq!(s.undertime, 78 * MS);
        assert!(p.delay_action(&mut s, 24 * MS));
        assert_eq!(s.undertime, 53 * MS);
    }

    #[test]
    fn ns2_auto_maxidle() {
        // 1.5 Mbit/s, maxpkt 1024 B: t = 5.461333 ms. Priority 0: n = 0, the first term is
        // 0, maxidle = t (1 - g) = t / 16 = 341.333 us. Priority 1, share 0.3: g^8 =
        // 0.9375^8 = 0.596719..., (1/0.3 - 1)(1 - g^8)/g^8 = 1.576935..., maxidle = 8.612168 ms.
        let link = Rate(1_500_000);
        assert_eq!(auto_maxidle(0.3, 0, 4, 1024, link), 341_333);
        assert_eq!(auto_maxidle(0.3, 1, 4, 1024, link), 8_612_168);
        assert_eq!(auto_maxidle(1.0, 3, 4, 1024, link), 341_333);
    }
}
