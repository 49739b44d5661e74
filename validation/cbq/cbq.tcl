# CBQ side by side: the network of validation/cbq/cbq.toml in ns-2 (2.35, Debian package
# ns2), run by validation/cbq/compare.py. See docs/ef.md, "Validation against ns-2".
#
# usage: ns cbq.tcl SCHEDULER TRACE [DURATION_S]
#   SCHEDULER: "prr" (Queue/CBQ) or "wrr" (Queue/CBQ/WRR). TRACE: the file for ns-2's
#   trace of every link (trace-all), which compare.py reads.
#
# S1, S2, S3 -> R over 10 Mbit/s, 1 ms; R -> D 1.5 Mbit/s, 10 ms, through CBQ; D -> R the
# same, drop-tail (the ACKs). Three leaf classes under a root class of the whole link
# (allot 1.0, no borrowing, level 2), all at priority 1, maxidle "auto", extradelay 0,
# the link-sharing guideline ns-2's default (ancestors-only), maxpkt_ 1000:
#   a  CBR 600 kbit/s of 500 B from S1, fid 1: allot 0.2 (300 kbit/s), may NOT borrow;
#   b  CBR 400 kbit/s of 1000 B from S2, fid 2: allot 0.3, may borrow;
#   c  one FTP over SACK TCP from S3, fid 3: allot 0.5, may borrow.
# Each class a drop-tail queue of 20 packets.

if {$argc < 2 || $argc > 3} {
    puts stderr "usage: ns cbq.tcl prr|wrr TRACE \[DURATION_S\]"
    exit 2
}
set scheduler [lindex $argv 0]
set trace_file [lindex $argv 1]
set duration [expr {$argc > 2 ? [lindex $argv 2] : 60}]
if {$scheduler ni {prr wrr}} {
    puts stderr "SCHEDULER $scheduler: prr or wrr"
    exit 2
}

set ns [new Simulator]
set tf [open $trace_file w]
$ns trace-all $tf

# TCP as dsim's peers benchmark configures it (benchmarks/peers/dumbbell.tcl): SACK, 536 B
# of payload (576 B packets), window 100 segments, initial window 2, packet counting, RTO
# clock 10 ms, minimum 200 ms, initial 3 s, no SYN.
Agent/TCP set packetSize_ 536
Agent/TCP set window_ 100
Agent/TCP set windowInit_ 2
Agent/TCP set tcpTick_ 0.01
Agent/TCP set minrto_ 0.2
Agent/TCP set rtxcur_init_ 3.0
Agent/TCP set syn_ false
Agent/TCP set delay_growth_ false

set r [$ns node]
set d [$ns node]
set kind [dict get {prr CBQ wrr CBQ/WRR} $scheduler]
$ns simplex-link $r $d 1.5Mb 10ms $kind
$ns simplex-link $d $r 1.5Mb 10ms DropTail
$ns queue-limit $d $r 1000
set link [$ns link $r $d]
# Before the classes are inserted: WRR's round and maxidle "auto" read it then.
[$link queue] set maxpkt_ 1000

set top [new CBQClass]
$top setparams none false 1.0 auto 8 2 0
$link insert $top
foreach {name fid allot borrow} {a 1 0.2 false b 2 0.3 true c 3 0.5 true} {
    set cl($name) [new CBQClass]
    set q [new Queue/DropTail]
    $q set limit_ 20
    $cl($name) install-queue $q
    $cl($name) setparams $top $borrow $allot auto 1 1 0
    $link insert $cl($name)
    $link bind $cl($name) $fid
}

foreach {i start} {1 0.1 2 0.2 3 0.3} {
    set s($i) [$ns node]
    $ns simplex-link $s($i) $r 10Mb 1ms DropTail
    $ns simplex-link $r $s($i) 10Mb 1ms DropTail
    $ns queue-limit $s($i) $r 1000
}
foreach {i size rate} {1 500 600kb 2 1000 400kb} {
    set udp($i) [new Agent/UDP]
    $udp($i) set packetSize_ 1500
    $udp($i) set fid_ $i
    $ns attach-agent $s($i) $udp($i)
    set sink($i) [new Agent/Null]
    $ns attach-agent $d $sink($i)
    $ns connect $udp($i) $sink($i)
    set cbr($i) [new Application/Traffic/CBR]
    $cbr($i) set packetSize_ $size
    $cbr($i) set rate_ $rate
    $cbr($i) set random_ 0
    $cbr($i) attach-agent $udp($i)
}
set tcp [new Agent/TCP/Sack1]
set tsink [new Agent/TCPSink/Sack1]
$tcp set fid_ 3
$ns attach-agent $s(3) $tcp
$ns attach-agent $d $tsink
$ns connect $tcp $tsink
set ftp [$tcp attach-app FTP]

$ns at 0.1 "$cbr(1) start"
$ns at 0.2 "$cbr(2) start"
$ns at 0.3 "$ftp start"
proc finish {} {
    global ns tf
    $ns flush-trace
    close $tf
    exit 0
}
$ns at $duration "finish"
$ns run
