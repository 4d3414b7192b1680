package main

import (
	"fmt"
	"io"
	"strings"
)

// The admin CLI's help and forgiveness: which body flags a command needs,
// which flags take one of a fixed set of lower-case words (so that "Server"
// or "Mon, Tue" mean what they say), the nearest command to a mistyped one,
// and each command's flags in `backupmon admin help`.

// requiredFlags names, per command ("group verb"), the body fields the admin
// API refuses a create without (docs/spec/decisions.md 1); the id flags of
// the path are required everywhere.
var requiredFlags = map[string][]string{
	"workspace create":  {"name", "plan"},
	"client create":     {"name"},
	"job create":        {"client-id", "name", "vendor", "device-name", "device-type", "hostname", "interval-minutes"},
	"key create":        {"name", "type"},
	"alert snooze":      {"until"},
	"channel create":    {"type", "name"},
	"escalation create": {"channel-id", "after-minutes"},
	"user create":       {"email", "name", "role", "password"},
}

// wordFlags are the flags whose values are words of a fixed lower-case set
// (vendors, device types, weekdays, plans, statuses, roles, types, access,
// severities): their values are sent in lower case without surrounding
// spaces, which cannot change which word is meant.
var wordFlags = map[string]bool{
	"vendor": true, "device-type": true, "expected-days": true, "plan": true, "status": true,
	"role": true, "type": true, "access": true, "min-severity": true,
}

// flagRequired reports whether cmd needs flag name.
func flagRequired(cmd *cliCommand, name string) bool {
	for _, n := range requiredFlags[cmd.group+" "+cmd.verb] {
		if n == name {
			return true
		}
	}
	return false
}

// flagHelp is a body flag's help text as -h and `admin help` show it.
func flagHelp(cmd *cliCommand, f cliFlag) string {
	if flagRequired(cmd, f.name) {
		return f.help + " (required)"
	}
	return f.help
}

// foldWord returns a word flag's value in lower case without surrounding
// spaces (each item of a list); other flags' values as given.
func foldWord(f cliFlag, raw string) string {
	if !wordFlags[f.name] {
		return raw
	}
	return strings.ToLower(strings.TrimSpace(raw))
}

// pathIDs returns the id flags of a command's path, in order.
func pathIDs(path string) []string {
	var ids []string
	for _, p := range strings.Split(path, "/") {
		if f, ok := idFlags[p]; ok {
			ids = append(ids, f)
		}
	}
	return ids
}

// commandFlags returns one line naming every flag of cmd: the id flags and
// the required body flags first, then the optional ones in brackets.
func commandFlags(cmd *cliCommand) string {
	var parts []string
	for _, id := range pathIDs(cmd.path) {
		parts = append(parts, "--"+id+" ID")
	}
	for _, f := range cmd.flags {
		if flagRequired(cmd, f.name) {
			parts = append(parts, "--"+f.name+" "+flagValueName(f))
		}
	}
	for _, f := range cmd.flags {
		if !flagRequired(cmd, f.name) {
			parts = append(parts, "[--"+f.name+" "+flagValueName(f)+"]")
		}
	}
	if cmd.group == "cluster" {
		parts = append(parts, "[--json]")
	}
	return strings.Join(parts, " ")
}

// flagValueName is the placeholder for a flag's value in `admin help`.
func flagValueName(f cliFlag) string {
	switch f.kind {
	case kInt:
		return "N"
	case kFloat:
		return "X"
	case kBool:
		return "true|false"
	case kList:
		return "A,B"
	}
	return strings.ToUpper(strings.ReplaceAll(f.name, "-", "_"))
}

// commandHelp writes one command's usage and every flag with its help, as
// `backupmon admin help <group> <verb>` prints it.
func commandHelp(w io.Writer, cmd *cliCommand) {
	fmt.Fprintf(w, "Usage: backupmon admin %s %s %s\n%s (%s /admin/v1%s)\n", cmd.group, cmd.verb, commandFlags(cmd), cmd.help, cmd.method, cmd.path)
	for _, id := range pathIDs(cmd.path) {
		fmt.Fprintf(w, "  --%-18s %s id (required)\n", id, id)
	}
	for _, f := range cmd.flags {
		fmt.Fprintf(w, "  --%-18s %s\n", f.name, flagHelp(cmd, f))
	}
}

// findCommand returns the command group verb names, or nil.
func findCommand(group, verb string) *cliCommand {
	for i := range cliCommands {
		if cliCommands[i].group == group && cliCommands[i].verb == verb {
			return &cliCommands[i]
		}
	}
	return nil
}

// nearestCommand returns the command ("group verb") closest to what was
// typed, by edit distance over the whole name; a group alone is matched
// against the groups.
func nearestCommand(typed []string) string {
	var names []string
	for _, c := range cliCommands {
		if len(typed) == 1 {
			names = append(names, c.group)
		} else {
			names = append(names, c.group+" "+c.verb)
		}
	}
	return nearestWord(strings.Join(typed, " "), names)
}

// editDistance is the Levenshtein distance between a and b, by bytes,
// ignoring case.
func editDistance(a, b string) int {
	a, b = strings.ToLower(a), strings.ToLower(b)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// unknownCommand writes the one-line error of a command that does not
// exist, naming the nearest one.
func unknownCommand(w io.Writer, typed []string) {
	if len(typed) == 1 {
		var verbs []string
		for _, c := range cliCommands {
			if c.group == typed[0] {
				verbs = append(verbs, c.verb)
			}
		}
		if len(verbs) > 0 {
			fmt.Fprintf(w, "backupmon admin %s: a verb is needed: %s\n", typed[0], strings.Join(verbs, ", "))
			return
		}
	}
	fmt.Fprintf(w, "backupmon admin: unknown command %q; did you mean %q? (backupmon admin help lists every command)\n",
		strings.Join(typed, " "), nearestCommand(typed))
}

// adminHelp runs `backupmon admin help [group [verb]]`: every command with
// its flags, or one command's flags with their meaning. It returns the exit
// code: 0, or 2 for a command that does not exist.
func adminHelp(args []string, stdout, stderr io.Writer) int {
	if len(args) < 2 {
		adminUsage(stdout)
		return 0
	}
	cmd := findCommand(args[0], args[1])
	if cmd == nil {
		unknownCommand(stderr, args[:2])
		return 2
	}
	commandHelp(stdout, cmd)
	return 0
}

// nearestWord returns the word of words closest to typed by edit distance.
func nearestWord(typed string, words []string) string {
	best, dist := "", -1
	for _, w := range words {
		if d := editDistance(typed, w); dist < 0 || d < dist {
			best, dist = w, d
		}
	}
	return best
}
