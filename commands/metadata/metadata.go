// Package metadata holds what redis-server 7.0 reports about its commands
// beyond what the command table declares: command tips, key
// specifications and the COMMAND DOCS content (summary, since, group,
// complexity, arguments, history, doc_flags, deprecated_since,
// replaced_by). The data is generated from a real redis-server by
// scripts/genmeta and embedded; it covers every Redis 7.0 command, so a
// family added later finds its entries without regenerating.
//
// Entries are keyed by full command name ("get", "config|get"). Reply
// fragments are kept as typed trees (Node) with the exact RESP3 types the
// server used, so that they render identically in RESP2 and RESP3.
package metadata

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
)

//go:embed redis-7.0.json
var embedded []byte

// File is the generated metadata file.
type File struct {
	// Version is the redis-server version the data was taken from.
	Version string `json:"version"`
	// Categories are the ACL categories in the order ACL CAT lists them,
	// which is also the order COMMAND INFO lists a command's categories in.
	Categories []string `json:"acl_categories"`
	// Commands maps full command names to their entries.
	Commands map[string]*Entry `json:"commands"`
}

// Entry is one command or subcommand as redis-server describes it.
type Entry struct {
	Name string `json:"-"`

	// COMMAND INFO fields. The command table is authoritative for these
	// in replies; they are kept so the table can be checked without a
	// running server.
	Arity    int      `json:"arity"`
	Flags    []string `json:"flags"`
	FirstKey int      `json:"first"`
	LastKey  int      `json:"last"`
	KeyStep  int      `json:"step"`
	ACL      []string `json:"acl"`

	// Tips are the command tips (COMMAND INFO element 8).
	Tips []string `json:"tips"`
	// KeySpecs is COMMAND INFO element 9: a set of key-spec maps.
	KeySpecs Node `json:"key_specs"`
	// Docs is the command's COMMAND DOCS map without its "subcommands"
	// pair, which the command table supplies. Decode fills it; the
	// entries of Load leave it empty, and DocsOf has it.
	Docs Node `json:"docs"`

	// Specs are KeySpecs decoded, for key extraction.
	Specs []KeySpec `json:"-"`
}

// KeySpec is one key specification (Redis keySpec): where the search for
// keys begins and how keys are found from there.
type KeySpec struct {
	Flags []string // RO, RW, OW, RM, access, update, insert, delete, ...

	BeginSearch string // "index", "keyword" or "unknown"
	Index       int    // index: position of the first key
	Keyword     string // keyword: the keyword that precedes the keys
	StartFrom   int    // keyword: where the keyword search starts (negative: from the end, backwards)

	FindKeys  string // "range", "keynum" or "unknown"
	LastKey   int    // range: last key relative to the first, negative from the end
	KeyStep   int    // range and keynum
	Limit     int    // range: with LastKey -1, the share of the remaining arguments that are keys
	KeyNumIdx int    // keynum: position of the key count, relative to the first
	FirstKey  int    // keynum: position of the first key, relative to the first
}

// HasFlag reports whether the spec carries flag.
func (s *KeySpec) HasFlag(flag string) bool {
	for _, f := range s.Flags {
		if f == flag {
			return true
		}
	}
	return false
}

var (
	loadOnce sync.Once
	loaded   *File
)

// Load decodes the embedded file (once) and returns it, without the
// entries' Docs (see DocsOf). It panics when the embedded data is
// malformed: the file is generated, so that is a build defect.
func Load() *File {
	loadOnce.Do(func() {
		f, err := decode(embedded)
		if err != nil {
			panic("metadata: embedded redis-7.0.json: " + err.Error())
		}
		loaded = f
	})
	return loaded
}

var (
	docsOnce sync.Once
	docs     map[string]*Node
	docsErr  error
)

// DocsOf returns the COMMAND DOCS map of a full command name in the
// embedded file, or nil when Redis 7.0 has no such command. The docs are
// decoded at their first use rather than with Load: they are most of the
// file, and decoded they took 2.1-2.8 MB of an idle server's RSS, which
// only COMMAND DOCS (redis-cli's interactive start, for one) reads. It
// panics, as Load does, when the embedded data is malformed, at every
// call: a build defect the package's tests catch.
func DocsOf(name string) *Node {
	docsOnce.Do(func() { docs, docsErr = decodeAllDocs(embedded) })
	if docsErr != nil {
		panic("metadata: embedded redis-7.0.json: " + docsErr.Error())
	}
	return docs[name]
}

// decodeAllDocs decodes the docs of every command in a metadata file.
func decodeAllDocs(data []byte) (map[string]*Node, error) {
	var w wireFile[wireDocs]
	if err := decodeJSON(data, &w); err != nil {
		return nil, err
	}
	m := make(map[string]*Node, len(w.Commands))
	for name, we := range w.Commands {
		n, err := decodeDocs(name, we.Docs)
		if err != nil {
			return nil, err
		}
		m[name] = &n
	}
	return m, nil
}

// Get returns the entry for a full command name ("get", "config|get"),
// or nil when Redis 7.0 has no such command.
func Get(name string) *Entry { return Load().Commands[name] }

// Names returns every command name in the file, sorted.
func (f *File) Names() []string {
	out := make([]string, 0, len(f.Commands))
	for n := range f.Commands {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// wireFile is File as stored, its entries of type E: trees as plain
// JSON values. A decoder skips what E lacks.
type wireFile[E any] struct {
	Version    string        `json:"version"`
	Categories []string      `json:"acl_categories"`
	Commands   map[string]*E `json:"commands"`
}

// wireInfo is an entry as stored, without its docs.
type wireInfo struct {
	Arity    int      `json:"arity"`
	Flags    []string `json:"flags"`
	FirstKey int      `json:"first"`
	LastKey  int      `json:"last"`
	KeyStep  int      `json:"step"`
	ACL      []string `json:"acl"`
	Tips     []string `json:"tips"`
	KeySpecs any      `json:"key_specs"`
}

// wireDocs is an entry's docs alone.
type wireDocs struct {
	Docs any `json:"docs"`
}

// Decode parses a metadata file, docs included.
func Decode(data []byte) (*File, error) {
	f, err := decode(data)
	if err != nil {
		return nil, err
	}
	docs, err := decodeAllDocs(data)
	if err != nil {
		return nil, err
	}
	for name, e := range f.Commands {
		e.Docs = *docs[name]
	}
	return f, nil
}

// decode parses a metadata file without the entries' docs.
func decode(data []byte) (*File, error) {
	var w wireFile[wireInfo]
	if err := decodeJSON(data, &w); err != nil {
		return nil, err
	}
	f := &File{Version: w.Version, Categories: w.Categories, Commands: make(map[string]*Entry, len(w.Commands))}
	for name, wi := range w.Commands {
		if err := f.add(name, wi); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// decodeJSON decodes data into v, numbers as json.Number.
func decodeJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec.Decode(v)
}

// add makes the entry of wi, without docs, and adds it to f.
func (f *File) add(name string, wi *wireInfo) error {
	e := &Entry{Name: name, Arity: wi.Arity, Flags: wi.Flags, FirstKey: wi.FirstKey,
		LastKey: wi.LastKey, KeyStep: wi.KeyStep, ACL: wi.ACL, Tips: wi.Tips}
	var err error
	if e.KeySpecs, err = fromJSON(wi.KeySpecs); err != nil {
		return fmt.Errorf("%s: key_specs: %v", name, err)
	}
	if e.KeySpecs.Kind != Set && e.KeySpecs.Kind != Array {
		return fmt.Errorf("%s: key_specs is not a set", name)
	}
	if e.Specs, err = decodeSpecs(&e.KeySpecs); err != nil {
		return fmt.Errorf("%s: %v", name, err)
	}
	f.Commands[name] = e
	return nil
}

// decodeDocs makes the tree of a command's docs, which must be a map.
func decodeDocs(name string, v any) (Node, error) {
	n, err := fromJSON(v)
	if err != nil {
		return Node{}, fmt.Errorf("%s: docs: %v", name, err)
	}
	if n.Kind != Map {
		return Node{}, fmt.Errorf("%s: docs is not a map", name)
	}
	return n, nil
}

// decodeSpecs turns the key-spec tree into KeySpecs.
func decodeSpecs(n *Node) ([]KeySpec, error) {
	specs := make([]KeySpec, 0, len(n.Elems))
	for i := range n.Elems {
		m := &n.Elems[i]
		var s KeySpec
		if fl := m.Get("flags"); fl != nil {
			for _, x := range fl.Elems {
				s.Flags = append(s.Flags, x.Str)
			}
		}
		bs, fk := m.Get("begin_search"), m.Get("find_keys")
		if bs == nil || fk == nil {
			return nil, fmt.Errorf("key spec %d: missing begin_search or find_keys", i)
		}
		s.BeginSearch = bs.GetStr("type")
		if sp := bs.Get("spec"); sp != nil {
			s.Index = sp.GetInt("index")
			s.Keyword = sp.GetStr("keyword")
			s.StartFrom = sp.GetInt("startfrom")
		}
		s.FindKeys = fk.GetStr("type")
		if sp := fk.Get("spec"); sp != nil {
			s.LastKey = sp.GetInt("lastkey")
			s.KeyStep = sp.GetInt("keystep")
			s.Limit = sp.GetInt("limit")
			s.KeyNumIdx = sp.GetInt("keynumidx")
			s.FirstKey = sp.GetInt("firstkey")
		}
		specs = append(specs, s)
	}
	return specs, nil
}
