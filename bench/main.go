// Command bench measures backupmon on this machine (issue 2, bench/RESULTS.md):
//
//	go run ./bench report [flags]    Report API load over loopback: the real server, then a bare fasthttp handler;
//	                                 with -rates, an open loop at fixed rates against the server (issue 21)
//	go run ./bench read [flags]      REST API read load over loopback: the real server, then a bare fasthttp handler
//	go run ./bench recovery [flags]  restart time and resident memory of a large state
//	go run ./bench backup [flags]    a backup of a large state, read back and restored, against its snapshot
//	go run ./bench fsync [flags]     the disk's write+fsync latency
//	go run ./bench mail [flags]      report e-mails per second through the SMTP listener over loopback, durable
//	go run ./bench cluster [flags]   issue 20: reports/s and REST reads through a local cluster (3 NATS, 3 nodes) against a single node
//	go run ./bench scale [flags]     issue 8: 20,000,000 results; restart, memory, reads under reports and a noisy neighbour, retention
//
// Each command starts and stops what it measures and removes its temporary
// data directory; `go run ./bench <command> -h` lists its flags.
package main

import (
	"fmt"
	"os"
)

// commands are the bench commands and the children they start, by name.
var commands = map[string]func(args []string) int{
	"report":         reportMain,
	"read":           readMain,
	"recovery":       recoveryMain,
	"backup":         backupMain,
	"fsync":          fsyncMain,
	"missing":        missingMain,
	"mail":           mailMain,
	"scale":          scaleMain,
	"cluster":        clusterMain,
	targetChildCmd:   targetChild,
	recoveryChildCmd: recoveryChild,
	mailTargetCmd:    mailTargetChild,
}

func main() {
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	cmd, args := os.Args[1], os.Args[2:]
	switch run, ok := commands[cmd]; {
	case ok:
		os.Exit(run(args))
	case cmd == "-h" || cmd == "-help" || cmd == "--help" || cmd == "help":
		usage()
	default:
		fmt.Fprintf(os.Stderr, "bench: unknown command %q\n", cmd)
		usage()
		os.Exit(2)
	}
}

func usage() {
	fmt.Fprint(os.Stderr, `usage: go run ./bench <command> [flags]

commands:
  report     Report API load over loopback against the real server (engine +
             transport in-process, fresh data directory), then the same load
             against a bare fasthttp handler; last line: ratio <x> p99x <y>.
             -rates 2000,5000,10000,20000: an open loop against the server
             alone instead, one phase per rate (reports sent on a fixed
             schedule over -rate-conns connections, 10% failed, latency from
             each one's scheduled time): per rate, answered/s, p50, p99, max,
             errors, server CPU per report, reports per fsync; then issue
             21's targets at 10,000/s and more (exit 1 when one is not met)
  read       REST API reads over loopback (/jobs?limit=50, /alerts?status=
             unresolved, /health, round-robin over many Pro workspaces) against
             the real server, then the same against a bare fasthttp handler
             serving the server's answers; last line: ratio <x> p99x <y>
  recovery   build 1,000,000 results across 100,000 jobs, restart, print the
             restart time, heap, RSS and bytes per job and per result
  backup     build 1,000,000 results across 100,000 jobs; a backup of them
             against their snapshot (time, size), the longest an actor is held
             by its encoding, the read-back check, a restore and its opening
  fsync      write+fsync latency of the disk holding the data directory
  mail       report e-mails over SMTP on loopback (32 connections, many
             transactions each) to the real server (engine, mail store and
             smtpin in a child process, fresh data directory): samples of
             testdata/emails grown to 12-60 KB; last line: mails/s <x>
  cluster    a local cluster (three NATS servers and three nodes of the
             backupmon binary on loopback) and a single node of the same
             binary: REST reads direct and forwarded (closed loop, then paced
             at -read-pace), durable reports/s sent to each workspace's owner
             and to any node, the same on the single node; CPU per request of
             every process; the issue's targets, met or not (exit 1 when one
             is not); -phases reports for a -shards sweep
  scale      10,000 Pro workspaces, 200,000 jobs, 20,000,000 results built
             in-process; restart time and memory per job and per result;
             the server in a child under REST reads, reads + 10% of the
             workspaces reporting, reads + one noisy workspace; retention at
             30 days; -soak 10m for a long mixed run (many minutes; try
             -workspaces 100 -results 40 -duration 3s first)
`)
}
