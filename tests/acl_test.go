package tests

import (
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// ACL for the default user: the subcommands that read users answer as
// redis-server 7.0 does, with and without a password.
func TestACLDefaultUser(t *testing.T) {
	replies := map[string][]string{}
	for _, name := range []string{"zredis", "redis"} {
		var p *Proc
		if name == "zredis" {
			p = StartZredis(t)
		} else {
			p = StartRedis(t)
			diffCases.Add(1)
		}
		c := Dial(t, p.Addr)
		do := func(args ...string) { replies[name] = append(replies[name], c.Do(args...)) }
		for _, pass := range []string{"", "s3cret"} {
			if pass != "" {
				c.Do("CONFIG", "SET", "requirepass", pass)
				c.Do("AUTH", pass)
			}
			do("ACL", "LIST")
			do("ACL", "GETUSER", "default")
			do("ACL", "GETUSER", "nobody")
			do("ACL", "WHOAMI")
			do("ACL", "USERS")
		}
		do("ACL", "CAT")
		do("ACL", "CAT", "nosuch")
		do("ACL", "CAT", "a", "b")
		do("ACL", "GENPASS", "0")
		do("ACL", "GENPASS", "4097")
		do("ACL", "DRYRUN", "default", "get", "k")
		do("ACL", "DRYRUN", "default", "get")
		do("ACL", "DRYRUN", "default", "nosuch")
		do("ACL", "DRYRUN", "nobody", "get", "k")
		do("ACL", "DRYRUN", "default", "config", "get", "x")
		do("ACL", "HELP")
		for _, n := range []string{"", "5", "256", "4096"} {
			args := []string{"ACL", "GENPASS"}
			if n != "" {
				args = append(args, n)
			}
			r := c.Do(args...)
			replies[name] = append(replies[name], r[:strings.Index(r, "\r\n")]) // the length only
		}
		// The commands of a category, in any order (Redis lists them in
		// its hash table's order).
		for _, cat := range []string{"keyspace", "write", "dangerous", "connection", "pubsub", "fast"} {
			raw := c.Do("ACL", "CAT", cat)
			lines := strings.Split(strings.TrimSuffix(raw, "\r\n"), "\r\n")
			var names []string
			for i := 2; i < len(lines); i += 2 {
				names = append(names, lines[i])
			}
			sort.Strings(names)
			if name == "zredis" {
				replies["cat:"+cat] = names
			} else {
				assert.Subset(t, names, replies["cat:"+cat], "ACL CAT %s: zredis lists a command redis-server does not", cat)
			}
		}
	}
	if len(replies["redis"]) > 0 {
		assert.Equal(t, replies["redis"], replies["zredis"])
	}
}
