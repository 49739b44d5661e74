//! The engine's tie rule at a port (docs/ties.md, "arrivals first"), as exact event logs:
//! an arrival and the end of a transmission at one port at the same nanosecond, scheduled
//! in either order, an arrival at the instant an unwaited transmission ends, and a link
//! that CBQ held idle resuming at the instant of an arrival.

use super::*;

/// A drop-tail FIFO of one packet.
const FIFO: &str = r#"{ type = "droptail", limit = "1p" }"#;
/// DSD with a virtual queue of one packet: for blue packets alone, the same queue as
/// `FIFO` (local transparency to blue), but not a drop-tail FIFO, so the port takes no
/// shortcut (`Port::lone_at`): every packet goes through the discipline.
const DSD: &str = r#"{ type = "dsd", buffer = "1p", d = "3ms" }"#;

/// R -> D: 1 Mbit/s (a 125 B datagram takes 1 ms), 1 ms.
const SLOW: &str = "rate = \"1Mbps\"\ndelay = \"1ms\"";

/// Hosts S1..S4 reach R over 1 Gbit/s links (125 B take 1 us); R reaches D over `link`
/// through `queue`. Each flow sends one datagram of `size` at its start. `delays` are the
/// propagation delays of S1..S4 to R, `flows` (name, source, start).
fn network_of(queue: &str, link: &str, size: &str, delays: [&str; 4], flows: &[(&str, &str, &str)]) -> Simulation {
    let mut toml = String::from(
        "duration = \"20ms\"\n[nodes]\nhosts = [\"S1\", \"S2\", \"S3\", \"S4\", \"D\"]\nrouters = [\"R\"]\n",
    );
    for (i, delay) in delays.iter().enumerate() {
        toml += &format!(
            "[[link]]\nfrom = \"S{}\"\nto = \"R\"\nrate = \"1Gbps\"\ndelay = \"{delay}\"\n",
            i + 1
        );
    }
    toml += &format!("[[link]]\nfrom = \"R\"\nto = \"D\"\n{link}\nqueue = {queue}\n");
    for (name, src, start) in flows {
        toml += &format!(
            "[[flow]]\nname = \"{name}\"\nsrc = \"{src}\"\ndst = \"D\"\nstart = \"{start}\"\n\
             app = {{ type = \"cbr\", rate = \"1kbps\", size = \"{size}\" }}\n"
        );
    }
    let sc = crate::scenario::from_toml(&toml).expect("a valid scenario");
    crate::scenario::build(&sc, 1).expect("builds")
}

/// 125 B datagrams over the 1 Mbit/s link.
fn network(queue: &str, delays: [&str; 4], flows: &[(&str, &str, &str)]) -> Simulation {
    network_of(queue, SLOW, "125B", delays, flows)
}

/// Runs the simulation to its end, one line per event handled: time in ns, event, port,
/// flow of the packet; then, per flow, "delivered" or the cause of its drop.
fn event_log(sim: &mut Simulation) -> Vec<String> {
    sim.start();
    let mut log = Vec::new();
    while let Some((t, ev)) = sim.events.pop_before(sim.end) {
        sim.now = t;
        let port = |p: PortId| sim.net.ports[p as usize].name.clone();
        let line = match ev {
            Event::App(f) => format!("app {}", sim.flows[f as usize].name),
            Event::TxDone(p) => format!("tx_done {}", port(p)),
            Event::Resume(p) => format!("resume {}", port(p)),
            Event::Arrival(p, id, _) => {
                format!("arrival {} {}", port(p), sim.flows[sim.pkts[id].flow as usize].name)
            }
            other => format!("{other:?}"),
        };
        log.push(format!("{} {line}", t.0));
        sim.handle(ev);
    }
    for (i, f) in sim.flows.iter().enumerate() {
        let dropped: Vec<_> = sim
            .drops
            .keys()
            .filter(|k| k.0 == i as FlowId)
            .map(|k| k.2.name())
            .collect();
        match (f.stats.delivered_pkts, dropped.as_slice()) {
            (1, []) => log.push(format!("{} delivered", f.name)),
            (0, [cause]) => log.push(format!("{} dropped: {cause}", f.name)),
            other => panic!("{}: {other:?}", f.name),
        }
    }
    log
}

/// a and b reach R together at 10.001 ms: a goes onto R->D at once (until 11.001 ms), b
/// waits (the queue is full). c reaches R at 11.001 ms, the instant a's transmission ends.
fn a_b_then_c(c_delay: &str, c_start: &str) -> Vec<String> {
    let mut sim = network(
        FIFO,
        ["10ms", "10ms", c_delay, "1ms"],
        &[("a", "S1", "0s"), ("b", "S2", "0s"), ("c", "S3", c_start)],
    );
    event_log(&mut sim)
}

/// From 11.001 ms on, whichever of c's arrival and the end of a's transmission was
/// scheduled first: arrivals first, a's transmission occupies the link, b fills the
/// queue, c is refused; then the end of a's transmission starts b.
const AT_THE_TIE: [&str; 7] = [
    "11001000 arrival S3->R c",
    "11001000 tx_done R->D",
    "12001000 arrival R->D a",
    "13001000 arrival R->D b",
    "a delivered",
    "b delivered",
    "c dropped: overflow",
];

#[test]
fn an_arrival_scheduled_before_the_end_of_transmission_of_its_instant_comes_first() {
    // c's arrival at R is scheduled at 6 ms, when it enters its 5 ms wire, before the end
    // of a's transmission (scheduled at 10.001 ms, when b starts waiting for it).
    let before = [
        "0 app a",
        "0 app b",
        "6000000 app c",
        "10001000 arrival S1->R a",
        "10001000 arrival S2->R b",
    ];
    assert_eq!(a_b_then_c("5ms", "6ms"), [&before[..], &AT_THE_TIE[..]].concat());
}

#[test]
fn an_arrival_scheduled_after_the_end_of_transmission_of_its_instant_comes_first_too() {
    // c's arrival at R is scheduled at 10.5 ms (a 0.5 ms wire), after the end of a's
    // transmission: the same outcome, the same order of events. (Before the rule, the end
    // of transmission came first here, b started and c took its place in the queue.)
    let before = [
        "0 app a",
        "0 app b",
        "10001000 arrival S1->R a",
        "10001000 arrival S2->R b",
        "10500000 app c",
    ];
    assert_eq!(a_b_then_c("0.5ms", "10.5ms"), [&before[..], &AT_THE_TIE[..]].concat());
}

/// a alone on R->D (10.001 to 11.001 ms: nothing waits for the end of its transmission);
/// c and d reach R at 11.001 ms, the instant it ends.
fn a_then_c_and_d(queue: &str) -> Vec<String> {
    let mut sim = network(
        queue,
        ["10ms", "1ms", "5ms", "5ms"],
        &[("a", "S1", "0s"), ("c", "S3", "6ms"), ("d", "S4", "6ms")],
    );
    event_log(&mut sim)
}

#[test]
fn an_arrival_at_the_end_of_a_transmission_nobody_waited_for_waits() {
    // DSD: c waits for the end of a's transmission, which it schedules at 11.001 ms, after
    // the arrivals; d finds c waiting and the room full. (Before the rule c went straight
    // onto the link and d waited behind it.) The drop-tail FIFO: the same outcome without
    // the event: c, the first to start whatever arrives at 11.001 ms, starts at once, and
    // d counts it as waiting.
    let expected = |end_of_transmission: Option<&str>, d_dropped: &str| -> Vec<String> {
        let head = [
            "0 app a",
            "6000000 app c",
            "6000000 app d",
            "10001000 arrival S1->R a",
            "11001000 arrival S3->R c",
            "11001000 arrival S4->R d",
        ];
        let tail = [
            "12001000 arrival R->D a",
            "13001000 arrival R->D c",
            "a delivered",
            "c delivered",
            d_dropped,
        ];
        head.into_iter()
            .chain(end_of_transmission)
            .chain(tail)
            .map(String::from)
            .collect()
    };
    assert_eq!(
        a_then_c_and_d(DSD),
        expected(Some("11001000 tx_done R->D"), "d dropped: dsd_overflow")
    );
    assert_eq!(a_then_c_and_d(FIFO), expected(None, "d dropped: overflow"));
}

#[test]
fn a_link_never_used_is_free_at_time_zero() {
    // a and c leave S1 and S3 at 0, each straight onto its host's link, never used and
    // free at t = 0, and reach R together at 1.001 ms: a finds R->D never used and goes
    // straight onto it, c waits for the end of a's transmission.
    let mut sim = network(
        FIFO,
        ["1ms", "1ms", "1ms", "1ms"],
        &[("a", "S1", "0s"), ("c", "S3", "0s")],
    );
    assert_eq!(
        event_log(&mut sim),
        [
            "0 app a",
            "0 app c",
            "1001000 arrival S1->R a",
            "1001000 arrival S3->R c",
            "2001000 tx_done R->D",
            "3001000 arrival R->D a",
            "4001000 arrival R->D c",
            "a delivered",
            "c delivered",
        ]
    );
}

#[test]
fn transmissions_of_zero_time_keep_the_rule() {
    // R -> D at 1000 Gbit/s with no delay: a 28 B datagram takes 0.224 ns, 0 on dsim's clock.
    // A scenario may not declare such a link (validation refuses a rate at which the
    // smallest packet takes 0 ns, issue 28), so the rate is set after the build: the
    // engine keeps the rule all the same.
    // a, c and d reach R together at 1.000028 ms: a finds the link never used and is sent
    // (its transmission ends at once); c arrives at the instant it ends and waits for the
    // arrivals of that instant; d finds c waiting and the room full. DSD: the end of a's
    // transmission, after the arrivals, starts c; c reaches D at that same instant, an
    // arrival scheduled while the ends of transmission of the instant run, handled after
    // them. The drop-tail FIFO starts c at once and counts it as waiting for d.
    let run = |queue| {
        let mut sim = network_of(
            queue,
            "rate = \"1Gbps\"\ndelay = \"0s\"",
            "28B",
            ["1ms", "1ms", "1ms", "1ms"],
            &[("a", "S1", "0s"), ("c", "S3", "0s"), ("d", "S4", "0s")],
        );
        let r_d = sim.net.ports.iter_mut().find(|p| p.name == "R->D").expect("R->D");
        r_d.rate = crate::time::Rate(1_000_000_000_000);
        event_log(&mut sim)
    };
    let head = ["0 app a", "0 app c", "0 app d", "1000224 arrival S1->R a"];
    let mut dsd: Vec<&str> = head.to_vec();
    dsd.extend([
        "1000224 arrival S3->R c",
        "1000224 arrival S4->R d",
        "1000224 arrival R->D a",
        "1000224 tx_done R->D",
        "1000224 arrival R->D c",
        "a delivered",
        "c delivered",
        "d dropped: dsd_overflow",
    ]);
    assert_eq!(run(DSD), dsd);
    let mut fifo: Vec<&str> = head.to_vec();
    fifo.extend([
        "1000224 arrival S3->R c",
        "1000224 arrival S4->R d",
        "1000224 arrival R->D a",
        "1000224 arrival R->D c",
        "a delivered",
        "c delivered",
        "d dropped: overflow",
    ]);
    assert_eq!(run(FIFO), fifo);
}

#[test]
fn a_link_held_idle_by_cbq_resumes_after_the_arrivals_of_its_instant() {
    // Every packet is in one CBQ class bounded at a quarter of R->D (250 kbit/s: a 125 B
    // packet is worth 4 ms there, 1 ms on the link) without idle credit. a and b reach R
    // at 1.001 ms: a goes (undertime 1.001 + 4 ms + the avgidle penalty); at 2.001 ms,
    // the end of a, b may not go: the delay action leaves the class overlimit until 4 ms
    // after a started, 5.001 ms, when a resumption is due. c reaches R at that instant:
    // arrivals first, so c's arrival starts b (the class is no longer overlimit) and the
    // resumption, after it, finds the link busy. At 6.001 ms the class is overlimit again
    // until 4 ms after b started: c goes at 9.001 ms.
    let cbq = r#"{ type = "cbq", scheduler = "prr", classes = [
        { default = true, share = 0.25, borrow = false, maxidle = "0s" } ] }"#;
    let mut sim = network(
        cbq,
        ["1ms", "1ms", "5ms", "1ms"],
        &[("a", "S1", "0s"), ("b", "S2", "0s"), ("c", "S3", "0s")],
    );
    assert_eq!(
        event_log(&mut sim),
        [
            "0 app a",
            "0 app b",
            "0 app c",
            "1001000 arrival S1->R a",
            "1001000 arrival S2->R b",
            "2001000 tx_done R->D",
            "3001000 arrival R->D a",
            "5001000 arrival S3->R c",
            "5001000 resume R->D",
            "6001000 tx_done R->D",
            "7001000 arrival R->D b",
            "9001000 resume R->D",
            "11001000 arrival R->D c",
            "a delivered",
            "b delivered",
            "c delivered",
        ]
    );
}
