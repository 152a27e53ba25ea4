package engine_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zredis/zredis/commands"
	"github.com/zredis/zredis/engine"
)

func args(s ...string) [][]byte {
	out := make([][]byte, len(s))
	for i, a := range s {
		out[i] = []byte(a)
	}
	return out
}

// A user's description, applied to a new user, gives the same
// permissions: Redis panics when its rebuilt rules do not reproduce the
// bitmap, so random rule sets are checked here, command by command.
func TestACLDescribeRoundTrip(t *testing.T) {
	table := commands.Table()
	var names []string
	table.Each(func(cmd *engine.Command) { names = append(names, cmd.Name) })
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 300; n++ {
		acl := engine.NewACL(table)
		rules := []string{"on", "nopass", "~*", "&*"}
		if rng.IntN(2) == 0 {
			rules = append(rules, "+@all")
		}
		for range rng.IntN(8) {
			sign := "+"
			if rng.IntN(2) == 0 {
				sign = "-"
			}
			if rng.IntN(2) == 0 {
				rules = append(rules, sign+"@"+engine.ACLCategoryNames[rng.IntN(len(engine.ACLCategoryNames))])
			} else {
				rules = append(rules, sign+names[rng.IntN(len(names))])
			}
		}
		_, err := acl.SetUserRules(nil, nil, "u", rules)
		require.NoError(t, err, "%v", rules)
		desc := acl.Describe(acl.User("u"))
		_, err = acl.SetUserRules(nil, nil, "v", strings.Fields(desc))
		require.NoError(t, err, "%s", desc)
		u, v := acl.User("u"), acl.User("v")
		table.Each(func(cmd *engine.Command) {
			a := args(strings.Split(cmd.Name, "|")...)
			a = append(a, []byte("k"), []byte("v"), []byte("w"))
			du, _ := acl.Check(u, cmd, a)
			dv, _ := acl.Check(v, cmd, a)
			require.Equal(t, du, dv, "%s: rules %v described as %q", cmd.Name, rules, desc)
		})
		assert.Equal(t, desc, acl.Describe(v), "a description describes itself")
	}
}

func TestACLChecks(t *testing.T) {
	table := commands.Table()
	acl := engine.NewACL(table)
	lookup := func(name string) *engine.Command {
		parts := strings.Split(name, "|")
		cmd := table.Lookup([]byte(parts[0]))
		if len(parts) == 2 {
			cmd = engine.Lookup2(cmd, []byte(parts[1]))
		}
		return cmd
	}
	_, err := acl.SetUserRules(nil, nil, "u", []string{"on", "-@all", "+get", "+set", "+copy", "+publish", "+psubscribe",
		"%R~r:*", "%W~w:*", "~rw:*", "&news.*", "(+del ~d:*)", "+select|0"})
	require.NoError(t, err)
	u := acl.User("u")
	for _, tc := range []struct {
		cmd  string
		args []string
		want engine.Denial
		pos  int
	}{
		{"get", []string{"get", "r:1"}, engine.Allowed, 0},
		{"get", []string{"get", "w:1"}, engine.DeniedKey, 1},
		{"set", []string{"set", "w:1", "v"}, engine.Allowed, 0},
		{"set", []string{"set", "r:1", "v"}, engine.DeniedKey, 1},
		{"set", []string{"set", "rw:1", "v"}, engine.Allowed, 0},
		{"copy", []string{"copy", "r:1", "w:1"}, engine.Allowed, 0},
		{"copy", []string{"copy", "w:1", "r:1"}, engine.DeniedKey, 1},
		{"del", []string{"del", "d:1"}, engine.Allowed, 0},
		{"del", []string{"del", "rw:1"}, engine.DeniedKey, 1},
		{"hget", []string{"hget", "rw:1", "f"}, engine.DeniedCommand, 0},
		{"publish", []string{"publish", "news.x", "m"}, engine.Allowed, 0},
		{"publish", []string{"publish", "other", "m"}, engine.DeniedChannel, 1},
		{"psubscribe", []string{"psubscribe", "news.*"}, engine.Allowed, 0},
		{"psubscribe", []string{"psubscribe", "news.a"}, engine.DeniedChannel, 1},
		{"select", []string{"select", "0"}, engine.Allowed, 0},
		{"select", []string{"select", "1"}, engine.DeniedCommand, 0},
		{"auth", []string{"auth", "x"}, engine.Allowed, 0},
	} {
		d, pos := acl.Check(u, lookup(tc.cmd), args(tc.args...))
		assert.Equal(t, tc.want, d, "%v", tc.args)
		assert.Equal(t, tc.pos, pos, "%v", tc.args)
	}
	d, _ := acl.Check(acl.Default, lookup("flushall"), args("flushall"))
	assert.Equal(t, engine.Allowed, d, "the default user may run everything")
}

func TestACLRulesAllOrNothing(t *testing.T) {
	acl := engine.NewACL(commands.Table())
	_, err := acl.SetUserRules(nil, nil, "u", []string{"on", ">p", "+get"})
	require.NoError(t, err)
	before := acl.Describe(acl.User("u"))
	for _, bad := range [][]string{
		{"+set", "+nosuch"}, {"+@nosuch"}, {"~*", "~x"}, {"&*", "&x"}, {"<nope"}, {"#abc"},
		{"+config|get|x"}, {"%X~k"}, {"bogus"}, {"~a b"},
	} {
		_, err := acl.SetUserRules(nil, nil, "u", bad)
		assert.Error(t, err, "%v", bad)
		assert.Equal(t, before, acl.Describe(acl.User("u")), "%v changed the user", bad)
	}
	merged, _, ok := engine.MergeSelectorArgs([]string{"on", "(~x", "+get)", "(", "+set", ")"})
	require.True(t, ok)
	assert.Equal(t, []string{"on", "(~x +get)", "( +set )"}, merged)
	_, at, ok := engine.MergeSelectorArgs([]string{"on", "(~x", "+get"})
	assert.False(t, ok)
	assert.Equal(t, 1, at)
}
