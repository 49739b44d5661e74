"""TCP flows from Python: the builder, validation messages, result columns, the series
table, pcap captures (read back with tshark when it is installed) and the CLI."""

from __future__ import annotations

import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

import dsim
from dsim import Scenario, ScenarioError, drop, exponential, ftp, pareto, tcp, uniform, web


def two_hosts(loss: float | None = None, **flow) -> Scenario:
    sc = Scenario(duration="10s", warmup="2s", name="tcp-test")
    sc.hosts("A", "B")
    sc.link("A", "B", rate="10Mbps", delay="10ms", forward={"loss": loss} if loss else None)
    flow.setdefault("app", ftp())
    sc.flow("bulk", src="A", dst="B", **flow)
    return sc


def test_builder_writes_the_schema_and_round_trips():
    sc = two_hosts(
        tcp=tcp("newreno", mss="1000B", window="128KB", delayed_ack=False, initial_window="2p", rto_restart="on_new_ack", series="100ms"),
        start=uniform("0s", "1s"),
    )
    sc.flow(
        "browse",
        src="A",
        dst="B",
        app=web(pareto("12KB", 1.2, max="2MB"), exponential("1s"), request="350B"),
    )
    sc.capture(port="A->B", name="uplink")
    sc.validate()
    text = sc.to_toml()
    assert 'variant = "newreno"' in text and "delayed_ack = false" in text and 'rto_restart = "on_new_ack"' in text
    again = Scenario.from_toml(text)
    assert again.data == sc.data
    assert again.hash() == sc.hash()


def test_tcp_flow_columns_and_goodput():
    res = dsim.run(two_hosts(tcp=tcp(series="500ms")), seed=1)
    row = res.flows.iloc[0]
    assert row["transport"] == "tcp"
    # One flow alone on a clean 10 Mbit/s link: goodput = 10 Mbit/s x 1460 / 1500.
    assert row["goodput_bps"] == pytest.approx(10e6 * 1460 / 1500, rel=0.01)
    assert row["retransmitted_pkts"] == 0 and row["timeouts"] == 0
    assert row["rtt_mean_ms"] > 20
    # The series: every 500 ms of the 8 s window.
    s = res.series
    assert list(s.columns) == ["replication", "flow", "time_s", "cwnd_bytes", "ssthresh_bytes", "flight_bytes", "srtt_ms", "rto_ms"]
    assert len(s) == 16
    assert s["time_s"].iloc[0] == pytest.approx(2.0)
    assert (s["cwnd_bytes"] > 0).all()


def test_cubic_and_dctcp_series_show_their_state():
    # CUBIC's W_max and K, DCTCP's Alpha, in the series table of the flows that run them.
    sc = two_hosts(tcp=tcp(congestion="cubic", window="1MB", series="500ms"))
    sc.set("link[0].queue", dsim.droptail("30p", mark_threshold="10p"))
    sc.flow("d", src="A", dst="B", app=ftp(), tcp=tcp(congestion="dctcp", ecn=True, window="1MB", series="500ms"))
    s = dsim.run(sc, seed=1).series
    assert {"cubic_wmax_bytes", "cubic_k_s", "dctcp_alpha"} <= set(s.columns)
    bulk, d = s[s.flow == "bulk"], s[s.flow == "d"]
    assert bulk["cubic_wmax_bytes"].notna().any() and bulk["dctcp_alpha"].isna().all()
    assert d["cubic_wmax_bytes"].isna().all()
    assert ((d["dctcp_alpha"] >= 0) & (d["dctcp_alpha"] <= 1)).all()


def test_udp_flows_get_empty_tcp_columns_and_random_starts():
    # 125 packets/s; a start uniform in [3 s, 5 s] leaves 5 to 7 s of the [2 s, 10 s) window.
    sc = two_hosts(app=dsim.cbr(rate="1Mbps", size="1000B"), start=uniform("3s", "5s"))
    res = dsim.run(sc, seed=3, replications=4)
    flows = res.flows
    assert (flows["transport"] == "udp").all()
    assert flows["goodput_bps"].isna().all()
    assert res.series.empty
    sent = flows["sent_pkts"]
    assert ((sent >= 625) & (sent <= 875)).all(), list(sent)
    assert sent.nunique() > 1, "each replication draws its own start"


BAD = [
    # (edit of the scenario, key path, words of the rule)
    (lambda sc: sc.set("flow[0].app", dsim.cbr(rate="1Mbps", size="100B")).set("flow[0].tcp", tcp("sack")), "flow[0].tcp", "TCP applications"),
    (lambda sc: sc.set("flow[0].tcp", tcp(mss="0B")), "flow[0].tcp.mss", "mss must lie in [1B, 65495B]"),
    (lambda sc: sc.set("flow[0].tcp", tcp(mss="1460B", window="1000B")), "flow[0].tcp.window", "at least one segment"),
    (lambda sc: sc.set("flow[0].tcp", tcp(delayed_ack="1s")), "flow[0].tcp.delayed_ack", "500ms"),
    (lambda sc: sc.set("flow[0].tcp", tcp(sack_blocks=5)), "flow[0].tcp.sack_blocks", "sack_blocks must lie in [1, 4]"),
    (lambda sc: sc.set("flow[0].tcp", {"variant": "vegas"}), "flow[0].tcp.variant", "variant"),
    (lambda sc: sc.set("flow[0].tcp", {"cwnd": "10p"}), "flow[0].tcp.cwnd", "unknown field"),
    (lambda sc: sc.set("flow[0].tcp", tcp(min_rto="2s", max_rto="1s")), "flow[0].tcp.min_rto", "max_rto"),
    (lambda sc: sc.set("flow[0].tcp", tcp(rto_restart="always")), "flow[0].tcp.rto_restart", "`on_retransmit` or `on_new_ack`"),
    (lambda sc: sc.set("flow[0].tcp", tcp(series="0s")), "flow[0].tcp.series", "longer than 0s"),
    (lambda sc: sc.set("flow[0].tcp", tcp(congestion="dctcp")), "flow[0].tcp.ecn", "needs ecn = true"),
    (lambda sc: sc.set("flow[0].tcp", tcp(cubic=dsim.cubic(beta=0.8))), "flow[0].tcp.cubic", 'configures congestion = "cubic"'),
    (lambda sc: sc.set("flow[0].tcp", tcp(congestion="cubic", cubic=dsim.cubic(c=0))), "flow[0].tcp.cubic.c", "c must be greater than 0"),
    (lambda sc: sc.set("flow[0].tcp", tcp(congestion="vegas")), "flow[0].tcp.congestion", "`reno`, `cubic`, `dctcp`"),
    (lambda sc: sc.set("link[0].queue", dsim.droptail("20p", mark_threshold="20p")), "link[0].queue.mark_threshold", "below the queue limit"),
    (lambda sc: sc.set("flow[0].app", ftp("0B")), "flow[0].app.bytes", "at least 1B"),
    (lambda sc: sc.set("flow[0].app", web(pareto("10KB", 1.0), exponential("1s"))), "flow[0].app.response.shape", "shape must be greater than 1"),
    (lambda sc: sc.set("flow[0].app", web(pareto("10KB", 1.5), exponential("1s"), request="2000B")), "flow[0].app.request", "one segment"),
    (lambda sc: sc.set("flow[0].app", web(pareto("10KB", 1.5), exponential("1s"))).set("flow[0].tcp", tcp(handshake=True)), "flow[0].tcp.handshake", "persistent"),
    (lambda sc: sc.set("flow[0].start", uniform("2s", "1s")), "flow[0].start.uniform", "first bound"),
    (lambda sc: sc.set("flow[0].start", uniform("0s", "20s")), "flow[0].start", "after the run ends"),
    (lambda sc: sc.set("flow[0].start", {"between": ["0s", "1s"]}), "flow[0].start", "uniform"),
    (lambda sc: sc.capture(port="B->C"), "capture[0].port", "no link direction"),
    (lambda sc: sc.capture(port="A->B", node="A"), "capture[0]", "exactly one"),
    (lambda sc: sc.capture(node="A", name="x/y"), "capture[0].name", "file name"),
    (lambda sc: sc.capture(node="A", snaplen="40B"), "capture[0].snaplen", "80B to 65535B"),
    (lambda sc: sc.set("link[0].forward", {"drop": [drop("nobody", packet=3)]}), "link[0].forward.drop[0].flow", "no flow"),
    (lambda sc: sc.set("link[0].forward", {"drop": [drop("bulk", packet=3, segment=2)]}), "link[0].forward.drop[0]", "exactly one"),
    (lambda sc: sc.set("link[0].forward", {"drop": [drop("bulk", segment=2, occurrence=0)]}), "link[0].forward.drop[0].occurrence", "from 1"),
]


@pytest.mark.parametrize("edit,path,rule", BAD)
def test_bad_tcp_keys_name_the_key_and_the_rule(edit, path, rule):
    sc = two_hosts()
    edit(sc)
    with pytest.raises(ScenarioError) as e:
        sc.validate()
    assert e.value.path == path, str(e.value)
    assert rule in str(e.value)


def test_segment_drops_apply_to_tcp_flows_only():
    sc = two_hosts(app=dsim.cbr(rate="1Mbps", size="1000B"))
    sc.set("link[0].forward", {"drop": [drop("bulk", segment=2)]})
    with pytest.raises(ScenarioError, match="not a TCP flow"):
        sc.validate()


def test_scripted_drop_is_counted_and_repaired():
    sc = two_hosts(tcp=tcp("sack"))
    sc.set("warmup", "0s")
    sc.set("link[0].forward", {"drop": [drop("bulk", segment=50), drop("bulk", segment=50, occurrence=2)]})
    row = dsim.run(sc, seed=1).flows.iloc[0]
    assert row["drop_scripted_pkts"] == 2
    assert row["fast_retransmits"] == 1 and row["timeouts"] == 1 and row["retransmitted_pkts"] == 2


def test_no_capture_dir_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    sc = two_hosts()
    sc.capture(node="A")
    dsim.run(sc, seed=1)
    assert not list(tmp_path.iterdir())


def read_pcap(path: Path) -> tuple[int, int, list[tuple[int, int]]]:
    """(link type, snapshot length, [(captured, original length)]) of a pcap file."""
    data = path.read_bytes()
    magic, _major, _minor, _zone, _sigfigs, snaplen, linktype = struct.unpack_from("<IHHiIII", data, 0)
    assert magic == 0xA1B23C4D, "nanosecond pcap"
    records, at = [], 24
    while at < len(data):
        _sec, nsec, caught, orig = struct.unpack_from("<IIII", data, at)
        assert nsec < 1_000_000_000
        records.append((caught, orig))
        at += 16 + caught
    assert at == len(data)
    return linktype, snaplen, records


def test_capture_files_are_pcap_with_the_simulated_sizes(tmp_path):
    sc = two_hosts(tcp=tcp("sack"))
    sc.capture(port="A->B", name="full")
    sc.capture(port="B->A", name="acks", snaplen="80B")
    res = dsim.run(sc, seed=1, capture_dir=tmp_path, replications=2)
    for r in (0, 1):
        linktype, snaplen, records = read_pcap(tmp_path / f"full-r{r}.pcap")
        assert (linktype, snaplen) == (101, 65535)
        assert {orig for _, orig in records} == {1500}
        assert all(caught == orig for caught, orig in records)
        # The capture holds every data segment sent (the run's window is from 2 s on).
        assert len(records) >= res.flows["sent_pkts"].iloc[r]
        _, snaplen, acks = read_pcap(tmp_path / f"acks-r{r}.pcap")
        assert snaplen == 80 and {orig for _, orig in acks} == {40}


def run_capture(tmp_path: Path, variant: str) -> tuple[Path, int]:
    sc = two_hosts(loss=0.01, tcp=tcp(variant))
    sc.set("warmup", "0s")
    sc.capture(node="A", name="sender")
    res = dsim.run(sc, seed=2, capture_dir=tmp_path)
    pcap = tmp_path / "sender-r0.pcap"
    assert pcap.exists() and pcap.stat().st_size > 24
    return pcap, int(res.flows.iloc[0]["retransmitted_pkts"])


def tshark(*args: str) -> str:
    """tshark's standard output (its standard error only carries notices such as running
    as root; a read error fails the call)."""
    out = subprocess.run(["tshark", *args], capture_output=True, text=True, timeout=120, check=True)
    return out.stdout


@pytest.mark.parametrize("variant", ["reno", "newreno", "sack"])
def test_tshark_reads_the_capture_and_counts_the_retransmissions(tmp_path, variant):
    if shutil.which("tshark") is None:
        pytest.skip("tshark is not installed (apt-get install tshark); .ci/run installs it")
    pcap, retransmitted = run_capture(tmp_path, variant)
    assert retransmitted > 10
    checks = ["-o", "ip.check_checksum:TRUE", "-o", "tcp.check_checksum:TRUE"]
    everything = tshark("-r", str(pcap), *checks, "-V")
    assert "Malformed" not in everything
    frames = len(tshark("-r", str(pcap), "-T", "fields", "-e", "frame.number").split())
    assert everything.count("[Header checksum status: Good]") == frames
    assert everything.count("[Checksum Status: Good]") == frames
    expert = tshark("-r", str(pcap), *checks, "-q", "-z", "expert,error")
    assert "Errors (" not in expert, expert
    # Captured at the sender, every segment below the highest sequence number sent is a
    # retransmission. Wireshark flags most as "retransmission"; one sent within 3 ms of
    # the highest segment (a SACK sender repairing a second hole) it calls
    # "out-of-order" instead (its heuristic, without a handshake RTT). Both together are
    # exactly the retransmissions dsim counted.
    from_sender = "ip.src == 10.0.0.1 && tcp.len > 0"
    flagged = tshark("-r", str(pcap), "-Y", f"{from_sender} && (tcp.analysis.retransmission || tcp.analysis.out_of_order)", "-T", "fields", "-e", "frame.number")
    assert len(flagged.split()) == retransmitted
    marked = tshark("-r", str(pcap), "-Y", f"{from_sender} && tcp.analysis.retransmission", "-T", "fields", "-e", "frame.number")
    assert len(marked.split()) >= 0.9 * retransmitted


def test_cli_run_prints_the_tcp_table_and_writes_the_capture(tmp_path):
    sc = two_hosts(tcp=tcp("sack"))
    sc.capture(port="A->B")
    path = tmp_path / "tcp.toml"
    path.write_text(sc.to_toml())
    out = tmp_path / "out"
    exe = Path(sys.executable).with_name("dsim")
    done = subprocess.run([str(exe), "run", str(path), "--out", str(out), "--format", "csv"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "TCP flows" in done.stdout and "goodput" in done.stdout
    assert (out / "A-B-r0.pcap").exists()
    assert (out / "series.csv").exists()
