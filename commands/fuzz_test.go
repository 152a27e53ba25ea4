package commands

import (
	"bytes"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/zredis/zredis/engine"
)

// FuzzCommandArgs runs short sequences of commands built from the fuzz
// input through the real dispatcher against an in-memory keyspace.
// Nothing may panic, and every command must leave well-formed RESP: one
// complete reply (none after CLIENT REPLY OFF/SKIP; several for the
// pub/sub commands, one per channel).
//
// Input format: commands separated by 0xFF (at most fuzzMaxCommands).
// In each, the first byte picks a top-level command of the table (index
// modulo their number); the other bytes, split at 0x00, are its
// arguments (at most fuzzMaxArgs). A container's subcommand is its first
// argument, as on the wire.
func FuzzCommandArgs(f *testing.F) {
	cmds := fuzzCommands()
	if len(cmds) == 0 {
		f.Fatal("the command table is empty")
	}
	if len(cmds) > 256 {
		f.Fatalf("%d top-level commands: one index byte cannot reach them all", len(cmds))
	}
	seeds := [][]string{
		{},
		{"k"},
		{"k", "v"},
		{"k", "v", "ex", "10"},
		{"k", "v", "px", "1", "nx", "get"},
		{"k", "0", "-1"},
		{"k", "1", "2", "3"},
		{"k", "-9223372036854775808", "9223372036854775807"},
		{"k", "1.5e3", "inf"},
	}
	for i, cmd := range cmds {
		for _, s := range seeds {
			f.Add(fuzzInput(i, s))
		}
		for _, sub := range cmd.SortedSubs() {
			name := sub.Name[len(cmd.Name)+1:]
			f.Add(fuzzInput(i, []string{name}))
			f.Add(fuzzInput(i, []string{name, "k", "v"}))
			f.Add(fuzzInput(i, []string{name, "*"}))
		}
	}
	// A few sequences over one key.
	if set, get := fuzzIndex(cmds, "set"), fuzzIndex(cmds, "get"); set >= 0 && get >= 0 {
		seq := append(fuzzInput(set, []string{"k", "v", "px", "1500"}), 0xFF)
		f.Add(append(seq, fuzzInput(get, []string{"k"})...))
	}
	// A stream command mix over one key: entries, a group, reads,
	// claims, trims, the introspection of all that.
	for _, seq := range fuzzStreamSeqs {
		if in := fuzzSequence(cmds, seq); in != nil {
			f.Add(in)
		}
	}
	if ci := fuzzIndex(cmds, "command"); ci >= 0 {
		f.Add(fuzzInput(ci, []string{"getkeys", "set", "k", "v"}))
		f.Add(fuzzInput(ci, []string{"getkeysandflags", "command", "getkeys", "get", "k"}))
		f.Add(fuzzInput(ci, []string{"list", "filterby", "pattern", "[a-\\"}))
		f.Add(fuzzInput(ci, []string{"info", "command|", "|", ""}))
	}

	f.Fuzz(func(t *testing.T, data []byte) {
		e := newTestEnv(t)
		silenced := false // CLIENT REPLY OFF|SKIP may have silenced replies
		for n, part := range bytes.Split(data, []byte{0xFF}) {
			if n == fuzzMaxCommands {
				break
			}
			if len(part) == 0 {
				continue
			}
			cmd := cmds[int(part[0])%len(cmds)]
			args := [][]byte{[]byte(cmd.Name)}
			if len(part) > 1 {
				args = append(args, bytes.SplitN(part[1:], []byte{0}, fuzzMaxArgs)...)
			}
			fuzzClampCounts(args)
			run := fuzzResolve(cmd, args)
			if run.Flags&engine.Admin != 0 || run.Flags&engine.Blocking != 0 && !fuzzNeverBlocks(run, args) {
				continue
			}
			if run.Name == "client|reply" {
				silenced = true
			}
			reply := e.runArgs(args)
			if err := fuzzCheckReply(reply, run, silenced); err != nil {
				t.Fatalf("%q: %v\nreply: %q", args, err, reply)
			}
			e.advance(time.Second)
		}
	})
}

// fuzzClampCounts bounds integer arguments: counts and offsets in the
// hundreds of millions are legal and make Redis and zredis alike build
// replies or strings of that size (SRANDMEMBER k -500000000, SETRANGE at
// 512 MB), which is slow, not wrong, and would stall a short fuzz run.
func fuzzClampCounts(args [][]byte) {
	const limit = 100000
	for i := 1; i < len(args); i++ {
		if n, ok := engine.ParseInt(args[i]); ok && (n > limit || n < -limit) {
			if n > 0 {
				args[i] = []byte("100000")
			} else {
				args[i] = []byte("-100000")
			}
		}
	}
}

const (
	fuzzMaxCommands = 8
	fuzzMaxArgs     = 16
)

// fuzzNeverBlocks reports whether a command flagged blocking cannot
// block as called: XREAD and XREADGROUP without a BLOCK option answer
// at once (the fuzzer runs them, its only way to reach stream reads).
func fuzzNeverBlocks(cmd *engine.Command, args [][]byte) bool {
	if cmd.Name != "xread" && cmd.Name != "xreadgroup" {
		return false
	}
	for _, a := range args[1:] {
		if engine.EqualFold(a, "block") {
			return false
		}
	}
	return true
}

// fuzzStreamSeqs are seed sequences of stream commands over one key.
var fuzzStreamSeqs = [][][]string{
	{ // hash field expiration
		{"hset", "h", "f", "v", "g", "w", "n", "1"},
		{"hpexpire", "h", "1", "nx", "fields", "2", "f", "x"},
		{"hexpireat", "h", "70368744177", "gt", "fields", "1", "g"},
		{"hincrbyfloat", "h", "n", "1.5"},
		{"hgetex", "h", "persist", "fields", "1", "g"},
		{"hsetex", "h", "fxx", "keepttl", "fields", "1", "n", "2"},
		{"httl", "h", "fields", "3", "f", "g", "n"},
		{"hgetdel", "h", "fields", "2", "g", "n"},
		{"hpexpire", "h", "0", "fields", "1", "f"},
	},
	{
		{"xadd", "s", "maxlen", "~", "2", "1-*", "f", "v", "g", "w"},
		{"xadd", "s", "2-0", "f", "v"},
		{"xgroup", "create", "s", "g", "0", "entriesread", "1"},
		{"xreadgroup", "group", "g", "c", "count", "1", "streams", "s", ">"},
		{"xclaim", "s", "g", "d", "0", "1-0", "2-0", "force", "justid", "lastid", "2-0"},
		{"xdel", "s", "1-0"},
		{"xautoclaim", "s", "g", "e", "0", "0", "count", "1"},
		{"xinfo", "stream", "s", "full", "count", "0"},
	},
	{
		{"xadd", "s", "nomkstream", "minid", "~", "1", "limit", "1", "*", "f", "v"},
		{"xadd", "s", "*", "1", "2"},
		{"xgroup", "create", "s", "g", "$", "mkstream"},
		{"xadd", "s", "*", "1", "2"},
		{"xreadgroup", "group", "g", "c", "noack", "streams", "s", ">"},
		{"xpending", "s", "g", "idle", "0", "-", "+", "10", "c"},
		{"xtrim", "s", "maxlen", "=", "0"},
		{"xread", "count", "2", "streams", "s", "s", "0", "$"},
	},
	{
		{"xsetid", "s", "5-5"},
		{"xgroup", "create", "s", "g", "0", "mkstream"},
		{"xsetid", "s", "7-7", "entriesadded", "3", "maxdeletedid", "6-0"},
		{"xgroup", "createconsumer", "s", "g", "c"},
		{"xinfo", "groups", "s"},
		{"xgroup", "setid", "s", "g", "-", "entriesread", "-1"},
		{"xrevrange", "s", "(+", "(-", "count", "1"},
		{"xgroup", "delconsumer", "s", "g", "c"},
	},
}

// fuzzSequence encodes a sequence of commands as a fuzz input (nil when
// a command is not in the table).
func fuzzSequence(cmds []*engine.Command, seq [][]string) []byte {
	var in []byte
	for i, c := range seq {
		idx := fuzzIndex(cmds, c[0])
		if idx < 0 {
			return nil
		}
		if i > 0 {
			in = append(in, 0xFF)
		}
		in = append(in, fuzzInput(idx, c[1:])...)
	}
	return in
}

// fuzzNoRun are commands that are not flagged admin or blocking yet would
// block the test: WAIT waits for replicas that never come.
var fuzzNoRun = map[string]bool{"wait": true}

// fuzzCommands are the top-level commands the fuzzer picks from.
func fuzzCommands() []*engine.Command {
	var out []*engine.Command
	for _, cmd := range table.All() {
		if !fuzzNoRun[cmd.Name] {
			out = append(out, cmd)
		}
	}
	return out
}

// fuzzResolve returns the command args run: the subcommand when cmd is a
// container and args name one of its subcommands.
//
// The fuzzer skips what acts on the process or the file system rather
// than on the keyspace, or blocks: the admin commands (SHUTDOWN, MONITOR,
// DEBUG, SAVE, CONFIG SET dir, REPLICAOF...) and the blocking ones,
// decided on the resolved command.
func fuzzResolve(cmd *engine.Command, args [][]byte) *engine.Command {
	if len(cmd.Subs) > 0 && len(args) >= 2 {
		if sub := engine.Lookup2(cmd, args[1]); sub != nil {
			return sub
		}
	}
	return cmd
}

func fuzzIndex(cmds []*engine.Command, name string) int {
	for i, c := range cmds {
		if c.Name == name {
			return i
		}
	}
	return -1
}

func fuzzInput(index int, args []string) []byte {
	b := []byte{byte(index)}
	for i, a := range args {
		if i > 0 {
			b = append(b, 0)
		}
		b = append(b, a...)
	}
	return b
}

// fuzzCheckReply verifies that reply is well-formed RESP2/RESP3 holding
// as many replies as cmd may send: one, none once replies may have been
// silenced, any number for a pub/sub command.
func fuzzCheckReply(reply string, cmd *engine.Command, silenced bool) error {
	b := []byte(reply)
	n := 0
	for len(b) > 0 {
		rest, err := fuzzParseValue(b, 0)
		if err != nil {
			return err
		}
		b = rest
		n++
	}
	switch {
	case cmd.Flags&engine.PubSub != 0:
	case n == 0 && !silenced:
		return fmt.Errorf("no reply")
	case n > 1:
		return fmt.Errorf("%d replies to one command", n)
	}
	return nil
}

// fuzzParseValue parses one RESP value from b and returns what follows.
func fuzzParseValue(b []byte, depth int) ([]byte, error) {
	if depth > 64 {
		return nil, fmt.Errorf("nesting deeper than 64")
	}
	i := bytes.Index(b, []byte("\r\n"))
	if i < 1 {
		return nil, fmt.Errorf("no complete line in %q", fuzzHead(b))
	}
	typ, body, rest := b[0], string(b[1:i]), b[i+2:]
	switch typ {
	case '+', '-':
		if bytes.ContainsAny([]byte(body), "\r\n") {
			return nil, fmt.Errorf("line reply with CR/LF")
		}
		return rest, nil
	case ':', '(':
		if _, ok := engine.ParseInt([]byte(body)); !ok && typ == ':' {
			return nil, fmt.Errorf("bad integer %q", body)
		}
		return rest, nil
	case ',', '#':
		return rest, nil
	case '_':
		if body != "" {
			return nil, fmt.Errorf("bad null %q", body)
		}
		return rest, nil
	case '$', '=', '!':
		n, err := strconv.Atoi(body)
		if err != nil || n < -1 {
			return nil, fmt.Errorf("bad bulk length %q", body)
		}
		if n == -1 {
			return rest, nil
		}
		if len(rest) < n+2 || rest[n] != '\r' || rest[n+1] != '\n' {
			return nil, fmt.Errorf("bulk of %d bytes not followed by CRLF", n)
		}
		return rest[n+2:], nil
	case '*', '~', '%', '>', '|':
		n, err := strconv.Atoi(body)
		if err != nil || n < -1 {
			return nil, fmt.Errorf("bad aggregate length %q", body)
		}
		if typ == '%' || typ == '|' {
			n *= 2
		}
		for j := 0; j < n; j++ {
			if rest, err = fuzzParseValue(rest, depth+1); err != nil {
				return nil, fmt.Errorf("element %d of %c%s: %v", j, typ, body, err)
			}
		}
		return rest, nil
	}
	return nil, fmt.Errorf("unknown reply type in %q", fuzzHead(b))
}

func fuzzHead(b []byte) []byte {
	if len(b) > 40 {
		return b[:40]
	}
	return b
}
