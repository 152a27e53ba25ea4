package tests

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Differential tests of the COMMAND family. zredis describes only the
// commands it implements, so the suites walk zredis's own COMMAND LIST
// and compare each command's description with redis-server's. Redis lists
// subcommands in hash-table order, which changes from one process to the
// next: containers are compared subcommand by subcommand.

// ---- a RESP tree keeping every element's raw bytes ---------------------------

type cmdNode struct {
	typ   byte
	str   string // line content or bulk payload
	raw   string // the element's exact bytes
	elems []cmdNode
}

func cmdParse(t *testing.T, raw string) cmdNode {
	t.Helper()
	rd := bufio.NewReader(strings.NewReader(raw))
	n, err := cmdParseNode(rd)
	if err != nil {
		t.Fatalf("parsing %q: %v", raw, err)
	}
	return n
}

func cmdParseNode(rd *bufio.Reader) (cmdNode, error) {
	var b bytes.Buffer
	line, err := rd.ReadString('\n')
	if err != nil {
		return cmdNode{}, err
	}
	b.WriteString(line)
	n := cmdNode{typ: line[0], str: strings.TrimSuffix(line[1:], "\r\n")}
	switch n.typ {
	case '$', '=':
		size, err := strconv.Atoi(n.str)
		if err != nil {
			return n, err
		}
		if size >= 0 {
			buf := make([]byte, size+2)
			if _, err := io.ReadFull(rd, buf); err != nil {
				return n, err
			}
			b.Write(buf)
			n.str = string(buf[:size])
		}
	case '*', '~', '%':
		size, err := strconv.Atoi(n.str)
		if err != nil {
			return n, err
		}
		if n.typ == '%' {
			size *= 2
		}
		for i := 0; i < size; i++ {
			e, err := cmdParseNode(rd)
			if err != nil {
				return n, err
			}
			b.WriteString(e.raw)
			n.elems = append(n.elems, e)
		}
	}
	n.raw = b.String()
	return n, nil
}

// cmdGet returns the value of key in a map (or flattened pair array).
func (n cmdNode) cmdGet(key string) (cmdNode, bool) {
	for i := 0; i+1 < len(n.elems); i += 2 {
		if n.elems[i].str == key {
			return n.elems[i+1], true
		}
	}
	return cmdNode{}, false
}

// cmdImplemented is zredis's COMMAND LIST: every command and subcommand
// it implements.
func cmdImplemented(t *testing.T, d *Diff) []string {
	t.Helper()
	list := cmdParse(t, d.Z.Do("COMMAND", "LIST"))
	require.Equal(t, byte('*'), list.typ)
	var names []string
	for _, e := range list.elems {
		names = append(names, e.str)
	}
	sort.Strings(names)
	require.NotEmpty(t, names)
	return names
}

// cmdCompare counts one differential case and reports a difference.
func cmdCompare(t *testing.T, what string, z, r string) {
	t.Helper()
	diffCases.Add(1)
	if z != r {
		t.Errorf("%s:\n zredis: %q\n  redis: %q", what, z, r)
	}
}

// ---- COMMAND INFO -------------------------------------------------------------

// cmdCompareInfo compares one COMMAND INFO entry (the 10-element array),
// subcommands by name: each of zredis's must be redis's.
func cmdCompareInfo(t *testing.T, name string, z, r cmdNode) {
	t.Helper()
	if z.typ != '*' || len(z.elems) != 10 || r.typ != '*' || len(r.elems) != 10 {
		cmdCompare(t, "COMMAND INFO "+name, z.raw, r.raw)
		return
	}
	var zHead, rHead strings.Builder
	for i := 0; i < 9; i++ {
		zHead.WriteString(z.elems[i].raw)
		rHead.WriteString(r.elems[i].raw)
	}
	cmdCompare(t, "COMMAND INFO "+name+" (without subcommands)", zHead.String(), rHead.String())
	zSubs, rSubs := z.elems[9], r.elems[9]
	if len(zSubs.elems) == 0 {
		cmdCompare(t, "COMMAND INFO "+name+" subcommands", zSubs.raw, rSubs.raw)
		return
	}
	for _, zs := range zSubs.elems {
		sub := zs.elems[0].str
		found := false
		for _, rs := range rSubs.elems {
			if rs.elems[0].str == sub {
				cmdCompareInfo(t, sub, zs, rs)
				found = true
			}
		}
		if !found {
			t.Errorf("COMMAND INFO %s: zredis lists subcommand %s, redis does not", name, sub)
		}
	}
}

func TestCommandInfoDiff(t *testing.T) {
	d := NewDiff(t)
	for _, name := range cmdImplemented(t, d) {
		z := cmdParse(t, d.Z.Do("COMMAND", "INFO", name))
		r := cmdParse(t, d.R.Do("COMMAND", "INFO", name))
		require.Len(t, z.elems, 1, name)
		require.Len(t, r.elems, 1, name)
		cmdCompareInfo(t, name, z.elems[0], r.elems[0])
	}
	// Names are looked up case-insensitively, unknown ones answer null.
	d.Do("COMMAND", "INFO", "GET", "nosuchcommand", "", "|", "get|x", "command|count|x")
	d.Do("COMMAND", "INFO", "Command|Count")
	d.Do("COMMAND", "INFO", "COMMAND|NOSUCH")
}

// COMMAND and COMMAND INFO without names: one entry per top-level
// command, each as COMMAND INFO <name> describes it.
func TestCommandAllDiff(t *testing.T) {
	d := NewDiff(t)
	d.DoLen("COMMAND")
	d.DoLen("COMMAND", "INFO")
	d.DoLen("COMMAND", "DOCS")
	d.DoLen("COMMAND", "LIST")
	d.DoLen("COMMAND", "COUNT")

	names := cmdImplemented(t, d)
	top := 0
	for _, n := range names {
		if !strings.Contains(n, "|") {
			top++
		}
	}
	assert.Equal(t, ":"+strconv.Itoa(top)+"\r\n", d.Z.Do("COMMAND", "COUNT"))
	all := cmdParse(t, d.Z.Do("COMMAND"))
	require.Len(t, all.elems, top)
	assert.Equal(t, all.raw, d.Z.Do("COMMAND", "INFO"))
	for _, z := range all.elems {
		name := z.elems[0].str
		r := cmdParse(t, d.R.Do("COMMAND", "INFO", name))
		cmdCompareInfo(t, name, z, r.elems[0])
	}
}

// ---- COMMAND DOCS -------------------------------------------------------------

// cmdCompareDocs compares one command's docs map; subcommands by name.
func cmdCompareDocs(t *testing.T, name string, z, r cmdNode) {
	t.Helper()
	zSubs, zHas := z.cmdGet("subcommands")
	rSubs, rHas := r.cmdGet("subcommands")
	if !zHas || !rHas {
		cmdCompare(t, "COMMAND DOCS "+name, z.raw, r.raw)
		return
	}
	strip := func(n cmdNode) string {
		var b strings.Builder
		for i := 0; i+1 < len(n.elems); i += 2 {
			if n.elems[i].str != "subcommands" {
				b.WriteString(n.elems[i].raw + n.elems[i+1].raw)
			}
		}
		return fmt.Sprintf("%c%d %s", n.typ, len(n.elems), b.String())
	}
	cmdCompare(t, "COMMAND DOCS "+name+" (without subcommands)", strip(z), strip(r))
	for i := 0; i+1 < len(zSubs.elems); i += 2 {
		sub := zSubs.elems[i].str
		rs, ok := rSubs.cmdGet(sub)
		if !ok {
			t.Errorf("COMMAND DOCS %s: zredis lists subcommand %s, redis does not", name, sub)
			continue
		}
		cmdCompareDocs(t, sub, zSubs.elems[i+1], rs)
	}
}

func TestCommandDocsDiff(t *testing.T) {
	d := NewDiff(t)
	for _, name := range cmdImplemented(t, d) {
		z := cmdParse(t, d.Z.Do("COMMAND", "DOCS", name))
		r := cmdParse(t, d.R.Do("COMMAND", "DOCS", name))
		require.Len(t, z.elems, 2, name)
		require.Len(t, r.elems, 2, name)
		cmdCompare(t, "COMMAND DOCS "+name+" (name)", z.elems[0].raw, r.elems[0].raw)
		cmdCompareDocs(t, name, z.elems[1], r.elems[1])
	}
	// redis-cli builds its hints from these bytes.
	d.Do("COMMAND", "DOCS", "get")
	d.Do("COMMAND", "DOCS", "GET", "nosuchcommand", "get", "", "get|x")
	d.Do("COMMAND", "DOCS", "nosuchcommand")
	d.Do("COMMAND", "DOCS", "command|count")
}

// The RESP3 forms: maps and sets where RESP2 has arrays.
func TestCommandRESP3Diff(t *testing.T) {
	d := NewDiff(t)
	d.Resp3()
	d.Do("COMMAND", "INFO", "get", "nosuchcommand")
	d.Do("COMMAND", "DOCS", "get", "nosuchcommand")
	d.Do("COMMAND", "INFO", "command|count")
	d.Do("COMMAND", "GETKEYSANDFLAGS", "get", "k")
	d.Do("COMMAND", "HELP")
	d.Do("COMMAND", "COUNT", "x")
}

// ---- COMMAND GETKEYS ----------------------------------------------------------

// cmdKeyArgs builds invocations of a command with n arguments after the
// name (subcommand name included for a subcommand), in two flavours:
// words and small numbers (for the key counts of movable-keys commands).
func cmdKeyArgs(name string, n int) [][]string {
	parts := strings.Split(name, "|")
	var out [][]string
	for _, numeric := range []bool{false, true} {
		args := append([]string{}, parts...)
		for i := len(parts); i <= n; i++ {
			if numeric {
				args = append(args, strconv.Itoa(1+(i-len(parts))%3))
			} else {
				args = append(args, "k"+strconv.Itoa(i))
			}
		}
		out = append(out, args)
	}
	return out
}

func TestCommandGetKeysDiff(t *testing.T) {
	d := NewDiff(t)
	for _, name := range cmdImplemented(t, d) {
		info := cmdParse(t, d.Z.Do("COMMAND", "INFO", name)).elems[0]
		arity, _ := strconv.Atoi(info.elems[1].str)
		counts := []int{arity - 1}
		if arity < 0 {
			counts = []int{-arity - 1, -arity, -arity + 1, -arity + 3}
		} else {
			counts = append(counts, arity) // one too many
		}
		for _, n := range counts {
			for _, args := range cmdKeyArgs(name, n) {
				if name == "pfmerge" && len(args) == 2 {
					// PFMERGE with its destination alone: Redis's second
					// key spec (the sources) finds nothing, so it answers
					// "Invalid arguments" and its ACL checks no key at
					// all; zredis finds the destination, and checks it.
					require.Equal(t, "*1\r\n$"+strconv.Itoa(len(args[1]))+"\r\n"+args[1]+"\r\n", d.Z.Do("COMMAND", "GETKEYS", args[0], args[1]))
					continue
				}
				d.Do(append([]string{"COMMAND", "GETKEYS"}, args...)...)
				d.Do(append([]string{"COMMAND", "GETKEYSANDFLAGS"}, args...)...)
			}
		}
	}
	// The errors, in Redis's order of checks.
	d.Do("COMMAND", "GETKEYS")
	d.Do("COMMAND", "GETKEYS", "get")
	d.Do("COMMAND", "GETKEYS", "nosuchcommand", "a", "b")
	d.Do("COMMAND", "GETKEYS", "ping", "a")
	d.Do("COMMAND", "GETKEYS", "get", "a", "b")
	d.Do("COMMAND", "GETKEYS", "command", "nosuch")
	d.Do("COMMAND", "GETKEYS", "command", "count")
	d.Do("COMMAND", "GETKEYS", "command", "getkeys", "get", "k")
	d.Do("COMMAND", "GETKEYS", "GET", "k")
	d.Do("COMMAND", "GETKEYSANDFLAGS", "nosuchcommand", "a")
	d.Do("COMMAND", "GETKEYSANDFLAGS", "get")
}

// ---- COMMAND LIST, COUNT, HELP --------------------------------------------------

func TestCommandListDiff(t *testing.T) {
	d := NewDiff(t)
	impl := map[string]bool{}
	for _, n := range cmdImplemented(t, d) {
		impl[n] = true
	}
	// zredis's filtered list is redis's, restricted to what zredis has.
	filters := [][]string{
		nil,
		{"FILTERBY", "PATTERN", "*"},
		{"FILTERBY", "PATTERN", "*|*"},
		{"FILTERBY", "PATTERN", "G?T"},
		{"filterby", "pattern", "[a-f]*"},
		{"FILTERBY", "PATTERN", "*e[^x]*"},
	}
	for _, cat := range []string{"keyspace", "read", "write", "string", "fast", "slow", "admin", "dangerous", "connection", "STRING"} {
		filters = append(filters, []string{"FILTERBY", "ACLCAT", cat})
	}
	for _, f := range filters {
		args := append([]string{"COMMAND", "LIST"}, f...)
		z := cmdParse(t, d.Z.Do(args...))
		r := cmdParse(t, d.R.Do(args...))
		var zl, rl []string
		for _, e := range z.elems {
			zl = append(zl, e.str)
		}
		for _, e := range r.elems {
			if impl[e.str] {
				rl = append(rl, e.str)
			}
		}
		sort.Strings(zl)
		sort.Strings(rl)
		cmdCompare(t, strings.Join(args, " "), strings.Join(zl, " "), strings.Join(rl, " "))
	}
	d.Do("COMMAND", "LIST", "FILTERBY", "MODULE", "x")
	d.Do("COMMAND", "LIST", "FILTERBY", "ACLCAT", "nosuchcategory")
	d.Do("COMMAND", "LIST", "FILTERBY", "ACLCAT", "@string")
	d.Do("COMMAND", "LIST", "FILTERBY", "PATTERN", "")
	d.Do("COMMAND", "LIST", "FILTERBY", "PATTERN", "nosuch*")
	d.Do("COMMAND", "LIST", "x")
	d.Do("COMMAND", "LIST", "FILTERBY")
	d.Do("COMMAND", "LIST", "FILTERBY", "PATTERN")
	d.Do("COMMAND", "LIST", "FILTERBY", "NAME", "x")
	d.Do("COMMAND", "LIST", "FILTERBY", "PATTERN", "x", "FILTERBY", "PATTERN", "y")
}

func TestCommandMiscDiff(t *testing.T) {
	d := NewDiff(t)
	d.Do("COMMAND", "HELP")
	d.Do("command", "help")
	d.Do("COMMAND", "HELP", "x")
	d.Do("COMMAND", "COUNT", "x")
	d.Do("COMMAND", "FOO")
	d.DoLen("COMMAND", "COUNT")
}

// ---- redis-cli ----------------------------------------------------------------

// redis-cli prints the docs of GET as redis-server's.
func TestCommandRedisCLIDocs(t *testing.T) {
	requireRedisCLI(t)
	NewDiff(t)
	for _, args := range [][]string{
		{"COMMAND", "DOCS", "get"},
		{"COMMAND", "INFO", "get"},
		{"COMMAND", "GETKEYS", "get", "k"},
	} {
		cmdCompare(t, "redis-cli "+strings.Join(args, " "), cli(t, shared.z, nil, args...), cli(t, shared.r, nil, args...))
	}
}

// Interactive redis-cli fetches COMMAND DOCS when it starts and builds
// its hints from the reply: typing a command zredis serves shows its
// arguments, typing one it does not serve shows none (with no usable
// COMMAND DOCS redis-cli would fall back to its built-in hints for every
// command). zredis serves every command of 7.0, so the one it does not
// serve is one a zredis of this test renames away (rename-command).
func TestCommandRedisCLIHints(t *testing.T) {
	cliBin := RequireTool(t, "redis-cli")
	scriptBin := RequireTool(t, "script")
	d := NewDiff(t)
	impl := map[string]bool{}
	for _, n := range cmdImplemented(t, d) {
		impl[n] = true
	}
	require.True(t, impl["get"], "GET is implemented")
	const missing = "lmpop"
	without := StartZredis(t, "--rename-command", missing, "")
	require.Equal(t, "*1\r\n$-1\r\n", Dial(t, without.Addr).Do("COMMAND", "INFO", missing), "%s renamed away", missing)

	const hintStart = "\x1b[0;90;49m" // redis-cli's hint colour
	hint := func(p *Proc, typed string) (string, bool) {
		t.Helper()
		out := cmdInteractive(t, scriptBin, cliBin, p, typed)
		// The last refresh that shows the whole typed text.
		i := strings.LastIndex(out, typed)
		if i < 0 {
			t.Fatalf("redis-cli did not echo %q:\n%q", typed, out)
		}
		rest := out[i+len(typed):]
		if !strings.HasPrefix(rest, hintStart) {
			return "", false
		}
		rest = rest[len(hintStart):]
		if j := strings.Index(rest, "\x1b["); j >= 0 {
			rest = rest[:j]
		}
		return rest, true
	}

	zh, zok := hint(shared.z, "GET ")
	rh, rok := hint(shared.r, "GET ")
	require.True(t, rok, "redis-server: no hint for GET")
	require.True(t, zok, "zredis: no hint for GET")
	assert.Equal(t, rh, zh)
	assert.Equal(t, "key", zh)

	upper := strings.ToUpper(missing) + " "
	_, rok = hint(shared.r, upper)
	require.True(t, rok, "redis-server: no hint for %s", missing)
	zh, zok = hint(without, upper)
	assert.False(t, zok, "zredis: a hint for %s (%q): redis-cli did not use zredis's COMMAND DOCS", missing, zh)
}

var cmdInteractiveMu sync.Mutex

// cmdInteractive runs redis-cli on a pseudo-terminal (script(1)), types
// text once the prompt shows, waits for the echo, then quits; it returns
// everything redis-cli printed.
func cmdInteractive(t *testing.T, scriptBin, cliBin string, p *Proc, text string) string {
	t.Helper()
	cmdInteractiveMu.Lock()
	defer cmdInteractiveMu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	shell := fmt.Sprintf("stty cols 250 rows 50; exec %s -h 127.0.0.1 -p %d", cliBin, p.Port)
	cmd := exec.CommandContext(ctx, scriptBin, "-qc", shell, "/dev/null")
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	var out cmdSafeBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	waitFor := func(s string) {
		for !strings.Contains(out.String(), s) {
			if ctx.Err() != nil {
				t.Fatalf("redis-cli: waiting for %q: %v\n%q", s, ctx.Err(), out.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	prompt := fmt.Sprintf("127.0.0.1:%d> ", p.Port)
	waitFor(prompt)
	io.WriteString(stdin, text)
	waitFor(prompt + text)
	// Ctrl-U clears the line; then quit.
	io.WriteString(stdin, "\x15quit\r")
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatalf("redis-cli did not quit:\n%q", out.String())
	}
	return out.String()
}

type cmdSafeBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *cmdSafeBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *cmdSafeBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
