//! Simulated time, rates and sizes as integers with explicit units.
//!
//! Time is an integer count of nanoseconds, a rate an integer count of bit/s and a size an
//! integer count of bytes; floats appear only where a document's formula is a real-valued
//! average. Scenario files must spell the unit of every quantity ("10Mbps", "50ms",
//! "75KB"): a bare number is an error, because "10" could mean 10 bit/s or 10 Mbit/s.
//! Decimal prefixes are powers of ten (KB = 1000 B, kbps = 1000 bit/s), binary prefixes
//! powers of two (KiB = 1024 B). Values are parsed exactly from their decimal text, so
//! "1.5Mbps" is 1 500 000 bit/s, not a float approximation of it.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

pub const NS_PER_SEC: u64 = 1_000_000_000;

/// An instant of simulated time: nanoseconds since the start of the run.
#[derive(Copy, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct SimTime(pub u64);

/// A span of simulated time in nanoseconds.
#[derive(Copy, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct Duration(pub u64);

/// A bit rate in bit/s.
#[derive(Copy, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct Rate(pub u64);

/// A size in bytes.
#[derive(Copy, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct Bytes(pub u64);

/// A buffer limit, in packets ("100p") or bytes ("64KB").
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Limit {
    Packets(u64),
    Bytes(u64),
}

/// A dimensionless fraction in [0, 1], written "10%" or 0.1.
#[derive(Copy, Clone, Default, PartialEq, PartialOrd, Debug)]
pub struct Fraction(pub f64);

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);
    pub const MAX: SimTime = SimTime(u64::MAX);
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / NS_PER_SEC as f64
    }
    pub fn saturating_sub(self, other: SimTime) -> Duration {
        Duration(self.0.saturating_sub(other.0))
    }
}

impl Duration {
    pub const ZERO: Duration = Duration(0);
    pub fn from_secs(s: u64) -> Self {
        Duration(s * NS_PER_SEC)
    }
    pub fn from_millis(ms: u64) -> Self {
        Duration(ms * 1_000_000)
    }
    pub fn from_micros(us: u64) -> Self {
        Duration(us * 1_000)
    }
    /// Nearest whole nanosecond to `s` seconds (negative and NaN give zero).
    pub fn from_secs_f64(s: f64) -> Self {
        Duration((s * NS_PER_SEC as f64).round().max(0.0) as u64)
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / NS_PER_SEC as f64
    }
    pub fn as_millis_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }
}

impl Rate {
    pub fn bps(self) -> u64 {
        self.0
    }
    /// Time to serialize `bytes` at this rate, rounded to the nearest nanosecond.
    pub fn tx_time(self, bytes: u64) -> Duration {
        debug_assert!(self.0 > 0);
        // In 64 bits when they suffice (every packet size): a 128-bit division is a
        // library call, and this runs for every packet at every hop.
        let r = self.0;
        if let Some(n) = bytes.checked_mul(8 * NS_PER_SEC).and_then(|b| b.checked_add(r / 2)) {
            return Duration(n / r);
        }
        let bits_ns = bytes as u128 * 8 * NS_PER_SEC as u128;
        let r = r as u128;
        Duration(((bits_ns + r / 2) / r) as u64)
    }
    /// Bytes this rate delivers in `d` (floor).
    pub fn bytes_in(self, d: Duration) -> u64 {
        (self.0 as u128 * d.0 as u128 / (8 * NS_PER_SEC as u128)) as u64
    }
}

impl Add<Duration> for SimTime {
    type Output = SimTime;
    fn add(self, d: Duration) -> SimTime {
        SimTime(self.0.saturating_add(d.0))
    }
}
impl AddAssign<Duration> for SimTime {
    fn add_assign(&mut self, d: Duration) {
        self.0 = self.0.saturating_add(d.0);
    }
}
impl Sub for SimTime {
    type Output = Duration;
    fn sub(self, o: SimTime) -> Duration {
        debug_assert!(self >= o, "time went backwards: {self:?} - {o:?}");
        Duration(self.0 - o.0)
    }
}
impl Add for Duration {
    type Output = Duration;
    fn add(self, o: Duration) -> Duration {
        Duration(self.0 + o.0)
    }
}

// ---------------------------------------------------------------------------------------
// Parsing

/// Why a quantity's text was refused; the caller adds the key path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnitError(pub String);

impl fmt::Display for UnitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

const TIME_UNITS: &[(&str, u128)] = &[
    ("ns", 1),
    ("us", 1_000),
    ("µs", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("min", 60_000_000_000),
    ("h", 3_600_000_000_000),
];
const RATE_UNITS: &[(&str, u128)] = &[
    ("bps", 1),
    ("kbps", 1_000),
    ("Kbps", 1_000),
    ("Mbps", 1_000_000),
    ("Gbps", 1_000_000_000),
    ("bit/s", 1),
    ("kbit/s", 1_000),
    ("Mbit/s", 1_000_000),
    ("Gbit/s", 1_000_000_000),
    ("B/s", 8),
    ("KB/s", 8_000),
    ("MB/s", 8_000_000),
];
const BYTE_UNITS: &[(&str, u128)] = &[
    ("B", 1),
    ("KB", 1_000),
    ("kB", 1_000),
    ("MB", 1_000_000),
    ("GB", 1_000_000_000),
    ("KiB", 1 << 10),
    ("MiB", 1 << 20),
    ("GiB", 1 << 30),
];
const PACKET_UNITS: &[(&str, u128)] = &[("p", 1), ("pkt", 1), ("pkts", 1), ("packets", 1)];

fn unit_names(units: &[(&str, u128)]) -> String {
    units.iter().map(|u| u.0).collect::<Vec<_>>().join(", ")
}

/// The longest text a quantity is written in ("1.5Mbps", "0.000001s"): a longer one is a
/// mistake, and would make the error quoting it as long.
const LONGEST_QUANTITY: usize = 40;

/// Splits "1.5Mbps" into the exact decimal 15/10 and the unit "Mbps".
fn split_number(text: &str) -> Result<(u128, u32, &str), UnitError> {
    let n = text.chars().count();
    if n > LONGEST_QUANTITY {
        let head: String = text.chars().take(LONGEST_QUANTITY / 2).collect();
        return Err(UnitError(format!(
            "\"{head}...\" ({n} characters) is not a quantity: a number and its unit take at most {LONGEST_QUANTITY}"
        )));
    }
    let t = text.trim();
    let end = t
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_digit() || *c == '.' || *c == '_'))
        .map_or(t.len(), |(i, _)| i);
    let (num, unit) = (&t[..end], t[end..].trim());
    if t.starts_with('-') {
        return Err(UnitError(format!("\"{text}\" is negative; a quantity must be >= 0")));
    }
    if num.is_empty() || num == "." {
        return Err(UnitError(format!("\"{text}\" does not start with a number")));
    }
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    if frac.contains('.') {
        return Err(UnitError(format!("\"{text}\" is not a decimal number")));
    }
    let digits: String = int.chars().chain(frac.chars()).filter(|c| *c != '_').collect();
    let frac_len = frac.chars().filter(|c| *c != '_').count() as u32;
    if digits.len() > 30 {
        return Err(UnitError(format!("\"{text}\" is too large")));
    }
    let mantissa: u128 = digits
        .parse()
        .map_err(|_| UnitError(format!("\"{text}\" is not a number")))?;
    Ok((mantissa, frac_len, unit))
}

/// Parses `text` against a unit table, giving the value in base units rounded to nearest
/// (or exactly, when `whole` is set).
fn parse_quantity(
    text: &str,
    what: &str,
    units: &[(&str, u128)],
    example: &str,
    whole: bool,
) -> Result<u64, UnitError> {
    let (mantissa, frac_len, unit) = split_number(text)?;
    if unit.is_empty() {
        return Err(UnitError(format!(
            "{what} \"{text}\" has no unit; units are mandatory (e.g. \"{example}\"; one of {})",
            unit_names(units)
        )));
    }
    let Some(&(_, factor)) = units.iter().find(|(u, _)| *u == unit) else {
        return Err(UnitError(format!(
            "{what} \"{text}\" has an unknown unit \"{unit}\"; expected one of {} (e.g. \"{example}\")",
            unit_names(units)
        )));
    };
    let scale = 10u128.pow(frac_len);
    let scaled = mantissa
        .checked_mul(factor)
        .ok_or_else(|| UnitError(format!("{what} \"{text}\" is too large")))?;
    if whole && scaled % scale != 0 {
        return Err(UnitError(format!(
            "{what} \"{text}\" is not a whole number of {}",
            units[0].0
        )));
    }
    let value = (scaled + scale / 2) / scale;
    u64::try_from(value).map_err(|_| UnitError(format!("{what} \"{text}\" is too large")))
}

impl Duration {
    pub fn parse(text: &str) -> Result<Self, UnitError> {
        parse_quantity(text, "duration", TIME_UNITS, "50ms", false).map(Duration)
    }
}
impl Rate {
    pub fn parse(text: &str) -> Result<Self, UnitError> {
        parse_quantity(text, "rate", RATE_UNITS, "10Mbps", false).map(Rate)
    }
}
impl Bytes {
    pub fn parse(text: &str) -> Result<Self, UnitError> {
        parse_quantity(text, "size", BYTE_UNITS, "1500B", true).map(Bytes)
    }
}
impl Limit {
    pub fn parse(text: &str) -> Result<Self, UnitError> {
        let (_, _, unit) = split_number(text)?;
        if PACKET_UNITS.iter().any(|(u, _)| *u == unit) {
            return parse_quantity(text, "limit", PACKET_UNITS, "100p", true).map(Limit::Packets);
        }
        if BYTE_UNITS.iter().any(|(u, _)| *u == unit) {
            return parse_quantity(text, "limit", BYTE_UNITS, "64KB", true).map(Limit::Bytes);
        }
        Err(UnitError(format!(
            "limit \"{text}\" needs a unit of packets (p) or bytes ({}), e.g. \"100p\" or \"64KB\"",
            unit_names(BYTE_UNITS)
        )))
    }
    pub fn is_zero(self) -> bool {
        matches!(self, Limit::Packets(0) | Limit::Bytes(0))
    }
}
impl Fraction {
    pub fn parse(text: &str) -> Result<Self, UnitError> {
        let t = text.trim();
        let Some(num) = t.strip_suffix('%') else {
            return Err(UnitError(format!(
                "fraction \"{text}\" must be a percentage like \"10%\" or a number like 0.1"
            )));
        };
        let v: f64 = num
            .trim()
            .parse()
            .map_err(|_| UnitError(format!("fraction \"{text}\" is not a number")))?;
        Self::checked(v / 100.0).map_err(|_| UnitError(format!("fraction \"{text}\" must lie between 0% and 100%")))
    }
    pub fn checked(v: f64) -> Result<Self, UnitError> {
        if (0.0..=1.0).contains(&v) {
            Ok(Fraction(v))
        } else {
            Err(UnitError(format!("fraction {v} must lie in [0, 1]")))
        }
    }
}

// ---------------------------------------------------------------------------------------
// Display: the canonical spelling, used in messages and when a scenario is written back.

/// `v` in the largest unit that divides it; zero in the base unit ("0bps", "0B"), except a
/// time ("0s").
fn write_scaled(f: &mut fmt::Formatter<'_>, v: u64, units: &[(&str, u64)]) -> fmt::Result {
    if v == 0 {
        let zero = if units[0].0 == "s" {
            "s"
        } else {
            units.last().map_or("", |u| u.0)
        };
        return write!(f, "0{zero}");
    }
    for &(name, factor) in units {
        if v >= factor && v % factor == 0 {
            return write!(f, "{}{name}", v / factor);
        }
    }
    write!(f, "{v}{}", units.last().map_or("", |u| u.0))
}

impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_scaled(
            f,
            self.0,
            &[("s", 1_000_000_000), ("ms", 1_000_000), ("us", 1_000), ("ns", 1)],
        )
    }
}
impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Duration(self.0).fmt(f)
    }
}
impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_scaled(
            f,
            self.0,
            &[
                ("Gbps", 1_000_000_000),
                ("Mbps", 1_000_000),
                ("kbps", 1_000),
                ("bps", 1),
            ],
        )
    }
}
impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_scaled(f, self.0, &[("MB", 1_000_000), ("KB", 1_000), ("B", 1)])
    }
}
impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Limit::Packets(n) => write!(f, "{n}p"),
            Limit::Bytes(b) => Bytes(*b).fmt(f),
        }
    }
}
impl fmt::Display for Fraction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}%", self.0 * 100.0)
    }
}

// ---------------------------------------------------------------------------------------
// serde: quantities are strings with units; a bare number is refused with a hint.

macro_rules! unit_serde {
    ($ty:ty, $expect:literal) => {
        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $ty;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str($expect)
                    }
                    fn visit_str<E: de::Error>(self, v: &str) -> Result<$ty, E> {
                        <$ty>::parse(v).map_err(|e| E::custom(e.0))
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$ty, E> {
                        Err(E::custom(format!(
                            "{v} has no unit; units are mandatory, write {}",
                            $expect
                        )))
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$ty, E> {
                        self.visit_i64(v as i64)
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$ty, E> {
                        Err(E::custom(format!(
                            "{v} has no unit; units are mandatory, write {}",
                            $expect
                        )))
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}
unit_serde!(Duration, "a duration string such as \"50ms\"");
unit_serde!(Rate, "a rate string such as \"10Mbps\"");
unit_serde!(Bytes, "a size string such as \"1500B\" or \"64KB\"");
unit_serde!(Limit, "a limit string such as \"100p\" or \"64KB\"");

impl Serialize for Fraction {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(self.0)
    }
}
impl<'de> Deserialize<'de> for Fraction {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Fraction;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a fraction such as 0.1 or \"10%\"")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Fraction, E> {
                Fraction::parse(v).map_err(|e| E::custom(e.0))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Fraction, E> {
                Fraction::checked(v).map_err(|e| E::custom(e.0))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Fraction, E> {
                self.visit_f64(v as f64)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Fraction, E> {
                self.visit_f64(v as f64)
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_exact_decimals() {
        assert_eq!(Rate::parse("1.5Mbps"), Ok(Rate(1_500_000)));
        assert_eq!(Rate::parse("56kbps"), Ok(Rate(56_000)));
        assert_eq!(Rate::parse("2.5MB/s"), Ok(Rate(20_000_000)));
        assert_eq!(Duration::parse("50ms"), Ok(Duration(50_000_000)));
        assert_eq!(Duration::parse("0.1s"), Ok(Duration(100_000_000)));
        assert_eq!(Duration::parse("10min"), Ok(Duration(600 * NS_PER_SEC)));
        assert_eq!(Bytes::parse("75KB"), Ok(Bytes(75_000)));
        assert_eq!(Bytes::parse("64KiB"), Ok(Bytes(65_536)));
        assert_eq!(Limit::parse("100p"), Ok(Limit::Packets(100)));
        assert_eq!(Limit::parse("64KB"), Ok(Limit::Bytes(64_000)));
        assert_eq!(Fraction::parse("10%"), Ok(Fraction(0.1)));
    }

    #[test]
    fn refuses_missing_or_unknown_units() {
        assert!(Rate::parse("10").unwrap_err().0.contains("units are mandatory"));
        assert!(Rate::parse("10Mb").unwrap_err().0.contains("unknown unit \"Mb\""));
        assert!(Duration::parse("-5ms").unwrap_err().0.contains("negative"));
        assert!(Bytes::parse("0.5B").unwrap_err().0.contains("whole number"));
        assert!(Limit::parse("100").unwrap_err().0.contains("packets (p) or bytes"));
        assert!(Fraction::parse("150%").is_err());
        // A text of 10,000 characters is refused by its length, quoted by its beginning.
        let long = format!("1{}", "x".repeat(9_999));
        assert_eq!(
            Rate::parse(&long).unwrap_err().0,
            format!(
                "\"1{}...\" (10000 characters) is not a quantity: a number and its unit take at most 40",
                "x".repeat(19)
            )
        );
        assert_eq!(
            Duration::parse(&format!("{}1s", " ".repeat(38))),
            Ok(Duration(NS_PER_SEC))
        );
    }

    #[test]
    fn transmission_time_is_exact_for_round_numbers() {
        assert_eq!(Rate(10_000_000).tx_time(1000), Duration(800_000));
        assert_eq!(Rate(1_500_000).tx_time(1500), Duration(8_000_000));
        // 576 B at 50 Mbit/s = 92.16 us
        assert_eq!(Rate(50_000_000).tx_time(576), Duration(92_160));
    }

    #[test]
    fn transmission_time_rounds_to_nearest_in_either_width() {
        // 1 B at 3 bit/s = 2.666... s; 1 B at 16 Gbit/s = 0.5 ns, rounded up.
        assert_eq!(Rate(3).tx_time(1), Duration(2_666_666_667));
        assert_eq!(Rate(16_000_000_000).tx_time(1), Duration(1));
        // 3 GB at 2 bit/s: 2.4e19 bit-ns overflows 64 bits; the 128-bit path gives 1.2e10 s.
        assert_eq!(Rate(2).tx_time(3_000_000_000), Duration(12_000_000_000_000_000_000));
    }

    #[test]
    fn display_round_trips() {
        for t in ["10Mbps", "56kbps", "1500B", "75KB", "100p", "50ms", "2s"] {
            let shown = match t {
                _ if t.ends_with("bps") => Rate::parse(t).unwrap().to_string(),
                _ if t.ends_with('p') => Limit::parse(t).unwrap().to_string(),
                _ if t.ends_with('B') => Bytes::parse(t).unwrap().to_string(),
                _ => Duration::parse(t).unwrap().to_string(),
            };
            assert_eq!(shown, t);
        }
    }
}
