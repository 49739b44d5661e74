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

source [file join [file dirname [info script]] common.tcl]
set scheduler [arguments "ns cbq.tcl prr|wrr TRACE \[DURATION_S\]"]
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
foreach {fid allot borrow} {1 0.2 false 2 0.3 true 3 0.5 true} {
    leaf_class $link $top $allot $borrow 1 20 $fid
}

foreach i {1 2 3} {
    set s($i) [$ns node]
    $ns simplex-link $s($i) $r 10Mb 1ms DropTail
    $ns simplex-link $r $s($i) 10Mb 1ms DropTail
    $ns queue-limit $s($i) $r 1000
}
cbr_source $s(1) $d 1 500 600kb 0.1
cbr_source $s(2) $d 2 1000 400kb 0.2
set tcp [new Agent/TCP/Sack1]
set tsink [new Agent/TCPSink/Sack1]
$tcp set fid_ 3
$ns attach-agent $s(3) $tcp
$ns attach-agent $d $tsink
$ns connect $tcp $tsink
set ftp [$tcp attach-app FTP]

$ns at 0.3 "$ftp start"
$ns at $duration "finish"
$ns run
