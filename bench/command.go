package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
)

// command runs one bench command: it parses args with the flags that
// flags defines (exit code 0 for -h, 2 for a bad flag), then check, whose complaint about the flags
// (none: "") is printed after "bench <name>: " with exit code 2, then run,
// whose error is printed the same way; an error or a false ok (the run
// counted errors or a verdict failed) is exit code 1.
func command(name string, args []string, flags func(fs *flag.FlagSet), check func() string, run func() (ok bool, err error)) int {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	flags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if msg := check(); msg != "" {
		fmt.Fprintf(os.Stderr, "bench %s: %s\n", name, msg)
		return 2
	}
	ok, err := run()
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench %s: %v\n", name, err)
		return 1
	}
	if !ok {
		return 1
	}
	return 0
}

// flagsFine is the check of a command whose flags take any value.
func flagsFine() string { return "" }
