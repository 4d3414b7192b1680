package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// memoryAvailable returns the memory this process may use: the lowest
// cgroup limit on its way to the root (v2 memory.max, v1
// memory.limit_in_bytes) and the machine's MemTotal, whichever is lower,
// with a word on where it came from. root is "/" but in tests.
func memoryAvailable(root string) (int64, string, error) {
	machine, err := memTotal(filepath.Join(root, "proc/meminfo"))
	if err != nil {
		machine = 0
	}
	cg, file := cgroupLimit(root)
	switch {
	case cg > 0 && (machine == 0 || cg < machine):
		return cg, "cgroup " + file, nil
	case machine > 0:
		return machine, "/proc/meminfo MemTotal", nil
	}
	if err != nil {
		return 0, "", fmt.Errorf("%w: %v", errNoMemoryInfo, err)
	}
	return 0, "", errNoMemoryInfo
}

// memTotal reads MemTotal (kB) from a /proc/meminfo.
func memTotal(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil || kb <= 0 {
				return 0, fmt.Errorf("%s: MemTotal %q", path, f[1])
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("%s: no MemTotal", path)
}

// cgroupLimit returns the lowest memory limit of the process's cgroups and
// their parents, and the file it was read from; 0 when none is set.
func cgroupLimit(root string) (int64, string) {
	b, err := os.ReadFile(filepath.Join(root, "proc/self/cgroup"))
	if err != nil {
		return 0, ""
	}
	var best int64
	var bestFile string
	consider := func(dir, file string) {
		for d := filepath.Clean("/" + dir); ; d = filepath.Dir(d) {
			p := filepath.Join(root, "sys/fs/cgroup", file[:strings.LastIndexByte(file, '/')+1], d, file[strings.LastIndexByte(file, '/')+1:])
			if n := readLimit(p); n > 0 && (best == 0 || n < best) {
				best, bestFile = n, strings.TrimPrefix(p, filepath.Clean(root))
			}
			if d == "/" {
				return
			}
		}
	}
	for line := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
		// hierarchy-ID:controllers:path
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "": // v2
			consider(parts[2], "memory.max")
		case hasController(parts[1], "memory"): // v1
			consider(parts[2], "memory/memory.limit_in_bytes")
		}
	}
	return best, bestFile
}

func hasController(list, name string) bool {
	for c := range strings.SplitSeq(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}

// readLimit reads a cgroup memory limit file: 0 for "max", a v1 "no
// limit" (near 2^63), or a file that is not there.
func readLimit(path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	s := strings.TrimSpace(string(b))
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n >= 1<<62 {
		return 0
	}
	return n
}

// Size units: binary (KiB, MiB, ...) and decimal (KB, MB, ...), without
// case; a bare number is bytes.
var sizeUnits = []struct {
	name string
	n    int64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
	{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12},
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"t", 1 << 40},
	{"b", 1},
}

// parseSize reads a size such as 4GiB, 512MiB, 1.5GB or 1048576: a
// non-negative number (a decimal fraction with a unit) and a unit. It
// returns an error for anything else, or a size past 2^62 bytes.
func parseSize(s string) (int64, error) {
	num, unit := s, int64(1)
	lower := strings.ToLower(s)
	for _, u := range sizeUnits {
		if strings.HasSuffix(lower, u.name) {
			num, unit = strings.TrimRight(s[:len(s)-len(u.name)], " "), u.n
			break
		}
	}
	if num == "" || num[0] < '0' || num[0] > '9' {
		return 0, fmt.Errorf("size %q: not a number and a unit", s)
	}
	whole, frac, dotted := strings.Cut(num, ".")
	if dotted && (unit == 1 || frac == "") {
		return 0, fmt.Errorf("size %q: a fraction of a byte", s)
	}
	w, err := strconv.ParseUint(whole, 10, 63)
	if err != nil || w > 1<<62/uint64(unit) {
		return 0, fmt.Errorf("size %q: out of range", s)
	}
	n := int64(w) * unit
	if dotted {
		if len(frac) > 9 {
			return 0, fmt.Errorf("size %q: too many decimals", s)
		}
		f, err := strconv.ParseUint(frac, 10, 32)
		if err != nil {
			return 0, fmt.Errorf("size %q: not a number and a unit", s)
		}
		scale := int64(1)
		for range len(frac) {
			scale *= 10
		}
		n += int64(f) * unit / scale
	}
	if n > 1<<62 {
		return 0, fmt.Errorf("size %q: out of range", s)
	}
	return n, nil
}

// formatSize writes n bytes in the largest binary unit not above it:
// whole when the unit divides n, else with two decimals ("17.65GiB").
func formatSize(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	i := 0
	for i < len(units)-1 && n >= int64(1)<<(10*(i+1)) {
		i++
	}
	u := int64(1) << (10 * i)
	if n%u == 0 {
		return strconv.FormatInt(n/u, 10) + units[i]
	}
	return strconv.FormatFloat(float64(n)/float64(u), 'f', 2, 64) + units[i]
}

// formatSizeUp writes n rounded up to whole MiB.
func formatSizeUp(n int64) string {
	return strconv.FormatInt((n+1<<20-1)>>20, 10) + "MiB"
}
