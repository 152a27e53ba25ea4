package commands

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zredis/zredis/commands/metadata"
	"github.com/zredis/zredis/engine"
)

// Replies captured from redis-server 7.0.15.
const (
	redisInfoGet = "*10\r\n$3\r\nget\r\n:2\r\n*2\r\n+readonly\r\n+fast\r\n:1\r\n:1\r\n:1\r\n*3\r\n+@read\r\n+@string\r\n+@fast\r\n*0\r\n" +
		"*1\r\n*6\r\n$5\r\nflags\r\n*2\r\n+RO\r\n+access\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:1\r\n" +
		"$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n*6\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n*0\r\n"
	redisInfoGetRESP3 = "*1\r\n*10\r\n$3\r\nget\r\n:2\r\n~2\r\n+readonly\r\n+fast\r\n:1\r\n:1\r\n:1\r\n~3\r\n+@read\r\n+@string\r\n+@fast\r\n~0\r\n~1\r\n" +
		"%3\r\n$5\r\nflags\r\n~2\r\n+RO\r\n+access\r\n$12\r\nbegin_search\r\n%2\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n%1\r\n$5\r\nindex\r\n:1\r\n" +
		"$9\r\nfind_keys\r\n%2\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n%3\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n~0\r\n"
	redisDocsGet = "*2\r\n$3\r\nget\r\n*10\r\n$7\r\nsummary\r\n$22\r\nGet the value of a key\r\n$5\r\nsince\r\n$5\r\n1.0.0\r\n$5\r\ngroup\r\n$6\r\nstring\r\n" +
		"$10\r\ncomplexity\r\n$4\r\nO(1)\r\n$9\r\narguments\r\n*1\r\n*6\r\n$4\r\nname\r\n$3\r\nkey\r\n$4\r\ntype\r\n$3\r\nkey\r\n$14\r\nkey_spec_index\r\n:0\r\n"
	redisDocsGetRESP3 = "%1\r\n$3\r\nget\r\n%5\r\n$7\r\nsummary\r\n$22\r\nGet the value of a key\r\n$5\r\nsince\r\n$5\r\n1.0.0\r\n$5\r\ngroup\r\n$6\r\nstring\r\n" +
		"$10\r\ncomplexity\r\n$4\r\nO(1)\r\n$9\r\narguments\r\n*1\r\n%3\r\n$4\r\nname\r\n$3\r\nkey\r\n$4\r\ntype\r\n$3\r\nkey\r\n$14\r\nkey_spec_index\r\n:0\r\n"
	redisDocsGetset = "*2\r\n$6\r\ngetset\r\n*16\r\n$7\r\nsummary\r\n$54\r\nSet the string value of a key and return its old value\r\n$5\r\nsince\r\n$5\r\n1.0.0\r\n" +
		"$5\r\ngroup\r\n$6\r\nstring\r\n$10\r\ncomplexity\r\n$4\r\nO(1)\r\n$9\r\ndoc_flags\r\n*1\r\n+deprecated\r\n$16\r\ndeprecated_since\r\n$5\r\n6.2.0\r\n" +
		"$11\r\nreplaced_by\r\n$30\r\n`SET` with the `!GET` argument\r\n$9\r\narguments\r\n*2\r\n*6\r\n$4\r\nname\r\n$3\r\nkey\r\n$4\r\ntype\r\n$3\r\nkey\r\n$14\r\nkey_spec_index\r\n:0\r\n" +
		"*4\r\n$4\r\nname\r\n$5\r\nvalue\r\n$4\r\ntype\r\n$6\r\nstring\r\n"
	redisInfoCommandCount = "*10\r\n$13\r\ncommand|count\r\n:2\r\n*2\r\n+loading\r\n+stale\r\n:0\r\n:0\r\n:0\r\n*2\r\n+@slow\r\n+@connection\r\n*0\r\n*0\r\n*0\r\n"
)

func TestCommandInfo(t *testing.T) {
	e := newTestEnv(t)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"one", []string{"COMMAND", "INFO", "get"}, "*1\r\n" + redisInfoGet},
		{"any case", []string{"command", "info", "GeT"}, "*1\r\n" + redisInfoGet},
		{"unknown", []string{"COMMAND", "INFO", "nosuchcommand"}, "*1\r\n$-1\r\n"},
		{"empty name", []string{"COMMAND", "INFO", ""}, "*1\r\n$-1\r\n"},
		{"bar only", []string{"COMMAND", "INFO", "|"}, "*1\r\n$-1\r\n"},
		{"sub of non-container", []string{"COMMAND", "INFO", "get|x"}, "*1\r\n$-1\r\n"},
		{"subcommand", []string{"COMMAND", "INFO", "command|count"}, "*1\r\n" + redisInfoCommandCount},
		{"subcommand any case", []string{"COMMAND", "INFO", "COMMAND|COUNT"}, "*1\r\n" + redisInfoCommandCount},
		{"too deep", []string{"COMMAND", "INFO", "command|count|x"}, "*1\r\n$-1\r\n"},
		{"mixed", []string{"COMMAND", "INFO", "x", "get"}, "*2\r\n$-1\r\n" + redisInfoGet},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, e.run(tt.args...))
		})
	}
}

func TestCommandInfoRESP3(t *testing.T) {
	e := newTestEnv(t)
	e.resp3()
	assert.Equal(t, redisInfoGetRESP3, e.run("COMMAND", "INFO", "get"))
	assert.Equal(t, redisDocsGetRESP3, e.run("COMMAND", "DOCS", "get"))
}

// COMMAND and COMMAND INFO without names list every top-level command of
// the table, each with its subcommands, but for the commands later than
// 7.0, which answer by name only.
func TestCommandAll(t *testing.T) {
	e := newTestEnv(t)
	all := table.Listed()
	assert.Less(t, len(all), len(table.All()), "the table has later commands")
	assert.NotContains(t, e.run("COMMAND"), "\r\nhexpire\r\n")
	assert.Contains(t, e.run("COMMAND", "INFO", "hexpire"), "\r\nhexpire\r\n:-6\r\n")
	assert.Contains(t, e.run("COMMAND", "DOCS", "hgetex"), "$5\r\nsince\r\n$5\r\n8.0.0\r\n")
	out := e.run("COMMAND")
	require.True(t, strings.HasPrefix(out, "*"+cmdItoa(len(all))+"\r\n"), out[:20])
	assert.Equal(t, out, e.run("COMMAND", "INFO"))
	for _, cmd := range all {
		assert.Contains(t, out, "*10\r\n$"+cmdItoa(len(cmd.Name))+"\r\n"+cmd.Name+"\r\n")
	}
	// The container lists its subcommands, in name order.
	info := e.run("COMMAND", "INFO", "command")
	var last int
	for _, sub := range table.Lookup([]byte("command")).SortedSubs() {
		i := strings.Index(info, "\r\n"+sub.Name+"\r\n")
		require.Greater(t, i, last, sub.Name)
		last = i
	}
	assert.Equal(t, replyInt(int64(len(all))), e.run("COMMAND", "COUNT"))
}

func TestCommandDocs(t *testing.T) {
	e := newTestEnv(t)
	assert.Equal(t, redisDocsGet, e.run("COMMAND", "DOCS", "get"))
	assert.Equal(t, redisDocsGet, e.run("COMMAND", "DOCS", "nosuch", "GET", "x|y"))
	assert.Equal(t, redisDocsGetset, e.run("COMMAND", "DOCS", "getset"))
	assert.Equal(t, "*0\r\n", e.run("COMMAND", "DOCS", "nosuch"))
	// A repeated name is repeated.
	assert.Equal(t, "*4\r\n"+strings.Repeat(redisDocsGet[len("*2\r\n"):], 2), e.run("COMMAND", "DOCS", "get", "get"))

	all := e.run("COMMAND", "DOCS")
	assert.True(t, strings.HasPrefix(all, "*"+cmdItoa(2*len(table.Listed()))+"\r\n"))

	// A container's docs end with its subcommands' docs.
	docs := e.run("COMMAND", "DOCS", "command")
	assert.Contains(t, docs, "$11\r\nsubcommands\r\n*"+cmdItoa(2*len(table.Lookup([]byte("command")).Subs))+"\r\n$13\r\ncommand|count\r\n")
	assert.Contains(t, docs, "Get array of Redis command details")
}

func TestCommandList(t *testing.T) {
	e := newTestEnv(t)
	var names []string
	for _, cmd := range table.Listed() {
		names = append(names, cmd.Name)
		for _, sub := range cmd.SortedSubs() {
			names = append(names, sub.Name)
		}
	}
	assert.Equal(t, replyBulks(names...), e.run("COMMAND", "LIST"))

	var conn []string
	for _, n := range names {
		if strings.HasPrefix(n, "command") {
			conn = append(conn, n)
		}
	}
	assert.Equal(t, replyBulks(conn...), e.run("COMMAND", "LIST", "FILTERBY", "PATTERN", "COMM*"))
	assert.Equal(t, replyBulks("command|count"), e.run("command", "list", "filterby", "pattern", "command|c?un[st]"))
	assert.Equal(t, "*0\r\n", e.run("COMMAND", "LIST", "FILTERBY", "MODULE", "x"))
	assert.Equal(t, "*0\r\n", e.run("COMMAND", "LIST", "FILTERBY", "ACLCAT", "nosuchcategory"))
	assert.Equal(t, "*0\r\n", e.run("COMMAND", "LIST", "FILTERBY", "ACLCAT", "@connection"))
	assert.Equal(t, "*0\r\n", e.run("COMMAND", "LIST", "FILTERBY", "PATTERN", ""))

	var connCat []string
	for _, n := range names {
		cmd := lookupFullName(table, []byte(n))
		for _, c := range cmd.ACLCategories() {
			if c == "@connection" {
				connCat = append(connCat, n)
			}
		}
	}
	require.NotEmpty(t, connCat)
	assert.Equal(t, replyBulks(connCat...), e.run("COMMAND", "LIST", "FILTERBY", "ACLCAT", "Connection"))

	for _, args := range [][]string{
		{"COMMAND", "LIST", "x"},
		{"COMMAND", "LIST", "FILTERBY"},
		{"COMMAND", "LIST", "FILTERBY", "PATTERN"},
		{"COMMAND", "LIST", "FILTERBY", "NAME", "x"},
		{"COMMAND", "LIST", "FILTERBY", "PATTERN", "x", "FILTERBY", "PATTERN", "y"},
	} {
		assert.Equal(t, replyErr(engine.ErrSyntax), e.run(args...), args)
	}
}

func TestCommandGetKeys(t *testing.T) {
	e := newTestEnv(t)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"get", "k"}, replyBulks("k")},
		{[]string{"GET", "k"}, replyBulks("k")},
		{[]string{"set", "k", "v", "ex", "10"}, replyBulks("k")},
		{[]string{"get", "a", "b"}, replyErr(engine.ErrGetKeysArity)},
		{[]string{"nosuch", "a", "b"}, replyErr(engine.ErrGetKeysInvalidCommand)},
		{[]string{"ping", "a"}, replyErr(engine.ErrGetKeysNoKeys)},
		{[]string{"command", "count"}, replyErr(engine.ErrGetKeysNoKeys)},
		{[]string{"command", "nosuch"}, replyErr(engine.ErrGetKeysInvalidCommand)},
		{[]string{"command", "getkeys", "get", "k"}, replyErr(engine.ErrGetKeysNoKeys)},
		{[]string{"get"}, replyErr(engine.ErrWrongArgs("command|getkeys"))},
	}
	for _, tt := range tests {
		args := append([]string{"COMMAND", "GETKEYS"}, tt.args...)
		assert.Equal(t, tt.want, e.run(args...), args)
	}
	assert.Equal(t, replyArray(replyArray(replyBulk("k"), "*2\r\n+RO\r\n+access\r\n")),
		e.run("COMMAND", "GETKEYSANDFLAGS", "get", "k"))
	assert.Equal(t, replyErr(engine.ErrGetKeysInvalidCommand), e.run("COMMAND", "GETKEYSANDFLAGS", "nosuch", "k"))
	// SET's flags depend on GET (a variable_flags key spec).
	assert.Equal(t, replyArray(replyArray(replyBulk("k"), "*2\r\n+OW\r\n+update\r\n")),
		e.run("COMMAND", "GETKEYSANDFLAGS", "set", "k", "v", "ex", "10"))
	assert.Equal(t, replyArray(replyArray(replyBulk("k"), "*3\r\n+RW\r\n+access\r\n+update\r\n")),
		e.run("COMMAND", "GETKEYSANDFLAGS", "set", "k", "v", "Get"))
}

// A subcommand zredis accepts from a later Redis is not described.
func TestCommandHidesExtensions(t *testing.T) {
	e := newTestEnv(t)
	for _, cmd := range table.All() {
		for _, sub := range cmd.Subs {
			if !sub.Extension {
				continue
			}
			parts := strings.SplitN(sub.Name, "|", 2)
			assert.Equal(t, "*1\r\n$-1\r\n", e.run("COMMAND", "INFO", sub.Name))
			assert.Equal(t, "*0\r\n", e.run("COMMAND", "DOCS", sub.Name))
			assert.Equal(t, replyErr(engine.ErrGetKeysInvalidCommand), e.run("COMMAND", "GETKEYS", parts[0], parts[1], "x"))
			assert.NotContains(t, e.run("COMMAND", "LIST"), sub.Name)
			assert.NotContains(t, e.run("COMMAND", "INFO", parts[0]), sub.Name)
		}
	}
}

// A movable-keys command, ZUNIONSTORE as registered: key positions from
// its Keys function, flags from Redis's key specs, and the "no keys"
// outcomes.
func TestCommandGetKeysMovable(t *testing.T) {
	cmd := table.Lookup([]byte("zunionstore"))
	require.NotNil(t, cmd)
	flags := cmd.Flags
	t.Cleanup(func() { cmd.Flags = flags })
	e := newTestEnv(t)
	assert.Equal(t, replyBulks("d", "a", "b"), e.run("COMMAND", "GETKEYS", "zunionstore", "d", "2", "a", "b", "c"))
	assert.Equal(t, replyErr(engine.ErrGetKeysInvalidArgs), e.run("COMMAND", "GETKEYS", "zunionstore", "d", "0", "a"))
	assert.Equal(t,
		"*3\r\n*2\r\n$1\r\nd\r\n*2\r\n+OW\r\n+update\r\n*2\r\n$1\r\na\r\n*2\r\n+RO\r\n+access\r\n*2\r\n$1\r\nb\r\n*2\r\n+RO\r\n+access\r\n",
		e.run("COMMAND", "GETKEYSANDFLAGS", "zunionstore", "d", "2", "a", "b"))
	info := e.run("COMMAND", "INFO", "zunionstore")
	assert.Contains(t, info, "*3\r\n+write\r\n+denyoom\r\n+movablekeys\r\n")

	cmd.Flags |= engine.NoMandatoryKeys
	assert.Equal(t, "*0\r\n", e.run("COMMAND", "GETKEYS", "zunionstore", "d", "0", "a"))
}

// cmdWithTestCommand adds cmd to the table for the test. A command of
// that name already in the table fails the test: the test needs a name
// of its own (a skip would stop it testing the day the name is taken).
func cmdWithTestCommand(t testing.TB, cmd *engine.Command) {
	t.Helper()
	if table.Lookup([]byte(cmd.Name)) != nil {
		t.Fatalf("%s is registered by its family: give the test command another name", cmd.Name)
	}
	table.Register(cmd)
	t.Cleanup(func() { table.Remove(cmd.Name) })
}

func TestCommandHelpAndErrors(t *testing.T) {
	e := newTestEnv(t)
	help := e.run("command", "help")
	assert.True(t, strings.HasPrefix(help, "*21\r\n+COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n+(no subcommand)\r\n"), help)
	assert.True(t, strings.HasSuffix(help, "+HELP\r\n+    Prints this help.\r\n"), help)
	assert.Equal(t, replyErr("ERR unknown subcommand 'FOO'. Try COMMAND HELP."), e.run("COMMAND", "FOO"))
	assert.Equal(t, replyErr(engine.ErrWrongArgs("command|count")), e.run("COMMAND", "COUNT", "x"))
	assert.Equal(t, replyErr(engine.ErrWrongArgs("command|help")), e.run("COMMAND", "HELP", "x"))
}

// Every command of the table can be described: COMMAND INFO and DOCS
// reply for each one, its subcommands included.
func TestCommandDescribesWholeTable(t *testing.T) {
	e := newTestEnv(t)
	for _, cmd := range table.All() {
		for _, c := range append([]*engine.Command{cmd}, cmd.SortedSubs()...) {
			info := e.run("COMMAND", "INFO", c.Name)
			assert.True(t, strings.HasPrefix(info, "*1\r\n*10\r\n$"+cmdItoa(len(c.Name))+"\r\n"+c.Name+"\r\n"), c.Name)
			docs := e.run("COMMAND", "DOCS", c.Name)
			assert.True(t, strings.HasPrefix(docs, "*2\r\n$"+cmdItoa(len(c.Name))+"\r\n"+c.Name+"\r\n"), c.Name)
		}
	}
}

func TestOrderedCategories(t *testing.T) {
	cmd := &engine.Command{Name: "x", Flags: engine.Write | engine.Admin, ACL: "@connection @string @keyspace"}
	assert.Equal(t, []string{"@keyspace", "@write", "@string", "@admin", "@slow", "@dangerous", "@connection"}, orderedCategories(cmd))
	cmd = &engine.Command{Name: "x", Flags: engine.ReadOnly | engine.Fast, ACL: "@custom @string"}
	assert.Equal(t, []string{"@read", "@string", "@fast", "@custom"}, orderedCategories(cmd))
}

func TestKeySpecFlags(t *testing.T) {
	args := func(s string) [][]byte {
		var out [][]byte
		for _, f := range strings.Fields(s) {
			out = append(out, []byte(f))
		}
		return out
	}
	specs := func(name string) []metadata.KeySpec { return metadata.Get(name).Specs }
	// An index spec; SORT's STORE spec is of unknown type and finds nothing.
	got := keySpecFlags(specs("sort"), args("sort k by x store dst"))
	assert.Equal(t, map[int][]string{1: {"RO", "access"}}, got)
	// keynum with a count out of range applies no keys from that spec.
	got = keySpecFlags(specs("zunionstore"), args("zunionstore d 9 a"))
	assert.Equal(t, map[int][]string{1: {"OW", "update"}}, got)
	// a range to the end with a step (MSET k v k v).
	got = keySpecFlags(specs("mset"), args("mset a 1 b 2"))
	assert.Equal(t, []int{1, 3}, cmdSortedKeys(got))
	// A keyword searched backwards from the end (MIGRATE ... KEYS k1 k2),
	// besides the index spec of the single-key form.
	got = keySpecFlags(specs("migrate"), args("migrate h p \"\" 0 5 KEYS a b"))
	assert.Equal(t, []int{3, 7, 8}, cmdSortedKeys(got))
	assert.Equal(t, []string{"RW", "access", "delete", "incomplete"}, got[7])
	// The keyword search stops before the last argument.
	got = keySpecFlags(specs("migrate"), args("migrate h p \"\" 0 5 KEYS"))
	assert.Equal(t, []int{3}, cmdSortedKeys(got))
}

func cmdSortedKeys(m map[int][]string) []int {
	var out []int
	for k := range m {
		out = append(out, k)
	}
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func cmdItoa(n int) string { return replyInt(int64(n))[1 : len(replyInt(int64(n)))-2] }
