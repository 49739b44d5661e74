//! TCP event-loop throughput: 100 long-lived SACK flows (ten sources of ten flows, RTTs
//! 32 to 122 ms, 536-byte MSS as in seed 002) through a 50 Mbit/s drop-tail bottleneck.
//! Criterion reports events per second; the run's simulated time is 20 s.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use dsim_core::scenario;

pub fn dumbbell(sources: usize, flows_per_source: usize, seconds: u64) -> String {
    let mut s = format!("duration = \"{seconds}s\"\n[nodes]\nhosts = [");
    let hosts: Vec<String> = (0..sources)
        .flat_map(|i| [format!("\"S{i}\""), format!("\"D{i}\"")])
        .collect();
    s += &hosts.join(", ");
    s += "]\nrouters = [\"R1\", \"R2\"]\n";
    for i in 0..sources {
        s += &format!(
            "[[link]]\nfrom = \"S{i}\"\nto = \"R1\"\nrate = \"100Mbps\"\ndelay = \"{}ms\"\n",
            5 + 5 * i
        );
        s += &format!("[[link]]\nfrom = \"R2\"\nto = \"D{i}\"\nrate = \"100Mbps\"\ndelay = \"1ms\"\n");
    }
    s += "[[link]]\nfrom = \"R1\"\nto = \"R2\"\nrate = \"50Mbps\"\ndelay = \"10ms\"\nqueue = { type = \"droptail\", limit = \"500p\" }\n";
    for i in 0..sources {
        s += &format!(
            "[[flow]]\nname = \"f{i}\"\ncount = {flows_per_source}\nsrc = \"S{i}\"\ndst = \"D{i}\"\nstart = {{ uniform = [\"0s\", \"1s\"] }}\napp = {{ type = \"ftp\" }}\ntcp = {{ mss = \"536B\" }}\n"
        );
    }
    s
}

fn tcp_flows(c: &mut Criterion) {
    let sc = scenario::from_toml(&dumbbell(10, 10, 20)).expect("valid");
    let mut probe = scenario::build(&sc, 1).expect("builds");
    probe.run();
    let events = probe.events_processed;
    let mut g = c.benchmark_group("tcp");
    g.throughput(Throughput::Elements(events));
    g.sample_size(10);
    g.bench_function("sack_dumbbell_100_flows", |b| {
        b.iter(|| {
            let mut sim = scenario::build(&sc, 1).expect("builds");
            sim.run();
            assert_eq!(sim.events_processed, events);
        })
    });
    g.finish();
}

criterion_group!(benches, tcp_flows);
criterion_main!(benches);
