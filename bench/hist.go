package main

import (
	"math/bits"
	"time"
)

// hist is a latency histogram with fixed log-linear buckets: every power of
// two is split into histSub equal buckets, so a recorded value is off by at
// most 1/histSub (about 3%). Recording is an index computation and an
// increment, with no allocation; each worker keeps its own and they are
// merged at the end.
type hist struct {
	counts [histBuckets]uint64
	n      uint64
	sum    uint64
	max    uint64
}

const (
	histSubBits = 5
	histSub     = 1 << histSubBits
	histBuckets = (64 - histSubBits + 1) * histSub
)

// histIndex returns the bucket of v (nanoseconds).
func histIndex(v uint64) int {
	if v < histSub {
		return int(v)
	}
	shift := bits.Len64(v) - histSubBits - 1 // v>>shift is in [histSub, 2*histSub)
	return (shift+1)*histSub + int(v>>shift) - histSub
}

// histLow returns the smallest value that falls in bucket i.
func histLow(i int) uint64 {
	if i < histSub {
		return uint64(i)
	}
	shift := i/histSub - 1
	return uint64(i%histSub+histSub) << shift
}

func (h *hist) record(d time.Duration) {
	v := uint64(max(d, 0))
	h.counts[histIndex(v)]++
	h.n++
	h.sum += v
	h.max = max(h.max, v)
}

func (h *hist) merge(o *hist) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
	h.sum += o.sum
	h.max = max(h.max, o.max)
}

// quantile returns the value below which a fraction q of the recorded values
// fall: the middle of the bucket holding the rank ceil(q·n) value.
func (h *hist) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(q*float64(h.n) + 0.999999999)
	rank = min(max(rank, 1), h.n)
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			lo, hi := histLow(i), histLow(i+1)
			return time.Duration(min(lo+(hi-lo)/2, h.max))
		}
	}
	return time.Duration(h.max)
}

func (h *hist) mean() time.Duration {
	if h.n == 0 {
		return 0
	}
	return time.Duration(h.sum / h.n)
}
