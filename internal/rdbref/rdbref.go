// Package rdbref describes the whole dataset of a running server — every
// key of every database with its type, value, key expiry time and, for
// hashes, the expiry time of every field — as JSON. scripts/recordrdb
// writes such a description next to each RDB file of testdata/rdb/ from
// the real redis-server that loaded it, and tests/rdb_reference_test.go
// loads the same file into zredis and compares zredis's description with
// it.
//
// A description reads the server through ordinary commands only (SCAN,
// TYPE, GET, LRANGE, SMEMBERS, ZRANGE, HGETALL, HPEXPIRETIME, XRANGE,
// XINFO, XPENDING, PEXPIRETIME, OBJECT ENCODING), so that it says what a
// client sees, not how the file spells it.
package rdbref

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/zredis/zredis/internal/replycase"
)

// File is a description of an RDB file's content.
type File struct {
	// Comment says what the file is and how it was made.
	Comment string `json:"comment,omitempty"`
	// Server is the server that wrote the RDB file and described it.
	Server string `json:"server"`
	// RDB is the name of the RDB file, RDBVersion the version in its
	// header.
	RDB        string `json:"rdb"`
	RDBVersion int    `json:"rdb_version"`
	// Dataset names the dataset of scripts/recordrdb the file holds.
	Dataset string `json:"dataset"`
	// ExpiredInRDB lists what the RDB file holds but a server must not
	// show once it has loaded it: hash fields whose TTL had passed when
	// the file was written (and keys that had only such fields).
	ExpiredInRDB []Expired `json:"expired_in_rdb,omitempty"`
	// DBs maps a database number to its keys.
	DBs map[string]map[string]*Key `json:"dbs"`
}

// Expired is a hash of the RDB file with fields already expired in it.
type Expired struct {
	DB     int      `json:"db"`
	Key    string   `json:"key"`
	Fields []string `json:"fields"`
	// KeyGone: every field of the hash is expired, so the key itself
	// must not be there.
	KeyGone bool `json:"key_gone,omitempty"`
}

// Key is one key.
type Key struct {
	Type string `json:"type"`
	// Encoding is what OBJECT ENCODING answered: informative only, not
	// compared (zredis encodes as it likes).
	Encoding string `json:"encoding,omitempty"`
	// PExpireTime is PEXPIRETIME: -1 for a key without expiry.
	PExpireTime int64 `json:"pexpiretime"`
	// Value is, by type: string: the string; list: its elements; set:
	// its members, sorted; zset: [member, score] pairs in rank order
	// (the score as ZRANGE WITHSCORES writes it); hash: field -> value;
	// stream: a Stream.
	Value any `json:"value"`
	// FieldPExpireTime is, for a hash, HPEXPIRETIME of every field (-1
	// for a field without TTL).
	FieldPExpireTime map[string]int64 `json:"field_pexpiretime,omitempty"`
}

// Stream is the value of a stream key.
type Stream struct {
	Length               int64    `json:"length"`
	LastGeneratedID      string   `json:"last_generated_id"`
	MaxDeletedEntryID    string   `json:"max_deleted_entry_id"`
	EntriesAdded         int64    `json:"entries_added"`
	RecordedFirstEntryID string   `json:"recorded_first_entry_id"`
	Entries              [][]any  `json:"entries"` // [id, [field, value, ...]]
	Groups               []*Group `json:"groups"`
}

// Group is a consumer group of a stream.
type Group struct {
	Name            string     `json:"name"`
	LastDeliveredID string     `json:"last_delivered_id"`
	EntriesRead     *int64     `json:"entries_read"` // nil when the server does not know
	Pending         int64      `json:"pending"`
	Consumers       []Consumer `json:"consumers"`
	// PEL is the pending entries: [id, consumer, delivery count].
	PEL [][]any `json:"pel"`
}

// Consumer is a consumer of a group.
type Consumer struct {
	Name    string `json:"name"`
	Pending int64  `json:"pending"`
}

// Load reads a description.
func Load(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f File
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return &f, nil
}

// Encode renders a description with one key a line.
func (f *File) Encode() []byte {
	var b bytes.Buffer
	str := func(s string) string {
		j, _ := json.Marshal(s)
		return string(j)
	}
	b.WriteString("{\n")
	if f.Comment != "" {
		fmt.Fprintf(&b, "  \"comment\": %s,\n", str(f.Comment))
	}
	fmt.Fprintf(&b, "  \"server\": %s,\n  \"rdb\": %s,\n  \"rdb_version\": %d,\n  \"dataset\": %s,\n",
		str(f.Server), str(f.RDB), f.RDBVersion, str(f.Dataset))
	if len(f.ExpiredInRDB) > 0 {
		b.WriteString("  \"expired_in_rdb\": [\n")
		for i, e := range f.ExpiredInRDB {
			j, _ := json.Marshal(e)
			b.WriteString("    ")
			b.Write(j)
			if i < len(f.ExpiredInRDB)-1 {
				b.WriteString(",")
			}
			b.WriteString("\n")
		}
		b.WriteString("  ],\n")
	}
	b.WriteString("  \"dbs\": {\n")
	dbs := sortedKeys(f.DBs)
	sort.Slice(dbs, func(i, j int) bool { return atoi(dbs[i]) < atoi(dbs[j]) })
	for i, db := range dbs {
		fmt.Fprintf(&b, "    %s: {\n", str(db))
		keys := sortedKeys(f.DBs[db])
		for j, k := range keys {
			v, _ := json.Marshal(f.DBs[db][k])
			fmt.Fprintf(&b, "      %s: %s", str(k), v)
			if j < len(keys)-1 {
				b.WriteString(",")
			}
			b.WriteString("\n")
		}
		b.WriteString("    }")
		if i < len(dbs)-1 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString("  }\n}\n")
	return b.Bytes()
}

// Canonical renders a key without its encoding as JSON in a form that
// does not depend on whether it was read from a file or described: two
// keys are the same when their canonical forms are.
func Canonical(k *Key) string {
	c := *k
	c.Encoding = ""
	data, _ := json.Marshal(&c)
	var v any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	dec.Decode(&v)
	out, _ := json.Marshal(v)
	return string(out)
}

// Options tune Describe.
type Options struct {
	// NoFieldTTL: the server has no HPEXPIRETIME (before 7.4): every
	// field is described as without TTL.
	NoFieldTTL bool
}

// Describe reads every key of every database of the server at addr.
func Describe(addr string, opt Options) (map[string]map[string]*Key, error) {
	c, err := replycase.Dial(addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	n := 16
	if r, err := c.Do("CONFIG", "GET", "databases"); err == nil && r.Type == replycase.Array && len(r.Elems) == 2 {
		n = atoi(r.Elems[1].Str)
	}
	out := map[string]map[string]*Key{}
	for db := range n {
		if _, err := do(c, "SELECT", strconv.Itoa(db)); err != nil {
			return nil, err
		}
		keys, err := scan(c)
		if err != nil {
			return nil, err
		}
		if len(keys) == 0 {
			continue
		}
		m := map[string]*Key{}
		for _, k := range keys {
			d, err := describeKey(c, k, opt)
			if err != nil {
				return nil, fmt.Errorf("db %d key %q: %v", db, k, err)
			}
			if d != nil {
				m[k] = d
			}
		}
		if len(m) > 0 {
			out[strconv.Itoa(db)] = m
		}
	}
	return out, nil
}

func scan(c *replycase.Conn) ([]string, error) {
	seen := map[string]bool{}
	cursor := "0"
	for {
		r, err := do(c, "SCAN", cursor, "COUNT", "1000")
		if err != nil {
			return nil, err
		}
		if r.Type != replycase.Array || len(r.Elems) != 2 {
			return nil, fmt.Errorf("SCAN: %v", r)
		}
		for _, e := range r.Elems[1].Elems {
			seen[e.Str] = true
		}
		if cursor = r.Elems[0].Str; cursor == "0" {
			break
		}
	}
	return sortedKeys(seen), nil
}

// do sends a command and turns an error reply into an error.
func do(c *replycase.Conn, args ...string) (replycase.Reply, error) {
	r, err := c.Do(args...)
	if err != nil {
		return r, err
	}
	if r.Type == replycase.Error {
		return r, fmt.Errorf("%q: %s", args, r.Str)
	}
	return r, nil
}

func describeKey(c *replycase.Conn, k string, opt Options) (*Key, error) {
	t, err := do(c, "TYPE", k)
	if err != nil {
		return nil, err
	}
	if t.Str == "none" {
		return nil, nil // gone since SCAN (expired)
	}
	d := &Key{Type: t.Str}
	if r, err := do(c, "OBJECT", "ENCODING", k); err == nil {
		d.Encoding = r.Str
	}
	r, err := do(c, "PEXPIRETIME", k)
	if err != nil {
		return nil, err
	}
	d.PExpireTime = r.Int
	switch d.Type {
	case "string":
		r, err := do(c, "GET", k)
		if err != nil {
			return nil, err
		}
		d.Value = r.Str
	case "list":
		r, err := do(c, "LRANGE", k, "0", "-1")
		if err != nil {
			return nil, err
		}
		d.Value = strs(r)
	case "set":
		r, err := do(c, "SMEMBERS", k)
		if err != nil {
			return nil, err
		}
		m := strs(r)
		sort.Strings(m)
		d.Value = m
	case "zset":
		r, err := do(c, "ZRANGE", k, "0", "-1", "WITHSCORES")
		if err != nil {
			return nil, err
		}
		s := strs(r)
		pairs := make([][]string, 0, len(s)/2)
		for i := 0; i+1 < len(s); i += 2 {
			pairs = append(pairs, []string{s[i], NormalScore(s[i+1])})
		}
		d.Value = pairs
	case "hash":
		r, err := do(c, "HGETALL", k)
		if err != nil {
			return nil, err
		}
		s := strs(r)
		h := map[string]string{}
		var fields []string
		for i := 0; i+1 < len(s); i += 2 {
			h[s[i]] = s[i+1]
			fields = append(fields, s[i])
		}
		d.Value = h
		d.FieldPExpireTime = map[string]int64{}
		sort.Strings(fields)
		for _, f := range fields {
			d.FieldPExpireTime[f] = -1
		}
		if !opt.NoFieldTTL && len(fields) > 0 {
			args := append([]string{"HPEXPIRETIME", k, "FIELDS", strconv.Itoa(len(fields))}, fields...)
			r, err := do(c, args...)
			if err != nil {
				return nil, err
			}
			if len(r.Elems) != len(fields) {
				return nil, fmt.Errorf("HPEXPIRETIME: %d replies for %d fields", len(r.Elems), len(fields))
			}
			for i, f := range fields {
				d.FieldPExpireTime[f] = r.Elems[i].Int
			}
		}
	case "stream":
		s, err := describeStream(c, k)
		if err != nil {
			return nil, err
		}
		d.Value = s
	default:
		return nil, fmt.Errorf("type %q is not described", d.Type)
	}
	return d, nil
}

func describeStream(c *replycase.Conn, k string) (*Stream, error) {
	s := &Stream{Entries: [][]any{}, Groups: []*Group{}}
	info, err := do(c, "XINFO", "STREAM", k)
	if err != nil {
		return nil, err
	}
	im := pairs(info)
	s.Length = im["length"].Int
	s.LastGeneratedID = im["last-generated-id"].Str
	s.MaxDeletedEntryID = im["max-deleted-entry-id"].Str
	s.EntriesAdded = im["entries-added"].Int
	s.RecordedFirstEntryID = im["recorded-first-entry-id"].Str
	r, err := do(c, "XRANGE", k, "-", "+")
	if err != nil {
		return nil, err
	}
	for _, e := range r.Elems {
		s.Entries = append(s.Entries, []any{e.Elems[0].Str, strs(e.Elems[1])})
	}
	groups, err := do(c, "XINFO", "GROUPS", k)
	if err != nil {
		return nil, err
	}
	for _, g := range groups.Elems {
		gm := pairs(g)
		gr := &Group{Name: gm["name"].Str, LastDeliveredID: gm["last-delivered-id"].Str,
			Pending: gm["pending"].Int, Consumers: []Consumer{}, PEL: [][]any{}}
		if er, ok := gm["entries-read"]; ok && er.Type == replycase.Integer {
			n := er.Int
			gr.EntriesRead = &n
		}
		cons, err := do(c, "XINFO", "CONSUMERS", k, gr.Name)
		if err != nil {
			return nil, err
		}
		for _, cr := range cons.Elems {
			cm := pairs(cr)
			gr.Consumers = append(gr.Consumers, Consumer{Name: cm["name"].Str, Pending: cm["pending"].Int})
		}
		sort.Slice(gr.Consumers, func(i, j int) bool { return gr.Consumers[i].Name < gr.Consumers[j].Name })
		pel, err := do(c, "XPENDING", k, gr.Name, "-", "+", "100000")
		if err != nil {
			return nil, err
		}
		for _, p := range pel.Elems {
			gr.PEL = append(gr.PEL, []any{p.Elems[0].Str, p.Elems[1].Str, p.Elems[3].Int})
		}
		s.Groups = append(s.Groups, gr)
	}
	sort.Slice(s.Groups, func(i, j int) bool { return s.Groups[i].Name < s.Groups[j].Name })
	return s, nil
}

// pairs turns a flat array of name/value pairs into a map.
func pairs(r replycase.Reply) map[string]replycase.Reply {
	m := map[string]replycase.Reply{}
	for i := 0; i+1 < len(r.Elems); i += 2 {
		m[r.Elems[i].Str] = r.Elems[i+1]
	}
	return m
}

func strs(r replycase.Reply) []string {
	out := make([]string, 0, len(r.Elems))
	for _, e := range r.Elems {
		out = append(out, e.Str)
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func atoi(s string) int {
	n, _ := strconv.Atoi(strings.TrimSpace(s))
	return n
}

// NormalScore is a score as the shortest text that reads back as the
// same double: redis-server 7.2 and later print scores so, 7.0 (and
// zredis) with 17 significant digits ("0.10000000000000001"), and the
// reference files are compared across the two.
func NormalScore(s string) string {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) {
		return s
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}
