package tests

import (
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Functions (FUNCTION, FCALL, FCALL_RO) compared with redis-server: the
// same replies, but for the text of errors raised by the Lua VM itself
// and the order of FUNCTION LIST, which follows Redis's hash tables
// (zredis lists libraries and functions by name; the cases list one
// library at a time).

const (
	libEcho = "#!lua name=echo\n" +
		"redis.register_function('echo', function(keys, args) return {keys[1], args[1], #keys, #args} end)\n"
	libCounter = "#!lua name=counter\n" +
		"redis.register_function{function_name='incrby', callback=function(keys, args) return redis.call('incrby', keys[1], args[1]) end, description='adds to a counter'}\n"
	libPeek = "#!lua name=peek\n" +
		"redis.register_function{function_name='peek', callback=function(keys) return redis.call('get', keys[1]) end, flags={'no-writes', 'ALLOW-STALE'}}\n"
)

// libraryCodes are the codes of a server's libraries, sorted: FUNCTION
// LIST's order is Redis's hash tables'.
func libraryCodes(t *testing.T, c *Conn) []string {
	t.Helper()
	raw := c.Do("FUNCTION", "LIST", "WITHCODE")
	var codes []string
	for rest := raw; ; {
		_, after, ok := strings.Cut(rest, "$12\r\nlibrary_code\r\n$")
		if !ok {
			break
		}
		size, body, _ := strings.Cut(after, "\r\n")
		n, err := strconv.Atoi(size)
		require.NoError(t, err, raw)
		codes = append(codes, body[:n])
		rest = body[n:]
	}
	sort.Strings(codes)
	return codes
}

var functionCases = [][]string{
	{"FUNCTION", "FLUSH"},
	{"FUNCTION", "LOAD", libEcho},
	{"FUNCTION", "LOAD", libEcho},
	{"FUNCTION", "LOAD", "REPLACE", libEcho},
	{"FUNCTION", "LOAD", "BOGUS", libEcho},
	{"FUNCTION", "LIST"},
	{"FUNCTION", "LIST", "WITHCODE"},
	{"FUNCTION", "LIST", "LIBRARYNAME", "ec*"},
	{"FUNCTION", "LIST", "LIBRARYNAME", "nosuch"},
	{"FUNCTION", "LIST", "LIBRARYNAME"},
	{"FUNCTION", "LIST", "BOGUS"},
	{"FCALL", "echo", "1", "k", "a"},
	{"FCALL", "echo", "0"},
	{"FCALL_RO", "echo", "0"},
	{"FCALL", "nosuch", "0"},
	{"FCALL", "echo", "x"},
	{"FCALL", "echo", "3", "a"},
	{"FCALL", "echo", "-1"},
	{"FCALL", "ECHO", "0"},

	// Library metadata and load errors.
	{"FUNCTION", "LOAD", "#!lua name=other\nredis.register_function('echo', function() return 1 end)"},
	{"FUNCTION", "LOAD", "#!lua name=bad\nlocal x = string.len('a')"},
	{"FUNCTION", "LOAD", "#!lua name=bad\nerror('boom')"},
	{"FUNCTION", "LOAD", "#!lua name=bad\nredis.register_function('a-b', function() end)"},
	{"FUNCTION", "LOAD", "#!lua name=bad\nredis.register_function{function_name='g', callback=function() end, flags={'no-writes', 'bad'}}"},
	{"FUNCTION", "LOAD", "#!lua name=bad\nredis.call('ping')"},
	{"FUNCTION", "LOAD", "#!lua name=bad\nx = 1"},
	{"FUNCTION", "LOAD", "#!lua name=bad\nlocal i = 0 while true do i = i + 1 end"},
	{"FUNCTION", "LOAD", "#!lua name=bad"},
	{"FUNCTION", "LOAD", "#!lua name=bad foo=bar\n"},
	{"FUNCTION", "LOAD", "#!lua name=a name=b\n"},
	{"FUNCTION", "LOAD", "#!py name=bad\n"},
	{"FUNCTION", "LOAD", "#!lua\n"},
	{"FUNCTION", "LOAD", "#!lua name=b-d\n"},
	{"FUNCTION", "LOAD", "lua"},
	{"FUNCTION", "LOAD", "#!lua name=bad\n"},
	{"FUNCTION", "LOAD", "#!lua name=bad\nredis.register_function('x', function() end, 3)"},
	{"FUNCTION", "LOAD", "#!lua name=bad\nredis.register_function('x')"},
	{"FUNCTION", "LOAD", "#!lua name=bad\nredis.register_function(1, 2)"},
	{"FUNCTION", "LOAD", "#!lua name=bad\nredis.register_function({})"},
	{"FUNCTION", "LOAD", "#!lua name=bad\nredis.register_function(5)"},
	{"FUNCTION", "LOAD", "#!lua name=bad\nredis.register_function{function_name='x'}"},
	{"FUNCTION", "LOAD", "#!lua name=bad\nredis.register_function{callback=function() end}"},
	{"FUNCTION", "LOAD", "#!lua name=bad\nredis.register_function{function_name='x', callback=function() end, other=1}"},
	{"FUNCTION", "LOAD", "#!lua name=bad\nredis.register_function{function_name='x', callback=1}"},
	{"FUNCTION", "LOAD", "#!lua name=bad\nredis.register_function{function_name='x', callback=function() end, flags='no-writes'}"},
	{"FUNCTION", "LOAD", "#!lua name=bad\nredis.register_function('x', function() end) redis.register_function('x', function() end)"},
	{"FUNCTION", "LIST"},

	// A library that writes, one function read-only.
	{"FUNCTION", "DELETE", "echo"},
	{"FUNCTION", "DELETE", "echo"},
	{"FUNCTION", "LOAD", libCounter},
	{"FUNCTION", "LOAD", libPeek},
	{"FUNCTION", "LIST", "LIBRARYNAME", "counter", "WITHCODE"},
	{"FUNCTION", "LIST", "LIBRARYNAME", "p*"},
	{"FUNCTION", "LOAD", "#!lua name=peek2\nredis.register_function('PEEK', function() end)"},
	{"FCALL", "incrby", "1", "c", "5"},
	{"FCALL_RO", "incrby", "1", "c", "5"},
	{"FCALL_RO", "peek", "1", "c"},
	{"FCALL", "peek", "1", "c"},
	{"FUNCTION", "LOAD", "#!lua name=ro\nredis.register_function{function_name='ro_set', callback=function(keys) return redis.call('set', keys[1], 1) end, flags={'no-writes'}}"},
	{"FCALL", "ro_set", "1", "x"},
	{"FUNCTION", "DELETE", "ro"},
	{"FUNCTION", "LOAD", "#!lua name=err\nredis.register_function('oops', function(keys, args) error('oops') end)\nredis.register_function('ereply', function() return redis.error_reply('MY code') end)"},
	{"FCALL", "oops", "0"},
	{"FCALL", "ereply", "0"},
	{"FUNCTION", "DELETE", "err"},
	{"FUNCTION", "STATS"},
	{"FUNCTION", "KILL"},
	{"FUNCTION", "HELP"},
	{"FUNCTION", "FLUSH", "BOGUS"},
	{"FUNCTION", "FLUSH", "SYNC", "X"},
	{"FUNCTION", "NOSUCH"},

	// DUMP and RESTORE.
	{"FUNCTION", "RESTORE", "bad"},
	{"FUNCTION", "RESTORE", "bad", "bad"},
	{"FUNCTION", "RESTORE", "bad", "FLUSH", "x"},
	{"EVAL", "return redis.call('function', 'list')", "0"},
	{"EVAL", "return redis.call('fcall', 'peek', 1, 'c')", "0"},
	{"MULTI"}, {"FCALL", "incrby", "1", "c", "1"}, {"FUNCTION", "LOAD", libEcho}, {"EXEC"},
	{"FUNCTION", "FLUSH", "ASYNC"},
	{"FUNCTION", "LIST"},
	{"FCALL", "incrby", "1", "c", "1"},
}

func TestFunctionDifferential(t *testing.T) {
	d := NewDiff(t)
	defer d.DoBoth("FUNCTION", "FLUSH")
	for _, c := range functionCases {
		d.Do(c...)
	}
	// A payload moves both ways: what one server dumps, the other
	// restores, with each policy.
	d.DoBoth("FUNCTION", "LOAD", libEcho)
	d.DoBoth("FUNCTION", "LOAD", libCounter)
	zdump, rdump := d.Z.Do("FUNCTION", "DUMP"), d.R.Do("FUNCTION", "DUMP")
	payload := func(raw string) string {
		_, body, _ := strings.Cut(raw, "\r\n")
		return strings.TrimSuffix(body, "\r\n")
	}
	for _, policy := range [][]string{{}, {"APPEND"}, {"REPLACE"}, {"FLUSH"}} {
		for _, dump := range []string{zdump, rdump} {
			args := append([]string{"FUNCTION", "RESTORE", payload(dump)}, policy...)
			if len(policy) == 0 || policy[0] == "APPEND" {
				// Both libraries exist: which one the error names
				// follows the order of Redis's hash table.
				z, r := d.Z.Do(args...), d.R.Do(args...)
				require.True(t, strings.HasPrefix(z, "-ERR Library ") && strings.HasSuffix(z, " already exists\r\n"), z)
				require.True(t, strings.HasPrefix(r, "-ERR Library "), r)
			} else {
				d.Do(args...)
			}
			d.Do("FUNCTION", "LIST", "LIBRARYNAME", "echo", "WITHCODE")
			d.Do("FCALL", "incrby", "1", "c", "2")
		}
	}
	d.DoBoth("FUNCTION", "DELETE", "echo")
	for _, dump := range []string{zdump, rdump} {
		d.Do("FUNCTION", "RESTORE", payload(dump))
		d.Do("FUNCTION", "LIST", "LIBRARYNAME", "echo")
	}
	// A payload whose checksum is wrong.
	bad := []byte(payload(zdump))
	bad[len(bad)-1] ^= 1
	d.Do("FUNCTION", "RESTORE", string(bad))
}

// Libraries are part of the dataset: an RDB file that redis-server wrote
// loads into zredis, and the other way round; the AOF (FUNCTION LOAD as
// propagated, and a rewritten base of either kind) brings them back after
// a restart.
func TestFunctionPersistence(t *testing.T) {
	RequireRedis(t)
	for _, pair := range [][2]string{{"redis", "zredis"}, {"zredis", "redis"}, {"zredis", "zredis"}} {
		t.Run("rdb "+pair[0]+" to "+pair[1], func(t *testing.T) {
			dir := t.TempDir()
			src := StartServer(t, pair[0], "--dir", dir)
			c := Dial(t, src.Addr)
			require.Equal(t, "$7\r\ncounter\r\n", c.Do("FUNCTION", "LOAD", libCounter))
			require.Equal(t, "$4\r\necho\r\n", c.Do("FUNCTION", "LOAD", libEcho))
			c.Do("FCALL", "incrby", "1", "n", "7")
			want := libraryCodes(t, c)
			require.Equal(t, "+OK\r\n", c.Do("SAVE"))
			src.Stop()
			dst := StartServer(t, pair[1], "--dir", dir)
			dc := Dial(t, dst.Addr)
			require.Equal(t, want, libraryCodes(t, dc))
			require.Equal(t, ":10\r\n", dc.Do("FCALL", "incrby", "1", "n", "3"))
			require.Equal(t, "*4\r\n$1\r\nk\r\n$1\r\na\r\n:1\r\n:1\r\n", dc.Do("FCALL", "echo", "1", "k", "a"))
			require.Contains(t, dc.Do("INFO", "memory"), "number_of_libraries:2\r\n")
		})
	}
	for _, preamble := range []string{"yes", "no"} {
		t.Run("aof preamble "+preamble, func(t *testing.T) {
			dir := t.TempDir()
			args := []string{"--dir", dir, "--appendonly", "yes", "--aof-use-rdb-preamble", preamble}
			z := StartZredis(t, args...)
			c := Dial(t, z.Addr)
			c.Do("FUNCTION", "LOAD", libEcho)
			c.Do("FUNCTION", "LOAD", libCounter)
			c.Do("FCALL", "incrby", "1", "n", "7")
			c.Do("FUNCTION", "DELETE", "echo")
			want := c.Do("FUNCTION", "LIST", "WITHCODE")
			z.Stop()
			z = StartZredis(t, args...)
			c = Dial(t, z.Addr)
			require.Equal(t, want, c.Do("FUNCTION", "LIST", "WITHCODE"), "after replaying the AOF")
			require.Equal(t, "$1\r\n7\r\n", c.Do("GET", "n"))
			require.Equal(t, "+Background append only file rewriting started\r\n", c.Do("BGREWRITEAOF"))
			pollUntil(30*time.Second, func() bool { return infoField(t, c, "persistence", "aof_rewrite_in_progress") == "0" })
			z.Stop()
			z = StartZredis(t, args...)
			c = Dial(t, z.Addr)
			require.Equal(t, want, c.Do("FUNCTION", "LIST", "WITHCODE"), "after the rewritten base")
		})
	}
}

// Libraries reach replicas both ways with redis-server: a full sync
// carries them (and replaces the replica's own), FUNCTION LOAD, DELETE,
// FLUSH and RESTORE are propagated, FCALL's writes as their effects, and
// FCALL_RO of a no-writes function runs on a read-only replica.
func TestFunctionReplication(t *testing.T) {
	parallelReplication(t)
	RequireRedis(t)
	for _, kinds := range [][2]string{{"zredis", "redis"}, {"redis", "zredis"}} {
		t.Run(kinds[0]+" master, "+kinds[1]+" replica", func(t *testing.T) {
			m := StartServer(t, kinds[0], "--repl-diskless-sync-delay", "0")
			r := StartServer(t, kinds[1])
			mc, rc := Dial(t, m.Addr), Dial(t, r.Addr)
			mc.Do("FUNCTION", "LOAD", libCounter)
			mc.Do("FUNCTION", "LOAD", libPeek)
			rc.Do("FUNCTION", "LOAD", libEcho) // the replica's own: gone at the sync
			replicaOf(t, rc, m)
			waitLinkUp(t, r)
			waitConverged(t, m, r)
			require.Equal(t, libraryCodes(t, mc), libraryCodes(t, rc))

			mc.Do("FUNCTION", "LOAD", libEcho)
			require.Equal(t, ":5\r\n", mc.Do("FCALL", "incrby", "1", "n", "5"))
			waitConverged(t, m, r)
			require.Equal(t, "$1\r\n5\r\n", rc.Do("FCALL_RO", "peek", "1", "n"))
			require.Equal(t, "-READONLY You can't write against a read only replica.\r\n", rc.Do("FCALL", "incrby", "1", "n", "5"))
			mc.Do("FUNCTION", "DELETE", "counter")
			waitConverged(t, m, r)
			require.Equal(t, libraryCodes(t, mc), libraryCodes(t, rc))
			dump := mc.Do("FUNCTION", "DUMP")
			_, body, _ := strings.Cut(dump, "\r\n")
			mc.Do("FUNCTION", "FLUSH")
			mc.Do("FUNCTION", "RESTORE", strings.TrimSuffix(body, "\r\n"))
			waitConverged(t, m, r)
			require.Equal(t, libraryCodes(t, mc), libraryCodes(t, rc))
			compareDatasets(t, m, r)
		})
	}
}

// A function past busy-reply-threshold, as Redis 7.0 runs it: FUNCTION
// STATS shows it, SCRIPT KILL refuses it, FUNCTION KILL stops it.
func TestFunctionBusy(t *testing.T) {
	RequireRedis(t)
	const lib = "#!lua name=slow\nredis.register_function{function_name='spin', callback=function() local i = 0 while true do i = i + 1 end end, flags={'no-writes'}}"
	replies := map[string][]string{}
	for _, name := range []string{"redis", "zredis"} {
		p := StartServer(t, name, "--busy-reply-threshold", "100")
		c := Dial(t, p.Addr)
		c.Do("FUNCTION", "LOAD", lib)
		runner := Dial(t, p.Addr)
		runner.Send(Encode("FCALL", "spin", "0"))
		waitBusy(t, c)
		var got []string
		stats := c.Do("FUNCTION", "STATS")
		// duration_ms varies: keep the reply up to it.
		before, _, _ := strings.Cut(stats, "duration_ms")
		got = append(got, before, c.Do("PING"), c.Do("SCRIPT", "KILL"), c.Do("FUNCTION", "KILL"), runner.Read(), c.Do("FUNCTION", "STATS"))
		replies[name] = got
	}
	if !reflect.DeepEqual(replies["redis"], replies["zredis"]) {
		t.Errorf("replies differ:\nredis  %q\nzredis %q", replies["redis"], replies["zredis"])
	}
}
