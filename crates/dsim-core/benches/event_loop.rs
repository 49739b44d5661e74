//! Event-loop throughput on a CBR chain: hosts at both ends of a line of routers, CBR flows
//! crossing every hop at 90 % load. Nothing but packets moving through ports, so the time
//! per event is the engine's own cost. Criterion reports it as events per second. A second
//! case, thousands of identical CBR sources emitting at one instant, measures what an event
//! costs when it shares its instant with thousands of others (issue 28: it must not grow
//! with their number).

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use dsim_core::scenario;

pub fn chain_scenario(routers: usize, flows: usize, seconds: u64) -> String {
    let names: Vec<String> = (0..routers).map(|i| format!("\"R{i}\"")).collect();
    let mut s = format!(
        "duration = \"{seconds}s\"\n[nodes]\nhosts = [\"A\", \"B\"]\nrouters = [{}]\n",
        names.join(", ")
    );
    let mut hop = |a: &str, b: &str| {
        s += &format!("[[link]]\nfrom = \"{a}\"\nto = \"{b}\"\nrate = \"100Mbps\"\ndelay = \"1ms\"\n");
    };
    hop("A", "R0");
    for i in 1..routers {
        hop(&format!("R{}", i - 1), &format!("R{i}"));
    }
    hop(&format!("R{}", routers - 1), "B");
    let per_flow_kbps = 90_000 / flows;
    s += &format!(
        "[[flow]]\nname = \"cbr\"\ncount = {flows}\nsrc = \"A\"\ndst = \"B\"\napp = {{ type = \"cbr\", rate = \"{per_flow_kbps}kbps\", size = \"1000B\", spacing_variation = \"10%\" }}\n"
    );
    s
}

/// `flows` identical CBR sources on one host, each a 125 B packet every 100 ms from t = 0,
/// over a 1 Gbit/s link: every 100 ms, `flows` emissions are due at the same nanosecond
/// (tests/foundation.rs checks the order they are served in).
pub fn simultaneous_scenario(flows: usize, seconds: u64) -> String {
    format!(
        "duration = \"{seconds}s\"\n[nodes]\nhosts = [\"A\", \"B\"]\n[[link]]\nfrom = \"A\"\nto = \"B\"\nrate = \"1Gbps\"\ndelay = \"1ms\"\nqueue = {{ type = \"droptail\", limit = \"{flows}p\" }}\n[[flow]]\nname = \"cbr\"\ncount = {flows}\nsrc = \"A\"\ndst = \"B\"\napp = {{ type = \"cbr\", rate = \"10kbps\", size = \"125B\" }}\n"
    )
}

/// Runs `toml` once per iteration, its throughput counted in events.
fn bench_scenario(c: &mut Criterion, name: &str, toml: &str) {
    let sc = scenario::from_toml(toml).expect("valid");
    let mut probe = scenario::build(&sc, 1).expect("builds");
    probe.run();
    let events = probe.events_processed;
    let mut g = c.benchmark_group("event_loop");
    g.throughput(Throughput::Elements(events));
    g.sample_size(10);
    g.bench_function(name, |b| {
        b.iter(|| {
            let mut sim = scenario::build(&sc, 1).expect("builds");
            sim.run();
            assert_eq!(sim.events_processed, events);
        })
    });
    g.finish();
}

fn event_loop(c: &mut Criterion) {
    bench_scenario(c, "cbr_chain_10_routers_50_flows", &chain_scenario(10, 50, 2));
    for flows in [1_000, 8_000] {
        let name = format!("simultaneous_cbr_{flows}_flows");
        bench_scenario(c, &name, &simultaneous_scenario(flows, 2));
    }
}

criterion_group!(benches, event_loop);
criterion_main!(benches);
