package metadata

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/zredis/zredis/resp"
)

// Kind is the RESP3 type of a reply node.
type Kind byte

// Node kinds, named by their RESP3 type byte.
const (
	Bulk   Kind = '$'
	Status Kind = '+'
	Int    Kind = ':'
	Array  Kind = '*'
	Set    Kind = '~'
	Map    Kind = '%'
	Null   Kind = '_'
)

// Node is a reply fragment as redis-server sent it in RESP3. Maps keep
// their pairs in order as alternating keys and values in Elems.
type Node struct {
	Kind  Kind
	Str   string // Bulk, Status
	Int   int64  // Int
	Elems []Node // Array, Set, Map (2 per pair)
}

// Write renders the node with w, which picks the RESP2 or RESP3 form of
// maps, sets and nulls.
func (n *Node) Write(w *resp.Writer) {
	switch n.Kind {
	case Bulk:
		w.BulkString(n.Str)
	case Status:
		w.Simple(n.Str)
	case Int:
		w.Int(n.Int)
	case Null:
		w.Null()
	case Array, Set, Map:
		switch n.Kind {
		case Array:
			w.Array(len(n.Elems))
		case Set:
			w.Set(len(n.Elems))
		default:
			w.Map(len(n.Elems) / 2)
		}
		for i := range n.Elems {
			n.Elems[i].Write(w)
		}
	}
}

// Get returns the value of key in a map node, or nil.
func (n *Node) Get(key string) *Node {
	if n == nil || n.Kind != Map {
		return nil
	}
	for i := 0; i+1 < len(n.Elems); i += 2 {
		if k := &n.Elems[i]; (k.Kind == Bulk || k.Kind == Status) && k.Str == key {
			return &n.Elems[i+1]
		}
	}
	return nil
}

// GetStr returns the string value of key in a map node, or "".
func (n *Node) GetStr(key string) string {
	if v := n.Get(key); v != nil {
		return v.Str
	}
	return ""
}

// GetInt returns the integer value of key in a map node, or 0.
func (n *Node) GetInt(key string) int {
	if v := n.Get(key); v != nil {
		return int(v.Int)
	}
	return 0
}

// The stored JSON form of a node:
//
//	bulk string      "text"
//	integer          42
//	null             null
//	status           ["+", "text"]
//	array            ["*", elem, ...]
//	set              ["~", elem, ...]
//	set of statuses  ["~+", "text", ...]   (flag sets, the common case)
//	map              ["%", key, value, ...]

// MarshalJSON encodes the node in the stored form.
func (n Node) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // summaries hold '<', '>' and '&'
	if err := enc.Encode(n.toJSON()); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte{'\n'}), nil
}

func (n *Node) toJSON() any {
	switch n.Kind {
	case Bulk:
		return n.Str
	case Int:
		return n.Int
	case Null:
		return nil
	case Status:
		return []any{"+", n.Str}
	case Set:
		if len(n.Elems) > 0 && allStatus(n.Elems) {
			out := []any{"~+"}
			for _, e := range n.Elems {
				out = append(out, e.Str)
			}
			return out
		}
		fallthrough
	case Array, Map:
		out := []any{string(n.Kind)}
		for i := range n.Elems {
			out = append(out, n.Elems[i].toJSON())
		}
		return out
	}
	panic(fmt.Sprintf("metadata: node of unknown kind %q", n.Kind))
}

func allStatus(ns []Node) bool {
	for _, e := range ns {
		if e.Kind != Status {
			return false
		}
	}
	return true
}

// UnmarshalJSON decodes the stored form.
func (n *Node) UnmarshalJSON(b []byte) error {
	var v any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return err
	}
	x, err := fromJSON(v)
	if err != nil {
		return err
	}
	*n = x
	return nil
}

// fromJSON converts a JSON value decoded with UseNumber to a node.
func fromJSON(v any) (Node, error) {
	switch x := v.(type) {
	case nil:
		return Node{Kind: Null}, nil
	case string:
		return Node{Kind: Bulk, Str: x}, nil
	case json.Number:
		i, err := strconv.ParseInt(string(x), 10, 64)
		if err != nil {
			return Node{}, fmt.Errorf("integer %q: %v", x, err)
		}
		return Node{Kind: Int, Int: i}, nil
	case []any:
		if len(x) == 0 {
			return Node{}, fmt.Errorf("aggregate without a type tag")
		}
		tag, ok := x[0].(string)
		if !ok {
			return Node{}, fmt.Errorf("aggregate type tag %v is not a string", x[0])
		}
		rest := x[1:]
		switch tag {
		case "+":
			if len(rest) != 1 {
				return Node{}, fmt.Errorf("status node with %d values", len(rest))
			}
			s, ok := rest[0].(string)
			if !ok {
				return Node{}, fmt.Errorf("status value %v is not a string", rest[0])
			}
			return Node{Kind: Status, Str: s}, nil
		case "~+":
			n := Node{Kind: Set, Elems: make([]Node, len(rest))}
			for i, e := range rest {
				s, ok := e.(string)
				if !ok {
					return Node{}, fmt.Errorf("status set element %v is not a string", e)
				}
				n.Elems[i] = Node{Kind: Status, Str: s}
			}
			return n, nil
		case "*", "~", "%":
			if tag == "%" && len(rest)%2 != 0 {
				return Node{}, fmt.Errorf("map with an odd number of elements")
			}
			n := Node{Kind: Kind(tag[0]), Elems: make([]Node, len(rest))}
			for i, e := range rest {
				var err error
				if n.Elems[i], err = fromJSON(e); err != nil {
					return Node{}, err
				}
			}
			return n, nil
		}
		return Node{}, fmt.Errorf("unknown type tag %q", tag)
	}
	return Node{}, fmt.Errorf("unexpected JSON value %T", v)
}
