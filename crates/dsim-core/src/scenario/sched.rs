//! From a scheduler spec (`priority`, `wrr`, `drr`, `cbq`) to a queue discipline, checking
//! every rule: the classes partition the 64 codepoints (each DSCP in at most one class,
//! exactly one default class unless every DSCP is listed), each class has the settings of
//! its scheduler and no others, weights >= 1, quanta >= 1 B, rates > 0, bursts >= 1 B.

use super::build::{build_aqm_queue, check_rate, err, quoted};
use super::schema::{CbqSpec, ClassSpec, ClassesSpec, QueueSpec, RoundRobinKind};
use crate::packet::Dscp;
use crate::params::{ConfigError, KeyPath};
use crate::sched::cbq::RoundRobin;
use crate::sched::classes::DSCP_COUNT;
use crate::sched::drr::DrrState;
use crate::sched::rate_limiter::{TokenBucket, TokenBucketParams};
use crate::sched::wrr::WrrState;
use crate::sched::{Cbq, ClassQueues, Drr, Priority, Qdisc, Wrr};
use crate::time::{Bytes, Rate};

type Result<T> = std::result::Result<T, ConfigError>;

pub fn build_scheduler(spec: &QueueSpec, rate: Rate, path: &KeyPath) -> Result<Qdisc> {
    let cp = path.key("classes");
    match spec {
        QueueSpec::Priority(ClassesSpec { classes }) => {
            let queues = class_queues(classes, rate, &cp)?;
            let mut limiters = Vec::with_capacity(classes.len());
            for (i, c) in classes.iter().enumerate() {
                let p = cp.index(i);
                only(c, &p, "priority", &["limit_rate", "limit_burst"])?;
                limiters.push(bucket(c.limit_rate, c.limit_burst, &p, ("limit_rate", "limit_burst"))?);
            }
            Ok(Qdisc::Priority(Priority::new(queues, limiters)))
        }
        QueueSpec::Wrr(ClassesSpec { classes }) => {
            let queues = class_queues(classes, rate, &cp)?;
            let mut weights = Vec::with_capacity(classes.len());
            for (i, c) in classes.iter().enumerate() {
                only(c, &cp.index(i), "wrr", &["weight"])?;
                weights.push(weight(c, &cp.index(i), "WRR")?);
            }
            Ok(Qdisc::Wrr(Wrr::new(queues, weights)))
        }
        QueueSpec::Drr(ClassesSpec { classes }) => {
            let queues = class_queues(classes, rate, &cp)?;
            let mut quanta = Vec::with_capacity(classes.len());
            for (i, c) in classes.iter().enumerate() {
                only(c, &cp.index(i), "drr", &["quantum"])?;
                quanta.push(quantum(c, &cp.index(i), "DRR")?);
            }
            Ok(Qdisc::Drr(Drr::new(queues, quanta)))
        }
        QueueSpec::Cbq(CbqSpec { scheduler, classes }) => {
            let queues = class_queues(classes, rate, &cp)?;
            let (share, shares) = match scheduler {
                RoundRobinKind::Wrr => ("weight", "weights"),
                RoundRobinKind::Drr => ("quantum", "quanta"),
            };
            let mut priority: Option<(usize, TokenBucket)> = None;
            for (i, c) in classes.iter().enumerate() {
                let p = cp.index(i);
                only(
                    c,
                    &p,
                    &format!("cbq (over {shares})"),
                    &[share, "priority_rate", "priority_burst"],
                )?;
                if let Some(tb) = bucket(
                    c.priority_rate,
                    c.priority_burst,
                    &p,
                    ("priority_rate", "priority_burst"),
                )? {
                    if let Some((j, _)) = priority {
                        return err(
                            p.key("priority_rate"),
                            quoted(&tb.params().rate.to_string()),
                            format!(
                                "classes[{j}] already has the priority allowance; a CBQ scheduler gives it to one class"
                            ),
                        );
                    }
                    priority = Some((i, tb));
                }
            }
            let Some((class, allowance)) = priority else {
                return Err(ConfigError::new(
                    cp,
                    None,
                    "a CBQ scheduler needs one class with priority_rate and priority_burst (the class served first up to that rate, e.g. EF)",
                ));
            };
            let rr = match scheduler {
                RoundRobinKind::Wrr => RoundRobin::Wrr(WrrState::new(
                    classes
                        .iter()
                        .enumerate()
                        .map(|(i, c)| weight(c, &cp.index(i), "CBQ-over-WRR"))
                        .collect::<Result<_>>()?,
                )),
                RoundRobinKind::Drr => RoundRobin::Drr(DrrState::new(
                    classes
                        .iter()
                        .enumerate()
                        .map(|(i, c)| quantum(c, &cp.index(i), "CBQ-over-DRR"))
                        .collect::<Result<_>>()?,
                )),
            };
            Ok(Qdisc::Cbq(Cbq::new(queues, class, allowance, rr)))
        }
        QueueSpec::Droptail(_) | QueueSpec::Red(_) | QueueSpec::Mred(_) | QueueSpec::Dsd(_) => {
            unreachable!("build_qdisc sends single queues elsewhere")
        }
    }
}

/// The classifier (DSCP -> class) and the classes' queues, checking that the classes
/// partition the codepoints.
fn class_queues(classes: &[ClassSpec], rate: Rate, cp: &KeyPath) -> Result<ClassQueues> {
    if classes.is_empty() {
        return Err(ConfigError::new(
            cp.clone(),
            None,
            "a scheduler needs at least one class (classes = [ { dscp = [...], ... }, { default = true, ... } ])",
        ));
    }
    let mut owner: [Option<usize>; DSCP_COUNT] = [None; DSCP_COUNT];
    let mut default: Option<usize> = None;
    let mut queues = Vec::with_capacity(classes.len());
    for (i, c) in classes.iter().enumerate() {
        let p = cp.index(i);
        if c.dscp.is_empty() && !c.default {
            return Err(ConfigError::new(
                p,
                None,
                "a class must list its codepoints (dscp = [\"EF\", ...]) or be the default class (default = true)",
            ));
        }
        for (k, d) in c.dscp.iter().enumerate() {
            match owner[d.0 as usize] {
                Some(j) if j == i => {
                    return err(
                        p.key("dscp").index(k),
                        quoted(&d.to_string()),
                        "listed twice in this class",
                    );
                }
                Some(j) => {
                    return err(
                        p.key("dscp").index(k),
                        quoted(&d.to_string()),
                        format!("{d} is already in classes[{j}]; a codepoint belongs to one class"),
                    );
                }
                None => owner[d.0 as usize] = Some(i),
            }
        }
        if c.default {
            if let Some(j) = default {
                return err(
                    p.key("default"),
                    true,
                    format!("classes[{j}] is already the default class; there can be only one"),
                );
            }
            default = Some(i);
        }
        queues.push(build_aqm_queue(&c.queue, rate, &p.key("queue"))?);
    }
    let mut map = [0u8; DSCP_COUNT];
    let mut unlisted = Vec::new();
    for (d, o) in owner.iter().enumerate() {
        match (*o, default) {
            (Some(i), _) | (None, Some(i)) => map[d] = i as u8,
            (None, None) => unlisted.push(Dscp(d as u8).to_string()),
        }
    }
    if !unlisted.is_empty() {
        let shown = if unlisted.len() > 8 {
            format!("{}, ... ({} in all)", unlisted[..8].join(", "), unlisted.len())
        } else {
            unlisted.join(", ")
        };
        return Err(ConfigError::new(
            cp.clone(),
            None,
            format!(
                "no class is the default and codepoints {shown} are in no class; set default = true on one class or list every codepoint"
            ),
        ));
    }
    Ok(ClassQueues::new(map, queues))
}

/// The optional settings of a class, with their values as written.
fn settings(c: &ClassSpec) -> [(&'static str, Option<String>); 6] {
    let s = |v: Option<String>| v.map(|x| quoted(&x));
    [
        ("weight", c.weight.map(|w| w.to_string())),
        ("quantum", s(c.quantum.map(|q| q.to_string()))),
        ("limit_rate", s(c.limit_rate.map(|r| r.to_string()))),
        ("limit_burst", s(c.limit_burst.map(|b| b.to_string()))),
        ("priority_rate", s(c.priority_rate.map(|r| r.to_string()))),
        ("priority_burst", s(c.priority_burst.map(|b| b.to_string()))),
    ]
}

/// Refuses any setting of `c` that a `kind` class does not have.
fn only(c: &ClassSpec, p: &KeyPath, kind: &str, allowed: &[&str]) -> Result<()> {
    for (name, value) in settings(c) {
        if let Some(v) = value {
            if !allowed.contains(&name) {
                return err(
                    p.key(name),
                    v,
                    format!(
                        "{name} is not a setting of a {kind} class (it takes dscp, default, queue, {})",
                        allowed.join(", ")
                    ),
                );
            }
        }
    }
    Ok(())
}

fn weight(c: &ClassSpec, p: &KeyPath, kind: &str) -> Result<u32> {
    match c.weight {
        None => Err(ConfigError::new(
            p.clone(),
            None,
            format!("a {kind} class needs a weight (packets per visit, an integer >= 1)"),
        )),
        Some(0) => err(
            p.key("weight"),
            0,
            "a weight is a number of packets per visit, at least 1",
        ),
        Some(w) => Ok(w),
    }
}

fn quantum(c: &ClassSpec, p: &KeyPath, kind: &str) -> Result<u64> {
    match c.quantum {
        None => Err(ConfigError::new(
            p.clone(),
            None,
            format!("a {kind} class needs a quantum (bytes per round, e.g. \"1500B\")"),
        )),
        Some(Bytes(0)) => err(p.key("quantum"), quoted("0B"), "a quantum must be at least 1 byte"),
        Some(Bytes(q)) => Ok(q),
    }
}

/// A token bucket from an optional (rate, burst) pair: both or neither.
fn bucket(rate: Option<Rate>, burst: Option<Bytes>, p: &KeyPath, keys: (&str, &str)) -> Result<Option<TokenBucket>> {
    let (rk, bk) = keys;
    match (rate, burst) {
        (None, None) => Ok(None),
        (Some(r), None) => err(
            p.key(rk),
            quoted(&r.to_string()),
            format!("{rk} needs {bk} (the token bucket depth, e.g. \"3000B\")"),
        ),
        (None, Some(b)) => err(
            p.key(bk),
            quoted(&b.to_string()),
            format!("{bk} needs {rk} (the token bucket rate, e.g. \"450kbps\")"),
        ),
        (Some(r), Some(b)) => {
            check_rate(r, p.key(rk))?;
            if b.0 == 0 {
                return err(
                    p.key(bk),
                    quoted(&b.to_string()),
                    "a bucket depth must be at least 1 byte (and at least one packet to pass any)",
                );
            }
            Ok(Some(TokenBucket::new(TokenBucketParams { rate: r, depth: b })))
        }
    }
}
