package commands

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zredis/zredis/commands/metadata"
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/internal/testsupport"
)

// The command table must describe every command exactly as redis-server
// 7.0 does: arity, flags, first/last key, key step, ACL categories and the
// COMMAND DOCS group. Two checks: against the embedded metadata (always
// runs), and against a live redis-server (skipped when none is installed),
// which also proves the embedded metadata current.

// tblRedisView is what Redis says about one command.
type tblRedisView struct {
	Arity             int
	Flags             []string
	First, Last, Step int
	ACL               []string
	Group             string
}

// tblAllCommands lists every command of the table, subcommands after
// their container.
func tblAllCommands() []*engine.Command {
	var out []*engine.Command
	for _, cmd := range table.All() {
		out = append(out, cmd)
		out = append(out, cmd.SortedSubs()...)
	}
	return out
}

// tblDiff compares a table entry with Redis's view and describes every
// difference.
func tblDiff(cmd *engine.Command, r *tblRedisView) []string {
	var diffs []string
	add := func(format string, args ...any) {
		diffs = append(diffs, cmd.Name+": "+fmt.Sprintf(format, args...))
	}
	if cmd.Arity != r.Arity {
		add("arity %d, redis %d", cmd.Arity, r.Arity)
	}
	flags := cmd.Flags
	if cmd.Keys != nil {
		flags |= engine.MovableKeys
	}
	if ours := flags.Names(); strings.Join(ours, " ") != strings.Join(r.Flags, " ") {
		missing, extra := tblSetDiff(r.Flags, ours)
		add("flags [%s], redis [%s] (missing %v, extra %v)", strings.Join(ours, " "), strings.Join(r.Flags, " "), missing, extra)
	}
	if cmd.FirstKey != r.First || cmd.LastKey != r.Last || cmd.KeyStep != r.Step {
		add("first/last/step %d/%d/%d, redis %d/%d/%d", cmd.FirstKey, cmd.LastKey, cmd.KeyStep, r.First, r.Last, r.Step)
	}
	if missing, extra := tblSetDiff(r.ACL, cmd.ACLCategories()); len(missing)+len(extra) > 0 {
		add("ACL categories %v, redis %v (missing %v, extra %v)", cmd.ACLCategories(), r.ACL, missing, extra)
	}
	if cmd.Group != r.Group {
		add("group %q, redis %q", cmd.Group, r.Group)
	}
	if cmd.Run == nil && len(cmd.Subs) == 0 {
		add("no handler")
	}
	return diffs
}

// tblSetDiff returns the elements of want missing from got and those of
// got not in want.
func tblSetDiff(want, got []string) (missing, extra []string) {
	in := func(s string, list []string) bool {
		for _, x := range list {
			if x == s {
				return true
			}
		}
		return false
	}
	for _, w := range want {
		if !in(w, got) {
			missing = append(missing, w)
		}
	}
	for _, g := range got {
		if !in(g, want) {
			extra = append(extra, g)
		}
	}
	return missing, extra
}

func tblReport(t *testing.T, diffs []string, against string) {
	t.Helper()
	if len(diffs) > 0 {
		sort.Strings(diffs)
		t.Errorf("%d differences between the command table and %s:\n  %s", len(diffs), against, strings.Join(diffs, "\n  "))
	}
}

func TestTableMatchesMetadata(t *testing.T) {
	var diffs []string
	for _, cmd := range tblAllCommands() {
		if cmd.Since != "" {
			continue // later than 7.0: no 7.0 metadata
		}
		m := metadata.Get(cmd.Name)
		if m == nil {
			diffs = append(diffs, cmd.Name+": not a Redis 7.0 command")
			continue
		}
		diffs = append(diffs, tblDiff(cmd, &tblRedisView{
			Arity: m.Arity, Flags: m.Flags, First: m.FirstKey, Last: m.LastKey, Step: m.KeyStep,
			ACL: m.ACL, Group: metadata.DocsOf(cmd.Name).GetStr("group"),
		})...)
	}
	tblReport(t, diffs, "the embedded redis-server "+metadata.Load().Version+" metadata")
}

func TestTableMatchesRedis(t *testing.T) {
	addr := tblStartRedis(t)
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rd := bufio.NewReader(c)
	do := func(args ...string) any {
		t.Helper()
		var b strings.Builder
		fmt.Fprintf(&b, "*%d\r\n", len(args))
		for _, a := range args {
			fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.WriteString(c, b.String()); err != nil {
			t.Fatal(err)
		}
		v, err := tblRead(rd)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return v
	}
	var diffs []string
	for _, cmd := range tblAllCommands() {
		if cmd.Since != "" {
			continue // later than 7.0
		}
		reply, _ := do("COMMAND", "INFO", cmd.Name).([]any)
		if len(reply) != 1 || reply[0] == nil {
			diffs = append(diffs, cmd.Name+": redis-server has no such command")
			continue
		}
		info, _ := reply[0].([]any)
		if len(info) != 10 {
			t.Fatalf("COMMAND INFO %s: unexpected reply %v", cmd.Name, reply)
		}
		view := &tblRedisView{
			Arity: tblInt(info[1]), Flags: tblStrings(info[2]),
			First: tblInt(info[3]), Last: tblInt(info[4]), Step: tblInt(info[5]),
			ACL: tblStrings(info[6]),
		}
		if docs, _ := do("COMMAND", "DOCS", cmd.Name).([]any); len(docs) == 2 {
			d, _ := docs[1].([]any)
			for i := 0; i+1 < len(d); i += 2 {
				if d[i] == "group" {
					view.Group, _ = d[i+1].(string)
				}
			}
		}
		diffs = append(diffs, tblDiff(cmd, view)...)
	}
	tblReport(t, diffs, "redis-server's COMMAND INFO")
}

// tblStartRedis starts a redis-server on a free loopback port for the
// test, or ends the test as testsupport.RequireRedis does.
func tblStartRedis(t *testing.T) string {
	t.Helper()
	return testsupport.StartRedis(t).Addr
}

// tblRead reads one RESP2 reply: string (simple or bulk), int64, nil,
// []any; an error reply is returned as an error.
func tblRead(rd *bufio.Reader) (any, error) {
	line, err := rd.ReadString('\n')
	if err != nil {
		return nil, err
	}
	if len(line) < 3 {
		return nil, fmt.Errorf("short reply line %q", line)
	}
	body := line[1 : len(line)-2]
	switch line[0] {
	case '+':
		return body, nil
	case '-':
		return nil, errors.New(body)
	case ':':
		return strconv.ParseInt(body, 10, 64)
	case '$':
		n, err := strconv.Atoi(body)
		if err != nil || n < 0 {
			return nil, err
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(rd, buf); err != nil {
			return nil, err
		}
		return string(buf[:n]), nil
	case '*':
		n, err := strconv.Atoi(body)
		if err != nil || n < 0 {
			return nil, err
		}
		out := make([]any, n)
		for i := range out {
			if out[i], err = tblRead(rd); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("unexpected reply line %q", line)
}

func tblInt(v any) int {
	n, _ := v.(int64)
	return int(n)
}

func tblStrings(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}
