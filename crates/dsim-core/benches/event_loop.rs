//! Event-loop throughput on a CBR chain: hosts at both ends of a line of routers, CBR flows
//! crossing every hop at 90 % load. Nothing but packets moving through ports, so the time
//! per event is the engine's own cost. Criterion reports it as events per second.

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

fn event_loop(c: &mut Criterion) {
    let sc = scenario::from_toml(&chain_scenario(10, 50, 2)).expect("valid");
    let mut probe = scenario::build(&sc, 1).expect("builds");
    probe.run();
    let events = probe.events_processed;
    let mut g = c.benchmark_group("event_loop");
    g.throughput(Throughput::Elements(events));
    g.sample_size(10);
    g.bench_function("cbr_chain_10_routers_50_flows", |b| {
        b.iter(|| {
            let mut sim = scenario::build(&sc, 1).expect("builds");
            sim.run();
            assert_eq!(sim.events_processed, events);
        })
    });
    g.finish();
}

criterion_group!(benches, event_loop);
criterion_main!(benches);
