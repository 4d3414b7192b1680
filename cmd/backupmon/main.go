// Command backupmon is the backup monitoring service: `backupmon serve` runs
// it, `backupmon admin ...` drives its admin API.
package main

import (
	"fmt"
	"os"
)

const usage = `backupmon: backup monitoring service

Usage:
  backupmon serve [flags]        run the service (backupmon serve -h for flags)
  backupmon admin <cmd> [flags]  call the admin API (backupmon admin help; admin backup --out F backs it up)
  backupmon restore [flags]      make a new data directory from a backup (--backup F or -, --data D)
  backupmon mcp --key-file F     the assistant server (MCP) over stdio, relayed to a running server
  backupmon nats [flags]         a NATS server with JetStream for a cluster (backupmon nats -h)
  backupmon cluster local        three NATS servers and three nodes on this machine, with the demo (make cluster)
  backupmon cluster cert         the certificate of a cluster member, from the cluster's own authority
  backupmon cluster import       move a single node's workspaces, or a backup, into a cluster
  backupmon cluster accept-loss  serve a shard whose stream lost its tail on what it holds
`

// commands are backupmon's first words.
var commands = []string{"serve", "admin", "restore", "mcp", "nats", "cluster", "help"}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	switch os.Args[1] {
	case "serve":
		os.Exit(serve(os.Args[2:]))
	case "admin":
		os.Exit(adminCLI(os.Args[2:], os.Stdout, os.Stderr))
	case "restore":
		os.Exit(restoreCommand(os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
	case "mcp":
		os.Exit(mcpCommand(os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
	case "nats":
		os.Exit(natsCommand(os.Args[2:], os.Stdout, os.Stderr))
	case "cluster":
		os.Exit(clusterCommand(os.Args[2:], os.Stdout, os.Stderr))
	case "help", "-h", "--help":
		fmt.Print(usage)
	default:
		fmt.Fprintf(os.Stderr, "backupmon: unknown command %q; did you mean %q? (backupmon help lists the commands)\n", os.Args[1], nearestWord(os.Args[1], commands))
		os.Exit(2)
	}
}
