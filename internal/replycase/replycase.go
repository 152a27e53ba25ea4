// Package replycase runs cases of commands against a server and records,
// or compares, their replies as JSON trees that keep the RESP2 type of
// every reply. scripts/recordhfe records the replies of a real
// redis-server with it (testdata/hfe/replies-7.4.json), and the
// end-to-end suite (tests/hfe_diff_test.go) runs the same cases against
// zredis and compares.
//
// A case file is a JSON array of cases:
//
//	[
//	  {"name": "hexpire basic",
//	   "cmds": [
//	     ["HSET", "h", "f", "v"],
//	     {"args": ["HTTL", "h", "FIELDS", "1", "f"], "approx": 2},
//	     {"args": ["HGETALL", "h"], "unordered": true},
//	     {"sleep_ms": 100}
//	   ]}
//	]
//
// A command is an array of arguments, or an object with "args" and the
// comparison rules that apply to its reply:
//
//   - "approx": N — an integer reply (at any depth) that is >= 0 in the
//     recording may differ from it by N at most (a TTL read relative to
//     the clock); a negative one (-1, -2) must be equal.
//   - "unordered": true — an array reply is a flat list of field/value
//     pairs whose pair order is unspecified (HGETALL, HRANDFIELD
//     WITHVALUES): the pairs are compared as a multiset.
//   - "unordered_elems": true — the elements of an array reply are
//     compared as a multiset (HKEYS, HVALS).
//   - "type_only": true — only the reply's type is compared (the payload
//     of DUMP, whose bytes are the server's own).
//   - "extract": a regular expression — for a bulk reply, only the
//     matches of the expression are compared (a line of INFO).
//   - "store": NAME — the reply (a bulk string) is kept, and an argument
//     "{{NAME}}" of a later command of the case is replaced by it (DUMP
//     then RESTORE).
//
// An object with "sleep_ms" and no "args" waits that long.
//
// Before each case the runner opens a new RESP2 connection and sends
// FLUSHALL on it (its reply is not recorded).
package replycase

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Reply types, as they are written in the JSON tree.
const (
	Simple    = "simple"    // +OK
	Error     = "error"     // -ERR ...
	Integer   = "int"       // :1
	Bulk      = "bulk"      // $3 foo
	Null      = "null"      // $-1
	NullArray = "nullarray" // *-1
	Array     = "array"     // *N ...
)

// Reply is one RESP2 reply.
type Reply struct {
	Type  string
	Str   string // Simple, Error, Bulk
	Int   int64  // Integer
	Elems []Reply
}

type replyJSON struct {
	T   string          `json:"t"`
	V   json.RawMessage `json:"v,omitempty"`
	B64 string          `json:"b64,omitempty"`
}

// MarshalJSON writes {"t": type, "v": value}; a bulk string that is not
// valid UTF-8 is written as {"t": "bulk", "b64": base64}.
func (r Reply) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	r.write(&b)
	return b.Bytes(), nil
}

func (r Reply) write(b *bytes.Buffer) {
	b.WriteString(`{"t":"`)
	b.WriteString(r.Type)
	b.WriteString(`"`)
	switch r.Type {
	case Simple, Error, Bulk:
		if utf8.ValidString(r.Str) {
			b.WriteString(`,"v":`)
			b.Write(jsonString(r.Str))
		} else {
			b.WriteString(`,"b64":"`)
			b.WriteString(base64.StdEncoding.EncodeToString([]byte(r.Str)))
			b.WriteString(`"`)
		}
	case Integer:
		b.WriteString(`,"v":`)
		b.WriteString(strconv.FormatInt(r.Int, 10))
	case Array:
		b.WriteString(`,"v":[`)
		for i, e := range r.Elems {
			if i > 0 {
				b.WriteString(",")
			}
			e.write(b)
		}
		b.WriteString("]")
	}
	b.WriteString("}")
}

func jsonString(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return bytes.TrimRight(b.Bytes(), "\n")
}

// UnmarshalJSON reads what MarshalJSON writes.
func (r *Reply) UnmarshalJSON(data []byte) error {
	var j replyJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	*r = Reply{Type: j.T}
	switch j.T {
	case Simple, Error, Bulk:
		if j.B64 != "" {
			s, err := base64.StdEncoding.DecodeString(j.B64)
			if err != nil {
				return err
			}
			r.Str = string(s)
			return nil
		}
		return json.Unmarshal(j.V, &r.Str)
	case Integer:
		return json.Unmarshal(j.V, &r.Int)
	case Array:
		return json.Unmarshal(j.V, &r.Elems)
	case Null, NullArray:
		return nil
	}
	return fmt.Errorf("unknown reply type %q", j.T)
}

// String renders the reply compactly for messages: "OK", (error) ERR
// ..., (integer) 1, "bulk", (nil), [a b].
func (r Reply) String() string {
	switch r.Type {
	case Simple:
		return r.Str
	case Error:
		return "(error) " + r.Str
	case Integer:
		return "(integer) " + strconv.FormatInt(r.Int, 10)
	case Bulk:
		if len(r.Str) > 200 {
			return strconv.Quote(r.Str[:200]) + fmt.Sprintf("...(%d bytes)", len(r.Str))
		}
		return strconv.Quote(r.Str)
	case Null:
		return "(nil)"
	case NullArray:
		return "(nil array)"
	case Array:
		parts := make([]string, len(r.Elems))
		for i, e := range r.Elems {
			parts[i] = e.String()
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	return "(" + r.Type + "?)"
}

// Read reads one RESP2 reply (RESP3 types are refused: the runner speaks
// RESP2 only).
func Read(rd *bufio.Reader) (Reply, error) {
	line, err := rd.ReadString('\n')
	if err != nil {
		return Reply{}, err
	}
	if len(line) < 3 || !strings.HasSuffix(line, "\r\n") {
		return Reply{}, fmt.Errorf("bad reply line %q", line)
	}
	body := line[1 : len(line)-2]
	switch line[0] {
	case '+':
		return Reply{Type: Simple, Str: body}, nil
	case '-':
		return Reply{Type: Error, Str: body}, nil
	case ':':
		n, err := strconv.ParseInt(body, 10, 64)
		if err != nil {
			return Reply{}, fmt.Errorf("bad integer %q", line)
		}
		return Reply{Type: Integer, Int: n}, nil
	case '$':
		n, err := strconv.Atoi(body)
		if err != nil {
			return Reply{}, fmt.Errorf("bad bulk length %q", line)
		}
		if n < 0 {
			return Reply{Type: Null}, nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(rd, buf); err != nil {
			return Reply{}, err
		}
		return Reply{Type: Bulk, Str: string(buf[:n])}, nil
	case '*':
		n, err := strconv.Atoi(body)
		if err != nil {
			return Reply{}, fmt.Errorf("bad array length %q", line)
		}
		if n < 0 {
			return Reply{Type: NullArray}, nil
		}
		r := Reply{Type: Array, Elems: make([]Reply, 0, n)}
		for range n {
			e, err := Read(rd)
			if err != nil {
				return Reply{}, err
			}
			r.Elems = append(r.Elems, e)
		}
		return r, nil
	}
	return Reply{}, fmt.Errorf("unexpected reply %q (not RESP2)", line)
}

// Step is one command of a case, or a pause.
type Step struct {
	Args           []string `json:"args,omitempty"`
	Approx         int64    `json:"approx,omitempty"`
	Unordered      bool     `json:"unordered,omitempty"`
	UnorderedElems bool     `json:"unordered_elems,omitempty"`
	TypeOnly       bool     `json:"type_only,omitempty"`
	Extract        string   `json:"extract,omitempty"`
	Store          string   `json:"store,omitempty"`
	SleepMS        int      `json:"sleep_ms,omitempty"`
}

// plain reports whether the step is only its arguments.
func (s Step) plain() bool {
	return s.Approx == 0 && !s.Unordered && !s.UnorderedElems && !s.TypeOnly &&
		s.Extract == "" && s.Store == "" && s.SleepMS == 0
}

// MarshalJSON writes a step without rules as the bare array of its
// arguments.
func (s Step) MarshalJSON() ([]byte, error) {
	if s.plain() && s.Args != nil {
		return json.Marshal(s.Args)
	}
	type step Step
	return json.Marshal(step(s))
}

// UnmarshalJSON reads a step: an array of arguments or an object.
func (s *Step) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '[' {
		*s = Step{}
		return json.Unmarshal(data, &s.Args)
	}
	type step Step
	var v step
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return err
	}
	*s = Step(v)
	if len(s.Args) == 0 && s.SleepMS == 0 {
		return errors.New("a step needs args or sleep_ms")
	}
	if s.Extract != "" {
		if _, err := regexp.Compile(s.Extract); err != nil {
			return fmt.Errorf("extract: %v", err)
		}
	}
	return nil
}

// Case is a named list of steps.
type Case struct {
	Name    string `json:"name"`
	Comment string `json:"comment,omitempty"`
	Cmds    []Step `json:"cmds"`
}

// LoadCases reads a case file and checks that the names are unique.
func LoadCases(path string) ([]Case, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var cases []Case
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cases); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	seen := map[string]bool{}
	for _, c := range cases {
		if c.Name == "" || seen[c.Name] {
			return nil, fmt.Errorf("%s: case name %q empty or repeated", path, c.Name)
		}
		seen[c.Name] = true
	}
	return cases, nil
}

// Result is what one step gave: the command as the case has it (before
// "{{NAME}}" is replaced) and its reply, or a pause.
type Result struct {
	Cmd     []string `json:"cmd,omitempty"`
	SleepMS int      `json:"sleep_ms,omitempty"`
	Reply   *Reply   `json:"reply,omitempty"`
	// Source names where an expected reply written by hand comes from
	// (testdata/hfe/expected-8.0.json); empty in a recording.
	Source string `json:"source,omitempty"`
}

// CaseResult is the results of one case, step by step.
type CaseResult struct {
	Name    string   `json:"name"`
	Results []Result `json:"replies"`
}

// Recording is a file of recorded (or expected) replies.
type Recording struct {
	// Server is the server that gave the replies ("redis 7.4.1"), or
	// what they were written from.
	Server string `json:"server"`
	// Cases is the case file the replies answer.
	Cases string `json:"cases"`
	// Note says how the file was made.
	Note string `json:"note,omitempty"`
	// Source, in a file written by hand, maps each case name (or "*" for
	// all) to the references its expected replies come from.
	Source  map[string]string `json:"source,omitempty"`
	Results []CaseResult      `json:"results"`
}

// LoadRecording reads a recording.
func LoadRecording(path string) (*Recording, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Recording
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return &r, nil
}

// Encode renders a recording with one line per step, so that a change
// reads as a change of the lines it touches.
func (r *Recording) Encode() []byte {
	var b bytes.Buffer
	b.WriteString("{\n")
	fmt.Fprintf(&b, "  \"server\": %s,\n", jsonString(r.Server))
	fmt.Fprintf(&b, "  \"cases\": %s,\n", jsonString(r.Cases))
	if r.Note != "" {
		fmt.Fprintf(&b, "  \"note\": %s,\n", jsonString(r.Note))
	}
	if len(r.Source) > 0 {
		keys := make([]string, 0, len(r.Source))
		for k := range r.Source {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteString("  \"source\": {\n")
		for i, k := range keys {
			fmt.Fprintf(&b, "    %s: %s", jsonString(k), jsonString(r.Source[k]))
			if i < len(keys)-1 {
				b.WriteString(",")
			}
			b.WriteString("\n")
		}
		b.WriteString("  },\n")
	}
	b.WriteString("  \"results\": [\n")
	for i, c := range r.Results {
		fmt.Fprintf(&b, "    {\"name\": %s, \"replies\": [\n", jsonString(c.Name))
		for j, res := range c.Results {
			line, _ := json.Marshal(res)
			// json.Marshal escapes <, > and &; keep them as they are.
			line = bytes.ReplaceAll(line, []byte(`\u003c`), []byte("<"))
			line = bytes.ReplaceAll(line, []byte(`\u003e`), []byte(">"))
			line = bytes.ReplaceAll(line, []byte(`\u0026`), []byte("&"))
			b.WriteString("      ")
			b.Write(line)
			if j < len(c.Results)-1 {
				b.WriteString(",")
			}
			b.WriteString("\n")
		}
		b.WriteString("    ]}")
		if i < len(r.Results)-1 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString("  ]\n}\n")
	return b.Bytes()
}

// Conn is a RESP2 connection.
type Conn struct {
	nc net.Conn
	rd *bufio.Reader
}

// Dial connects to addr.
func Dial(addr string) (*Conn, error) {
	nc, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return nil, err
	}
	return &Conn{nc: nc, rd: bufio.NewReader(nc)}, nil
}

// Close closes the connection.
func (c *Conn) Close() error { return c.nc.Close() }

// Do sends one command and reads its reply.
func (c *Conn) Do(args ...string) (Reply, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	c.nc.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := c.nc.Write(b.Bytes()); err != nil {
		return Reply{}, err
	}
	return Read(c.rd)
}

// Run runs one case against the server at addr: a new connection,
// FLUSHALL, then every step. An error is a failure to talk to the
// server (an error reply is a result).
func Run(addr string, cs Case) ([]Result, error) {
	c, err := Dial(addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if r, err := c.Do("FLUSHALL"); err != nil {
		return nil, err
	} else if r.Type != Simple {
		return nil, fmt.Errorf("FLUSHALL: %v", r)
	}
	vars := map[string]string{}
	var out []Result
	for i, st := range cs.Cmds {
		if len(st.Args) == 0 {
			time.Sleep(time.Duration(st.SleepMS) * time.Millisecond)
			out = append(out, Result{SleepMS: st.SleepMS})
			continue
		}
		args := make([]string, len(st.Args))
		for j, a := range st.Args {
			if name, ok := strings.CutPrefix(a, "{{"); ok && strings.HasSuffix(name, "}}") {
				v, ok := vars[strings.TrimSuffix(name, "}}")]
				if !ok {
					return out, fmt.Errorf("step %d: %s is not stored", i+1, a)
				}
				a = v
			}
			args[j] = a
		}
		r, err := c.Do(args...)
		if err != nil {
			return out, fmt.Errorf("step %d %q: %v", i+1, st.Args, err)
		}
		if st.Store != "" {
			vars[st.Store] = r.Str
		}
		out = append(out, Result{Cmd: st.Args, Reply: &r})
	}
	return out, nil
}

// Match compares a reply with the expected one under the step's rules
// and returns "" when they agree, else why they do not.
func Match(st Step, want, got Reply) string {
	if st.TypeOnly {
		if want.Type != got.Type {
			return fmt.Sprintf("type %s, want %s", got.Type, want.Type)
		}
		return ""
	}
	if st.Extract != "" && want.Type == Bulk && got.Type == Bulk {
		re := regexp.MustCompile(st.Extract)
		w, g := re.FindAllString(want.Str, -1), re.FindAllString(got.Str, -1)
		if strings.Join(w, "\n") != strings.Join(g, "\n") {
			return fmt.Sprintf("%q matches %q, want %q", st.Extract, g, w)
		}
		return ""
	}
	if (st.Unordered || st.UnorderedElems) && want.Type == Array && got.Type == Array {
		width := 1
		if st.Unordered {
			width = 2
		}
		w, errW := groups(want, width, st.Approx)
		g, errG := groups(got, width, st.Approx)
		if errW != nil || errG != nil {
			return fmt.Sprintf("cannot group the elements: %v %v", errW, errG)
		}
		if strings.Join(w, "\x00") != strings.Join(g, "\x00") {
			return "different elements (order aside)"
		}
		return ""
	}
	if !equal(want, got, st.Approx) {
		return "different"
	}
	return ""
}

func groups(r Reply, width int, approx int64) ([]string, error) {
	if len(r.Elems)%width != 0 {
		return nil, fmt.Errorf("%d elements, not pairs", len(r.Elems))
	}
	var out []string
	for i := 0; i < len(r.Elems); i += width {
		var parts []string
		for _, e := range r.Elems[i : i+width] {
			if approx != 0 && e.Type == Integer {
				return nil, errors.New("approx with unordered integers")
			}
			b, _ := json.Marshal(e)
			parts = append(parts, string(b))
		}
		out = append(out, strings.Join(parts, ","))
	}
	sort.Strings(out)
	return out, nil
}

func equal(want, got Reply, approx int64) bool {
	if want.Type != got.Type {
		return false
	}
	switch want.Type {
	case Simple, Error, Bulk:
		return want.Str == got.Str
	case Integer:
		if approx > 0 && want.Int >= 0 {
			d := want.Int - got.Int
			return got.Int >= 0 && d <= approx && d >= -approx
		}
		return want.Int == got.Int
	case Array:
		if len(want.Elems) != len(got.Elems) {
			return false
		}
		for i := range want.Elems {
			if !equal(want.Elems[i], got.Elems[i], approx) {
				return false
			}
		}
	}
	return true
}

// Aligned checks that a recording answers a case file: the same cases in
// the same order, and for every step the same command (or pause) with a
// reply.
func Aligned(cases []Case, rec *Recording) error {
	if len(cases) != len(rec.Results) {
		return fmt.Errorf("%d cases, %d recorded", len(cases), len(rec.Results))
	}
	for i, c := range cases {
		r := rec.Results[i]
		if r.Name != c.Name {
			return fmt.Errorf("case %d is %q, recorded as %q", i+1, c.Name, r.Name)
		}
		if len(r.Results) != len(c.Cmds) {
			return fmt.Errorf("case %q: %d steps, %d recorded", c.Name, len(c.Cmds), len(r.Results))
		}
		for j, st := range c.Cmds {
			got := r.Results[j]
			if len(st.Args) == 0 {
				if got.SleepMS != st.SleepMS || got.Cmd != nil {
					return fmt.Errorf("case %q step %d: a pause of %d ms, recorded %v", c.Name, j+1, st.SleepMS, got)
				}
				continue
			}
			if strings.Join(got.Cmd, "\x00") != strings.Join(st.Args, "\x00") || len(got.Cmd) != len(st.Args) {
				return fmt.Errorf("case %q step %d: %q, recorded for %q", c.Name, j+1, st.Args, got.Cmd)
			}
			if got.Reply == nil {
				return fmt.Errorf("case %q step %d %q: no reply recorded", c.Name, j+1, st.Args)
			}
		}
	}
	return nil
}
