package engine

import "sort"

// LatencyMonitor records latency spikes per event class: a call of at
// least Threshold milliseconds (latency-monitor-threshold; 0 disables)
// adds a sample to its event's series of the last LatencySeriesLen
// seconds that saw one (latency.c).
type LatencyMonitor struct {
	Threshold int64
	events    map[string]*latencySeries
}

// LatencySeriesLen is LATENCY_TS_LEN.
const LatencySeriesLen = 160

// LatencySample is the worst latency of one second.
type LatencySample struct {
	Time    int64 // Unix seconds; 0 = unused slot
	Latency int64 // milliseconds
}

type latencySeries struct {
	samples [LatencySeriesLen]LatencySample
	idx     int
	max     int64
}

// AddIfNeeded records ms for event at time now when it reaches the
// threshold.
func (m *LatencyMonitor) AddIfNeeded(event string, ms, now int64) {
	if m.Threshold > 0 && ms >= m.Threshold {
		m.Add(event, ms, now)
	}
}

// Add records a sample: a second already sampled keeps its worst latency.
func (m *LatencyMonitor) Add(event string, ms, now int64) {
	ts := m.events[event]
	if ts == nil {
		if m.events == nil {
			m.events = map[string]*latencySeries{}
		}
		ts = &latencySeries{}
		m.events[event] = ts
	}
	ts.max = max(ts.max, ms)
	prev := (ts.idx + LatencySeriesLen - 1) % LatencySeriesLen
	if ts.samples[prev].Time == now {
		ts.samples[prev].Latency = max(ts.samples[prev].Latency, ms)
		return
	}
	ts.samples[ts.idx] = LatencySample{Time: now, Latency: ms}
	ts.idx = (ts.idx + 1) % LatencySeriesLen
}

// Events lists the event names with samples, sorted.
func (m *LatencyMonitor) Events() []string {
	out := make([]string, 0, len(m.events))
	for e := range m.events {
		out = append(out, e)
	}
	sort.Strings(out)
	return out
}

// History returns an event's samples, oldest first (nil when unknown).
func (m *LatencyMonitor) History(event string) []LatencySample {
	ts := m.events[event]
	if ts == nil {
		return nil
	}
	var out []LatencySample
	for j := 0; j < LatencySeriesLen; j++ {
		if s := ts.samples[(ts.idx+j)%LatencySeriesLen]; s.Time != 0 {
			out = append(out, s)
		}
	}
	return out
}

// Latest returns an event's newest sample and its all-time maximum.
func (m *LatencyMonitor) Latest(event string) (last LatencySample, maxMs int64) {
	ts := m.events[event]
	if ts == nil {
		return LatencySample{}, 0
	}
	return ts.samples[(ts.idx+LatencySeriesLen-1)%LatencySeriesLen], ts.max
}

// Reset drops the named events (every event when none is named) and
// returns how many existed.
func (m *LatencyMonitor) Reset(events ...string) int {
	if len(events) == 0 {
		n := len(m.events)
		m.events = nil
		return n
	}
	n := 0
	for _, e := range events {
		if _, ok := m.events[e]; ok {
			delete(m.events, e)
			n++
		}
	}
	return n
}
