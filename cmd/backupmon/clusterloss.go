package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"backupmon/cluster"
)

// clusterAcceptLoss runs `backupmon cluster accept-loss`: a shard whose
// stream ends before its mark (acknowledged messages gone, the shard
// served read-only since) is served again on what its stream holds. It
// says what it found; without --yes it changes nothing.
func clusterAcceptLoss(args []string, out, errOut io.Writer) int {
	fs := flag.NewFlagSet("cluster accept-loss", flag.ContinueOnError)
	fs.SetOutput(errOut)
	shard := fs.Int("shard", -1, "the shard (backupmon admin cluster shows it broken)")
	yes := fs.Bool("yes", false, "accept the loss: without it, only say what was lost")
	conn := clusterConnFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	urls, creds, err := conn.credentials()
	if err == nil && *shard < 0 {
		err = errors.New("--shard is required")
	}
	if err != nil {
		fmt.Fprintln(errOut, "backupmon cluster accept-loss:", err)
		return 2
	}
	check := cluster.LostTailOf
	if *yes {
		check = cluster.AcceptLoss
	}
	found, err := check(urls, creds, *shard)
	if err != nil {
		fmt.Fprintln(errOut, "backupmon cluster accept-loss:", err)
		return 1
	}
	if !found.Lost() {
		fmt.Fprintf(out, "shard %d: its stream ends at message %d and its mark is %d: nothing was lost; nothing changed\n", found.Shard, found.StreamEnd, found.Mark)
		return 0
	}
	if !*yes {
		fmt.Fprintf(out, "shard %d: its stream ends at message %d, but message %d was acknowledged: %d messages are gone.\nBack the cluster up first (backupmon admin backup); then give --yes to serve the shard on what its stream holds.\n", found.Shard, found.StreamEnd, found.Mark, found.Mark-found.StreamEnd)
		return 1
	}
	fmt.Fprintf(out, "shard %d: the loss of messages %d to %d is accepted; its next owner serves the stream as it is\n", found.Shard, found.StreamEnd+1, found.Mark)
	return 0
}
