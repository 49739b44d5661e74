# CBQ side by side, the EF case: the bottleneck of RFC 2598 A.3 under ns-2's CBQ/WRR
# (2.35, Debian package ns2), run by validation/cbq/compare.py with
# validation/cbq/ef.toml. See docs/ef.md, "Validation against ns-2".
#
# usage: ns ef.tcl PRIORITY TRACE [DURATION_S]
#   PRIORITY: of every leaf class (0, ns-2's default, or 1). TRACE: the file for ns-2's
#   trace of every link (trace-all).
#
# E1..E8 and B1..B4 -> R over 100 Mbit/s, 0.1 ms; R -> D 1.5 Mbit/s, 10 ms, through
# Queue/CBQ/WRR; D -> R drop-tail. Under a root class of the whole link (allot 1.0, no
# borrowing, level 2), five leaves, maxidle "auto", extradelay 0, ancestors-only, maxpkt_
# 1024 (ns-2's defaults):
#   ef   eight CBR microflows of 56.25 kbit/s (450 kbit/s), fids 1-8, E1..E4 1500 B
#        packets, E5..E8 160 B: allot 0.309 (service/arrival 1.03), may NOT borrow, a
#        drop-tail queue of 100 packets;
#   c1..c4  one CBR of 500 kbit/s of 1500 B each, fids 11-14 (2 Mbit/s in all, the link
#        full): allot 0.17275 each, may borrow, drop-tail queues of 50 packets.

source [file join [file dirname [info script]] common.tcl]
set prio [arguments "ns ef.tcl 0|1 TRACE \[DURATION_S\]"]

set ns [new Simulator]
set tf [open $trace_file w]
$ns trace-all $tf

set r [$ns node]
set d [$ns node]
$ns simplex-link $r $d 1.5Mb 10ms CBQ/WRR
$ns simplex-link $d $r 1.5Mb 10ms DropTail
set link [$ns link $r $d]
[$link queue] set maxpkt_ 1024

set top [new CBQClass]
$top setparams none false 1.0 auto 8 2 0
$link insert $top
leaf_class $link $top 0.309 false $prio 100 {1 2 3 4 5 6 7 8}
foreach fid {11 12 13 14} {
    leaf_class $link $top 0.17275 true $prio 50 $fid
}

# Sources: fid, packet size, rate, start (s).
set sources {
    1 1500 56.25kb 0.011 2 1500 56.25kb 0.037 3 1500 56.25kb 0.053 4 1500 56.25kb 0.071
    5 160 56.25kb 0.013 6 160 56.25kb 0.029 7 160 56.25kb 0.043 8 160 56.25kb 0.067
    11 1500 500kb 0.002 12 1500 500kb 0.004 13 1500 500kb 0.006 14 1500 500kb 0.008
}
foreach {fid size rate start} $sources {
    set h [$ns node]
    $ns simplex-link $h $r 100Mb 0.1ms DropTail
    $ns queue-limit $h $r 1000
    cbr_source $h $d $fid $size $rate $start
}
$ns at $duration "finish"
$ns run
