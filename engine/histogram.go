package engine

import "math/bits"

// Histogram is a latency histogram with the layout of the HdrHistogram
// Redis keeps per command (values 1 ns to 1 s, 2 significant figures), so
// that LATENCY HISTOGRAM's buckets and INFO latencystats' percentiles
// come out as Redis computes them.
type Histogram struct {
	counts [histCountsLen]int64
	total  int64
}

// hdr_init(1, 1e9, 2): sub-buckets of 256 (2 significant digits), half
// counts of 128, 23 buckets to cover 1e9.
const (
	histSubBucketHalfMag = 7
	histSubBucketHalf    = 1 << histSubBucketHalfMag
	histSubBucketMask    = 2*histSubBucketHalf - 1
	histBucketCount      = 23
	histCountsLen        = (histBucketCount + 1) * histSubBucketHalf
	histHighest          = 1_000_000_000
)

func histBucketIndex(v int64) int {
	return 64 - bits.LeadingZeros64(uint64(v)|histSubBucketMask) - (histSubBucketHalfMag + 1)
}

func histCountsIndex(v int64) int {
	b := histBucketIndex(v)
	sub := int(v >> uint(b))
	return (b+1)<<histSubBucketHalfMag + sub - histSubBucketHalf
}

// histValueAt is the lowest value counted at index i.
func histValueAt(i int) int64 {
	b := i>>histSubBucketHalfMag - 1
	sub := i&(histSubBucketHalf-1) + histSubBucketHalf
	if b < 0 {
		sub -= histSubBucketHalf
		b = 0
	}
	return int64(sub) << uint(b)
}

// histLowest and histHighest are the bounds of the values counted
// together with v.
func histLowest(v int64) int64 {
	b := histBucketIndex(v)
	return v >> uint(b) << uint(b)
}

func histHighestEquivalent(v int64) int64 {
	b := histBucketIndex(v)
	if v>>uint(b) >= 2*histSubBucketHalf {
		b++
	}
	return histLowest(v) + 1<<uint(b) - 1
}

// Record counts one value (nanoseconds), clamped to the tracked range.
func (h *Histogram) Record(ns int64) {
	ns = max(1, min(ns, histHighest))
	h.counts[histCountsIndex(ns)]++
	h.total++
}

// Total is the number of values recorded.
func (h *Histogram) Total() int64 { return h.total }

// ValueAtPercentile is hdr_value_at_percentile: the highest value
// equivalent to the one at percentile p.
func (h *Histogram) ValueAtPercentile(p float64) int64 {
	p = min(p, 100)
	want := max(int64(p/100*float64(h.total)+0.5), 1)
	var sum int64
	for i, n := range h.counts {
		sum += n
		if sum >= want {
			v := histValueAt(i)
			if p == 0 {
				return histLowest(v)
			}
			return histHighestEquivalent(v)
		}
	}
	return 0
}

// CDF walks the histogram as Redis's fillCommandCDF does (hdr's
// logarithmic iterator from 1024 ns, base 2) and returns (microseconds,
// cumulative count) at each bucket where the count grew.
func (h *Histogram) CDF() [][2]int64 {
	var out [][2]int64
	level := int64(1024)
	levelLowest := histLowest(level)
	idx, value := -1, int64(0)
	var cum, prev int64
	for cum < h.total || histValueAt(idx+1) > levelLowest {
		reported := false
		for {
			if value >= levelLowest {
				if cum > prev {
					out = append(out, [2]int64{histHighestEquivalent(level) / 1000, cum})
				}
				prev = cum
				level *= 2
				levelLowest = histLowest(level)
				reported = true
				break
			}
			if idx+1 >= histCountsLen {
				break
			}
			idx++
			value = histValueAt(idx)
			cum += h.counts[idx]
		}
		if !reported {
			break
		}
	}
	return out
}
