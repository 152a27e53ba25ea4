package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/zredis/zredis/zmqpub"
	"github.com/zredis/zredis/zmqpub/pull"
)

// The field-expiry lag part: lag.go's benchmark for hash fields with a
// TTL of their own. lagVolatile fields with a one-hour TTL (lagHashes
// hashes of lagVolatile/lagHashes fields) sit next to lagKeys fields
// whose deadlines are spread evenly over lagSpread; the lag of a field is
// the time a listener hears of it minus its deadline. zredis is heard at
// a 0MQ PULL listener, as hash-fields messages (type 6: the key, then the
// fields and values of that hash that expired in the same millisecond),
// which it sends only when expiry-zmq-types includes hash-fields.
//
// Redis 7.4 tells of expired fields only by its 'hexpired' keyspace
// event, which names the key, not the fields, and comes once for all the
// fields of a hash that one pass removed: the fields cannot be told
// apart there. So with -redis74 each of the lagKeys fields is the one
// field of a hash of its own, whose name holds the deadline (the keys
// layout below), on 7.4 and, for the ratio, on a second fresh zredis.

// lagHashes is the number of hashes the volatile fields fill, and the
// number the lagKeys fields are spread over on zredis.
const lagHashes = 1000

// typeHashFields is the expiry stream's type code for the fields of a
// hash that expired on their own.
const typeHashFields = zmqpub.Type(6)

// loadVolatileFields gives lagVolatile fields a one-hour TTL:
// lagHashes hashes volf:<j> of fields f0.., each HSET whole, then given
// the TTL with one HPEXPIRE for all its fields.
func loadVolatileFields(rc *rconn) error {
	return rc.load(2*lagHashes, volatileFieldCmd)
}

// volatileFieldCmd appends the k-th of loadVolatileFields' 2*lagHashes
// commands.
func volatileFieldCmd(b []byte, k int) []byte {
	per := lagVolatile / lagHashes
	if k < lagHashes {
		b = appendArray(b, 2+2*per)
		b = appendBulk(b, "HSET")
		b = appendBulkNum(b, "volf:", k)
		for f := 0; f < per; f++ {
			b = appendBulkNum(b, "f", f)
			b = appendBulk(b, "v")
		}
		return b
	}
	b = appendArray(b, 5+per)
	b = appendBulk(b, "HPEXPIRE")
	b = appendBulkNum(b, "volf:", k-lagHashes)
	b = appendBulk(b, "3600000")
	b = appendBulk(b, "FIELDS")
	b = appendBulkNum(b, "", per)
	for f := 0; f < per; f++ {
		b = appendBulkNum(b, "f", f)
	}
	return b
}

// fieldDeadlines returns the first deadline, lagLead from now, and the
// deadline of the i-th of lagKeys fields, in ms: spread evenly over
// lagSpread, as loadDeadlines spreads keys.
func fieldDeadlines() (time.Time, func(i int) string) {
	first := time.Now().Add(lagLead).Truncate(time.Millisecond)
	base, span := first.UnixMilli(), lagSpread.Milliseconds()
	return first, func(i int) string { return strconv.FormatInt(base+span*int64(i)/lagKeys, 10) }
}

// loadFieldDeadlines is the hashes layout: the lagKeys fields in
// lagHashes hashes <prefix>:<i % lagHashes>, field i named
// <deadline ms>:<i>. Each hash is set whole with one HSET, then each
// field gets its deadline with HPEXPIREAT.
func loadFieldDeadlines(rc *rconn, prefix string) (time.Time, error) {
	first, at := fieldDeadlines()
	err := rc.load(lagHashes+lagKeys, func(b []byte, k int) []byte { return fieldDeadlineCmd(b, prefix, at, k) })
	if err == nil && time.Now().After(first) {
		err = errors.New("loading the fields took longer than the lead before the first deadline")
	}
	return first, err
}

// fieldDeadlineCmd appends the k-th of loadFieldDeadlines' commands: the
// lagHashes HSETs, then the lagKeys HPEXPIREATs; at(i) is field i's
// deadline.
func fieldDeadlineCmd(b []byte, prefix string, at func(int) string, k int) []byte {
	if k < lagHashes {
		b = appendArray(b, 2+2*lagKeys/lagHashes)
		b = appendBulk(b, "HSET")
		b = appendBulkNum(b, prefix+":", k)
		for i := k; i < lagKeys; i += lagHashes {
			b = appendBulk(b, at(i)+":"+strconv.Itoa(i))
			b = appendBulk(b, "v")
		}
		return b
	}
	i := k - lagHashes
	return appendCmd(b, "HPEXPIREAT", prefix+":"+strconv.Itoa(i%lagHashes), at(i), "FIELDS", "1", at(i)+":"+strconv.Itoa(i))
}

// loadKeyDeadlines is the keys layout: each of the lagKeys fields the
// one field f of its own hash <prefix>:<deadline ms>:<i>, set with HSET
// and given its deadline with HPEXPIREAT.
func loadKeyDeadlines(rc *rconn, prefix string) (time.Time, error) {
	first, at := fieldDeadlines()
	err := rc.load(2*lagKeys, func(b []byte, k int) []byte { return keyDeadlineCmd(b, prefix, at, k) })
	if err == nil && time.Now().After(first) {
		err = errors.New("loading the hashes took longer than the lead before the first deadline")
	}
	return first, err
}

// keyDeadlineCmd appends the k-th of loadKeyDeadlines' commands: for
// each field its HSET, then its HPEXPIREAT.
func keyDeadlineCmd(b []byte, prefix string, at func(int) string, k int) []byte {
	i := k / 2
	key := prefix + ":" + at(i) + ":" + strconv.Itoa(i)
	if k%2 == 0 {
		return appendCmd(b, "HSET", key, "f", "v")
	}
	return appendCmd(b, "HPEXPIREAT", key, at(i), "FIELDS", "1", "f")
}

// nameDeadline reads the deadline out of a field name <deadline>:<i> or
// a key name <prefix>:<deadline>:<i>: the number before the last colon.
func nameDeadline(name string) (time.Time, bool) {
	i := strings.LastIndexByte(name, ':')
	if i < 0 {
		return time.Time{}, false
	}
	head := name[:i]
	ms, err := strconv.ParseInt(head[strings.LastIndexByte(head, ':')+1:], 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.UnixMilli(ms), true
}

var (
	// fieldLayout: zredis's own, many fields of a hash expiring apart.
	fieldLayout = lagLayout{volatile: loadVolatileFields, deadlines: loadFieldDeadlines,
		deadlineOf: nameDeadline, prefixes: [2]string{"lagf", "lagf-off"}}
	// fieldKeyLayout: one volatile field per hash, for 7.4's notification.
	fieldKeyLayout = lagLayout{volatile: loadVolatileFields, deadlines: loadKeyDeadlines,
		deadlineOf: nameDeadline, prefixes: [2]string{"lagf", "lagf-off"}}
)

// dialFieldListener is zredis's side of the field lag: a PULL socket on
// the expiry endpoint that yields, for every field of every hash-fields
// message, the field's name, or with byKey the hash's key (the keys
// layout, whose key holds the deadline).
func dialFieldListener(endpoint string, byKey bool) *keyFeed {
	sock := pull.Dial([]string{endpoint}, pull.Options{HWM: 10000})
	f := &keyFeed{msgs: make(chan keyAt, lagKeys), stop: func() { sock.Close() }}
	go func() {
		defer close(f.msgs)
		for {
			frames, err := sock.Recv()
			if err != nil {
				return
			}
			at := time.Now()
			key, pairs, err := decodeHashFields(frames)
			if err != nil {
				continue // another type, or not ours to judge here
			}
			for i := 0; i+1 < len(pairs); i += 2 {
				name := string(pairs[i])
				if byKey {
					name = string(key)
				}
				deliver(f.msgs, keyAt{name, at})
			}
		}
	}()
	return f
}

// decodeHashFields takes apart a hash-fields message: its key, then its
// fields and values. zmqpub.Decode does where it knows type 6; where it
// does not yet, frame 3 is read here, laid out as a hash's (encode.go:
// uint32 count, then each item as uint32 length and bytes, in the
// machine's byte order, little-endian on x86-64 and arm64).
func decodeHashFields(frames [][]byte) (key []byte, pairs [][]byte, err error) {
	if len(frames) != 3 || len(frames[0]) != 4 {
		return nil, nil, errors.New("not an expiry message")
	}
	if t := zmqpub.Type(binary.NativeEndian.Uint16(frames[0][2:])); t != typeHashFields {
		return nil, nil, fmt.Errorf("type %d, not hash-fields", t)
	}
	if d, err := zmqpub.Decode(frames); err == nil {
		return d.Key, d.Parts, nil
	}
	return readHashFields(frames)
}

// readHashFields reads the key and the fields and values of a hash-fields
// message, whose header decodeHashFields checked.
func readHashFields(frames [][]byte) (key []byte, pairs [][]byte, err error) {
	item := func(b []byte) ([]byte, []byte, bool) {
		if len(b) < 4 {
			return nil, nil, false
		}
		n := uint64(binary.NativeEndian.Uint32(b))
		if n > uint64(len(b)-4) {
			return nil, nil, false
		}
		return b[4 : 4+n], b[4+n:], true
	}
	key, rest, ok := item(frames[1])
	if !ok || len(rest) != 0 {
		return nil, nil, errors.New("bad key frame")
	}
	v := frames[2]
	if len(v) < 4 {
		return nil, nil, errors.New("value frame without a count")
	}
	count := uint64(binary.NativeEndian.Uint32(v))
	if count%2 != 0 || count > uint64(len(v)-4)/4 {
		return nil, nil, fmt.Errorf("bad item count %d", count)
	}
	rest = v[4:]
	pairs = make([][]byte, count)
	for i := range pairs {
		if pairs[i], rest, ok = item(rest); !ok {
			return nil, nil, fmt.Errorf("item %d runs past the frame", i)
		}
	}
	if len(rest) != 0 {
		return nil, nil, errors.New("bytes after the last item")
	}
	return key, pairs, nil
}

// fieldLagBench runs the field lag on a fresh zredis, and with -redis74
// in the keys layout on a second fresh zredis and a redis-server 7.4,
// and prints the table.
func fieldLagBench(ctx context.Context, o options, w io.Writer) error {
	if o.self {
		fmt.Fprintln(w, "field expiry lag: skipped, the redis-server in zredis's place (-against-self) has no field TTLs")
		fmt.Fprintln(w)
		return nil
	}
	// zredis on a fresh server in the given layout, heard on its own
	// endpoint.
	runZredis := func(lay lagLayout, byKey bool) (lagResult, string, error) {
		zport, err := freePort()
		if err != nil {
			return lagResult{}, "", err
		}
		endpoint := "tcp://127.0.0.1:" + strconv.Itoa(zport)
		z, err := startServer(ctx, "zredis", o.zredisBin,
			noSave("--expiry-zmq-endpoints", endpoint, "--expiry-zmq-types", "string hash hash-fields")...)
		if err != nil {
			return lagResult{}, "", err
		}
		defer z.stop()
		res, err := lagRun(z, func() (*keyFeed, error) { return dialFieldListener(endpoint, byKey), nil }, lay)
		if err == nil && z.exited() {
			err = errors.New("exited")
		}
		if err != nil {
			return res, "", fmt.Errorf("zredis: %w\n%s", err, z.out)
		}
		return res, fmt.Sprintf("zredis 127.0.0.1:%d (listener on %s)", z.port, endpoint), nil
	}

	zres, zwhere, err := runZredis(fieldLayout, false)
	if err != nil {
		return err
	}
	var zk, rk *lagResult
	refName, rwhere := "", ""
	if o.redis74Bin != "" {
		refName = refLabel(o.redis74Ver)
		res, where, err := runZredis(fieldKeyLayout, true)
		if err != nil {
			return err
		}
		zk, zwhere = &res, zwhere+", then "+where
		// E: keyevent channels; h: hash events, hexpired among them.
		r, err := startServer(ctx, "redis74", o.redis74Bin, noSave("--notify-keyspace-events", "Eh")...)
		if err != nil {
			return err
		}
		defer r.stop()
		rres, err := lagRun(r, func() (*keyFeed, error) { return dialEventListener(r, "hexpired") }, fieldKeyLayout)
		if err != nil {
			return fmt.Errorf("%s: %w", refName, err)
		}
		rk, rwhere = &rres, fmt.Sprintf("  %s 127.0.0.1:%d ('hexpired' keyspace event)", refName, r.port)
	}

	fmt.Fprintf(w, "hash field expiry lag: %s%s\n", zwhere, rwhere)
	fmt.Fprintf(w, "%d fields with deadlines spread over %v from %v after loading, next to %d fields with a 1-hour TTL (%d hashes of %d)\n",
		lagKeys, lagSpread, lagLead, lagVolatile, lagHashes, lagVolatile/lagHashes)
	fmt.Fprintf(w, "zredis, hashes: the %d fields in %d hashes lagf:<i%%%d>, field <deadline ms>:<i>, each given HPEXPIREAT; heard as hash-fields messages (type 6)\n",
		lagKeys, lagHashes, lagHashes)
	if rk != nil {
		fmt.Fprintf(w, "keys: %s's 'hexpired' event names only the key, so there each field is the one field of its own hash lagf:<deadline ms>:<i>;\n", refName)
		fmt.Fprintln(w, "  zredis is run that way too, on a fresh server, and the ratios compare the keys layout")
	}
	fmt.Fprintln(w, "lag = receive time at the listener - the field's deadline")
	fmt.Fprintf(w, "a field not received %v after the last deadline counts as later than that\n", lagWait)
	cols := []string{"zredis, hashes"}
	rows := []lagResult{zres}
	if rk != nil {
		cols = append(cols, "zredis, keys", refName+", keys")
		rows = append(rows, *zk, *rk)
	}
	fmt.Fprintf(w, "%-40s", "")
	for _, c := range cols {
		fmt.Fprintf(w, " %16s", c)
	}
	fmt.Fprintln(w)
	for _, line := range []struct {
		name string
		get  func(lagResult) string
	}{
		{"fields received", func(r lagResult) string { return strconv.Itoa(r.received) }},
		{"lag p50 ms", func(r lagResult) string { return lagMS(r.p50) }},
		{"lag p99 ms", func(r lagResult) string { return lagMS(r.p99) }},
		{"lag max ms", func(r lagResult) string { return lagMS(r.max) }},
		{"PING p99 ms, idle", func(r lagResult) string { return lagMS(r.pingIdle) }},
		{"PING p99 ms, expiring, listener", func(r lagResult) string { return lagMS(r.pingListener) }},
		{"PING p99 ms, expiring, no listener", func(r lagResult) string { return lagMS(r.pingOff) }},
	} {
		fmt.Fprintf(w, "%-40s", line.name)
		for _, r := range rows {
			fmt.Fprintf(w, " %16s", line.get(r))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
	// The layout goes in the section, the names staying those of the key
	// lag; so does the reference, as the redis column is not 7.0's here.
	for _, f := range lagFigures("field lag (hashes)", "fields received", "fields", zres, nil) {
		o.sum.add(f)
	}
	if rk != nil {
		sec := "field lag (keys), vs " + strings.TrimPrefix(refName, "redis ")
		for _, f := range lagFigures(sec, "fields received", "fields", *zk, rk) {
			o.sum.add(f)
		}
	}
	return nil
}

// lagMS is a lag or round trip in ms for the tables; one never received
// shows as later than the wait for it.
func lagMS(d time.Duration) string {
	if d == notReceived {
		return fmt.Sprintf("> %d", (lagSpread + lagWait).Milliseconds())
	}
	return fmt.Sprintf("%.3f", float64(d)/1e6)
}

// lagFigures are the summary's figures of a lag run; the count received
// is named received, in unit. r is nil where no reference ran.
func lagFigures(section, received, unit string, z lagResult, r *lagResult) []figure {
	rv := func(get func(lagResult) float64) float64 {
		if r == nil {
			return math.NaN()
		}
		return get(*r)
	}
	count := func(l lagResult) float64 { return float64(l.received) }
	figs := []figure{{section: section, name: received, unit: unit, z: count(z),
		r: rv(count), ratio: ratioOf(count(z), rv(count)), better: neither}}
	for _, f := range []struct {
		name string
		get  func(lagResult) time.Duration
	}{
		{"lag p50", func(l lagResult) time.Duration { return l.p50 }},
		{"lag p99", func(l lagResult) time.Duration { return l.p99 }},
		{"lag max", func(l lagResult) time.Duration { return l.max }},
		{"PING p99, idle", func(l lagResult) time.Duration { return l.pingIdle }},
		{"PING p99, expiring", func(l lagResult) time.Duration { return l.pingListener }},
		{"PING p99, expiring, no listener", func(l lagResult) time.Duration { return l.pingOff }},
	} {
		// A message never received has no lag to show.
		msOf := func(l lagResult) float64 {
			if d := f.get(l); d != notReceived {
				return float64(d) / 1e6
			}
			return math.NaN()
		}
		zv, rv := msOf(z), rv(msOf)
		figs = append(figs, figure{section: section, name: f.name, unit: "ms", z: zv, r: rv, ratio: ratioOf(zv, rv), better: lower})
	}
	return figs
}
