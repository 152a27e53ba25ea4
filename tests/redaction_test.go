package tests

// Passwords never reach SLOWLOG or MONITOR: CONFIG SET of a sensitive
// directive (requirepass, masterauth, masteruser), AUTH and HELLO ... AUTH
// show "(redacted)" where redis-server 7.0 does, including the edge cases
// where Redis redacts an argument of a command that then fails, and the
// ones where it does not (an argument list it refuses before looking at it).

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// redactionCalls are run in order on one connection; every password in
// them starts with "pw" so that a leak is easy to see.
var redactionCalls = [][]string{
	{"CONFIG", "SET", "requirepass", "pwRequire", "maxclients", "100"},
	{"AUTH", "pwWrong"},
	{"AUTH", "default", "pwRequire"},
	{"AUTH", "a", "b", "c"}, // refused before redaction, by Redis too
	{"HELLO", "2", "AUTH", "default", "pwRequire", "SETNAME", "n1"},
	{"HELLO", "2", "AUTH", "default", "pwBad"},
	{"HELLO", "3", "AUTH", "default", "pwThree"},
	{"HELLO", "2", "AUTH", "default"},
	{"HELLO", "2", "SETNAME", "n2", "AUTH", "default", "pwX", "bogus"},
	{"CONFIG", "SET", "masterauth", "pwMaster", "requirepass", "pwRequire"},
	{"CONFIG", "SET", "masteruser", "pwUser", "nosuch", "x", "masterauth", "pwM2"},
	{"CONFIG", "SET", "nosuch", "x", "masterauth", "pwM3"},
	{"CONFIG", "SET", "requirepass", "pwDup1", "requirepass", "pwDup2"},
	{"CONFIG", "SET", "masterauth", "pwM4", "maxclients", "abc"},
	{"CONFIG", "SET", "daemonize", "yes", "masterauth", "pwM5"},
	{"CONFIG", "SET", "REQUIREPASS", "pwUpper"},
	{"CONFIG", "SET", "requirepass", "pwOdd", "maxclients"}, // odd: refused before redaction
	{"MULTI"},
	{"CONFIG", "SET", "masterauth", "pwMulti"},
	{"AUTH", "pwMultiAuth"},
	{"EXEC"},
	{"CONFIG", "SET", "requirepass", ""},
}

func TestRedactionSlowlogMonitorDiff(t *testing.T) {
	slow := map[string][][]string{}
	mon := map[string][]string{}
	onBothConfigured(t, []string{"--slowlog-log-slower-than", "0", "--slowlog-max-len", "100"}, func(t *testing.T, p *Proc) {
		m := Dial(t, p.Addr)
		require.Equal(t, "+OK\r\n", m.Do("MONITOR"))
		c := Dial(t, p.Addr)
		require.Equal(t, "+OK\r\n", c.Do("SLOWLOG", "RESET"))
		for _, args := range redactionCalls {
			c.Do(args...)
		}
		// The password is "" again: read the log on a fresh connection.
		r := Dial(t, p.Addr)
		entries := parseSlowlog(t, r.Do("SLOWLOG", "GET", "-1"))
		var got [][]string
		for i := len(entries) - 1; i >= 0; i-- {
			got = append(got, entries[i].args)
		}
		slow[p.Name] = got
		// MONITOR shows neither admin commands nor the password; the PING
		// marks the end of what the calls above produced.
		require.Equal(t, "$3\r\nend\r\n", r.Do("PING", "end"))
		re := regexp.MustCompile(`^\+\d+\.\d{6} \[\d+ [^\]]+\] (.*)\r\n$`)
		var lines []string
		for {
			l, err := m.ReadErr(10 * time.Second)
			require.NoError(t, err, "after %q", lines)
			mm := re.FindStringSubmatch(l)
			require.NotNil(t, mm, l)
			if mm[1] == `"PING" "end"` {
				break
			}
			lines = append(lines, mm[1])
		}
		mon[p.Name] = lines
		for _, l := range lines {
			assert.NotRegexp(t, `"pw(?:Require|Wrong|Bad|Three|Master|User|M\d|Dup\d|Upper|Multi\w*)"`, l)
		}
		for _, e := range got {
			for _, a := range e {
				if a == "pwOdd" || a == "a" || a == "b" || a == "c" || a == "default" {
					continue // Redis shows these too (refused before redaction, or a user name)
				}
				assert.False(t, strings.HasPrefix(a, "pw"), "slow log shows %q in %q", a, e)
			}
		}
	})
	if slow["redis"] == nil {
		return
	}
	diffCases.Add(2)
	assert.Equal(t, slow["redis"], slow["zredis"], "SLOWLOG GET arguments")
	assert.Equal(t, mon["redis"], mon["zredis"], "MONITOR lines")
}

// HELLO applies its options in order, as Redis does: an AUTH or SETNAME
// takes effect before a later option fails.
func TestHelloOptionsInOrderDiff(t *testing.T) {
	got := map[string][]string{}
	onBoth(t, func(t *testing.T, p *Proc) {
		require.Equal(t, "+OK\r\n", Dial(t, p.Addr).Do("CONFIG", "SET", "requirepass", "s3cret"))
		var out []string
		for _, seq := range [][][]string{
			{{"HELLO", "2", "SETNAME", "a", "AUTH", "default", "wrong"}, {"AUTH", "s3cret"}, {"CLIENT", "GETNAME"}},
			{{"HELLO", "2", "AUTH", "default", "s3cret", "bogus"}, {"PING"}},
			{{"HELLO", "2", "SETNAME", "b"}, {"AUTH", "s3cret"}, {"CLIENT", "GETNAME"}},
			{{"HELLO", "2", "AUTH", "default", "s3cret", "SETNAME", "x y", "SETNAME", "e"}, {"CLIENT", "GETNAME"}},
			{{"HELLO", "2", "AUTH", "default", "s3cret", "SETNAME", "f", "SETNAME", "x y"}, {"CLIENT", "GETNAME"}},
			{{"HELLO", "2", "AUTH", "default", "wrong", "SETNAME", "g"}, {"AUTH", "s3cret"}, {"CLIENT", "GETNAME"}},
		} {
			c := Dial(t, p.Addr)
			for _, args := range seq {
				r := c.Do(args...)
				if args[0] == "HELLO" && strings.HasPrefix(r, "*") {
					r = "(hello map)"
				}
				out = append(out, r)
			}
		}
		got[p.Name] = out
	})
	if got["redis"] != nil {
		diffCases.Add(1)
		assert.Equal(t, got["redis"], got["zredis"])
	}
}
