package tests

// ACL users end to end, differential: every scenario runs the same steps
// on a fresh redis-server 7.0 and a fresh zredis-server and compares the
// replies, step by step. Replies that cannot be equal (times, client ids,
// addresses, server versions) are normalized first; the order of single
// command rules in an ACL description is normalized too, as Redis writes
// them in the order of its command table's hash table, which changes from
// run to run.
//
// ZREDIS_ACL_TEST_REDIS_ONLY=1 runs every scenario on redis-server twice
// instead (redis-server compared with itself): a check of the scenarios
// and of their normalizations while zredis has no ACL users. In both modes
// the texts the scenarios expect literally are checked on the
// redis-server run.

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zredis/zredis/internal/testsupport"
)

var aclRedisOnly = os.Getenv("ZREDIS_ACL_TEST_REDIS_ONLY") != ""

// aclDump logs every step of the redis-server run (ZREDIS_ACL_TEST_DUMP=1
// with -v): Redis's replies, to read.
var aclDump = os.Getenv("ZREDIS_ACL_TEST_DUMP") != ""

// aclSide is one run of a scenario: on redis-server (the reference) or on
// zredis; it records a label and a reply for every step.
type aclSide struct {
	t       *testing.T
	name    string // "redis" or "zredis": the server this run starts
	ref     bool   // the reference run, on which literal expectations are checked
	labels  []string
	replies []string
}

// aclDiff runs scenario on redis-server, then on zredis (or on
// redis-server again with ZREDIS_ACL_TEST_REDIS_ONLY), each in a subtest
// with servers of its own, and compares the two runs step by step.
func aclDiff(t *testing.T, scenario func(s *aclSide)) {
	t.Helper()
	RequireRedis(t)
	ref := &aclSide{name: "redis", ref: true}
	other := &aclSide{name: "zredis"}
	if aclRedisOnly {
		other.name = "redis"
	}
	for i, s := range []*aclSide{ref, other} {
		sub := s.name
		if i == 1 && aclRedisOnly {
			sub = "redis-again"
		}
		t.Run(sub, func(t *testing.T) {
			s.t = t
			scenario(s)
		})
	}
	n := max(len(ref.labels), len(other.labels))
	for i := 0; i < n; i++ {
		if i >= len(ref.labels) || i >= len(other.labels) {
			t.Errorf("the %s run stopped after %d steps, the redis-server run after %d", other.name, len(other.labels), len(ref.labels))
			return
		}
		if ref.labels[i] != other.labels[i] {
			t.Errorf("step %d: the runs diverge: %q (redis) vs %q (%s)", i, ref.labels[i], other.labels[i], other.name)
			return
		}
		diffCases.Add(1)
		got := other.replies[i]
		if !aclRedisOnly {
			got = withoutLaterCommands(got)
		}
		if ref.replies[i] != got {
			t.Errorf("step %d %s:\n %7s: %q\n   redis: %q", i, ref.labels[i], other.name, other.replies[i], ref.replies[i])
		}
	}
}

// start starts this run's server with args (after the harness's own).
func (s *aclSide) start(args ...string) *Proc {
	s.t.Helper()
	return StartServer(s.t, s.name, args...)
}

// startWith starts this run's server as o describes (Name and Bin set
// here).
func (s *aclSide) startWith(o testsupport.Options) *Proc {
	s.t.Helper()
	o.Name, o.Bin = s.name, serverBin(s.t, s.name)
	return testsupport.Start(s.t, o)
}

func (s *aclSide) dial(p *Proc) *Conn {
	s.t.Helper()
	return Dial(s.t, p.Addr)
}

// rec records one step.
func (s *aclSide) rec(label, reply string) {
	if aclDump && s.ref {
		s.t.Logf("%s => %q", label, reply)
	}
	s.labels = append(s.labels, label)
	s.replies = append(s.replies, reply)
}

// do sends a command on c and records its raw reply.
func (s *aclSide) do(c *Conn, args ...string) string {
	s.t.Helper()
	r := c.Do(args...)
	s.rec(aclLabel(args), r)
	return r
}

// doN is do with the reply passed through norm before it is recorded.
func (s *aclSide) doN(c *Conn, norm func(string) string, args ...string) string {
	s.t.Helper()
	r := norm(c.Do(args...))
	s.rec(aclLabel(args), r)
	return r
}

// want records got under label and, on the redis-server run, requires it
// to be want: the texts this file documents are Redis's.
func (s *aclSide) want(label, want, got string) {
	s.t.Helper()
	s.rec(label, got)
	if s.ref {
		assert.Equal(s.t, want, got, "redis-server: %s", label)
	}
}

// doWant is do with a literal expectation on the redis-server run.
func (s *aclSide) doWant(c *Conn, want string, args ...string) {
	s.t.Helper()
	s.want(aclLabel(args), want, c.Do(args...))
}

func aclLabel(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " ") {
			a = `"` + a + `"`
		}
		q[i] = a
	}
	return strings.Join(q, " ")
}

// ---- normalizations -------------------------------------------------------

// aclSingleRules is a run of single command rules (+get -set +client|id)
// in an ACL description: category rules (+@read) contain an "@".
var aclSingleRules = regexp.MustCompile(`[+-][^@\s()]+(?: [+-][^@\s()]+)*`)

// aclRules sorts every run of single command rules in a reply (ACL LIST,
// ACL GETUSER): Redis emits them in its command dictionary's order, which
// changes with the hash seed of every run. The reply keeps its length.
func aclRules(raw string) string {
	return aclSingleRules.ReplaceAllStringFunc(raw, func(run string) string {
		f := strings.Fields(run)
		sort.Strings(f)
		return strings.Join(f, " ")
	})
}

// aclUserFields is the sorted list of the user= fields of a CLIENT LIST
// or CLIENT INFO reply.
func aclUserFields(raw string) string {
	var users []string
	for _, m := range regexp.MustCompile(`(?:^|\s)user=(\S*)`).FindAllStringSubmatch(raw, -1) {
		users = append(users, m[1])
	}
	sort.Strings(users)
	return strings.Join(users, ",")
}

// aclHelloShape is a HELLO reply reduced to its error text or to its
// type and size: the map holds the server's version and the client's id.
func aclHelloShape(raw string) string {
	if strings.HasPrefix(raw, "-") {
		return raw
	}
	return raw[:strings.Index(raw, "\r\n")]
}

// aclLogFields reduces an ACL LOG reply to the fields that do not change
// from run to run: age-seconds goes, client-info is reduced to its user=
// field; the field names are kept in their order.
func aclLogFields(t *testing.T, raw string) string {
	n := cmdParse(t, raw)
	if n.typ != '*' {
		return raw
	}
	var out []string
	for _, e := range n.elems {
		var f []string
		for i := 0; i+1 < len(e.elems); i += 2 {
			k, v := e.elems[i].str, e.elems[i+1]
			switch k {
			case "age-seconds":
				f = append(f, k)
			case "client-info":
				f = append(f, k+"=user="+aclUserFields(v.str))
			default:
				f = append(f, k+"="+v.str)
			}
		}
		out = append(out, "{"+strings.Join(f, " ")+"}")
	}
	return strings.Join(out, " ")
}

// aclRead reads the next reply on c within timeout: the reply, or
// "closed" when the server closed the connection, or "no reply" when
// nothing came.
func aclRead(c *Conn, timeout time.Duration) string {
	r, err := c.ReadErr(timeout)
	if err == nil {
		return r
	}
	if ne, ok := err.(interface{ Timeout() bool }); ok && ne.Timeout() {
		return "no reply"
	}
	return "closed"
}

// aclAuth opens a connection authenticated as user.
func (s *aclSide) aclAuth(p *Proc, user, pass string) *Conn {
	s.t.Helper()
	c := s.dial(p)
	require.Equal(s.t, "+OK\r\n", c.Do("AUTH", user, pass), "AUTH %s", user)
	return c
}

func sha256Hex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// Redis 7.0's texts, as the scenarios expect them.
const (
	aclWrongPass   = "-WRONGPASS invalid username-password pair or user is disabled.\r\n"
	aclNoAuth      = "-NOAUTH Authentication required.\r\n"
	aclKeysDenied  = "-NOPERM this user has no permissions to access one of the keys used as arguments\r\n"
	aclChansDenied = "-NOPERM this user has no permissions to access one of the channels used as arguments\r\n"
	aclExecAbort   = "-EXECABORT Transaction discarded because of previous errors.\r\n"
)

func aclCmdDenied(cmd string) string {
	return "-NOPERM this user has no permissions to run the '" + cmd + "' command\r\n"
}

func aclModifierErr(mod, why string) string {
	return "-ERR Error in ACL SETUSER modifier '" + mod + "': " + why + "\r\n"
}

// ---- scenarios --------------------------------------------------------------

// ACL SETUSER modifiers one by one on a new user, as ACL GETUSER and ACL
// LIST describe the result; every ACL LIST line fed back to ACL SETUSER
// (split on spaces, so selectors spread over several arguments) gives the
// same line. Command rules are only compared as descriptions where those
// depend on categories zredis has wholly (string, hash, list, pubsub,
// transaction, or a category taken whole); the others are compared by what
// the user may run.
func TestACLUsersSetUserRoundTrip(t *testing.T) { aclSetUserRoundTrip(t, false) }

// TestACLUsersSetUserRoundTripResp3 adds ACL GETUSER's RESP3 map.
func TestACLUsersSetUserRoundTripResp3(t *testing.T) {
	aclSetUserRoundTrip(t, true)
}

func aclSetUserRoundTrip(t *testing.T, resp3 bool) {
	hash := sha256Hex("pw2")
	modifiers := [][]string{
		{},
		{"on"},
		{"on", "off"},
		{">pw1"},
		{">pw1", ">pw2", ">pw1"},
		{">pw1", ">pw2", "<pw1"},
		{"#" + hash},
		{">pw2", "!" + hash},
		{"nopass"},
		{">pw1", "nopass"},
		{"nopass", ">pw1"},
		{">pw1", "resetpass"},
		{"~foo:*", "~bar"},
		{"~foo:*", "~foo:*"},
		{"%R~r:*", "%W~w:*", "%RW~rw:*"},
		{"%R~x", "%W~x"},
		{"~x", "%R~x"},
		{"%r~low", "%w~low2"},
		{"allkeys"},
		{"~*"},
		{"~a", "allkeys"},
		{"~a", "resetkeys", "~b"},
		{"allkeys", "resetkeys"},
		{"&news.*", "&chat"},
		{"allchannels"},
		{"&*"},
		{"&a", "resetchannels"},
		{"&a", "allchannels"},
		{"+@all"},
		{"-@all"},
		{"allcommands"},
		{"nocommands"},
		{"+@all", "-@dangerous"},
		{"-@all", "+@read"},
		{"-@all", "+@string", "+@hash"},
		{"-@all", "+get", "+set"},
		{"+@all", "-flushall"},
		{"-@all", "+@list", "+client|id"},
		{"-@all", "+@hash", "-hset"},
		{"-@all", "+@pubsub", "+@transaction"},
		{"+@all", "-@all", "+@read", "-@write"},
		{"+get", "-@all"},
		{"-@all", "+GET", "+Set"},
		{"-@all", "+config|get"},
		{"+@all", "-config|set"},
		{"-@all", "+config|get", "-config|get"},
		{"-@all", "+select|0", "+select|1"},
		{"-@all", "+client", "-client|kill"},
		{"(~x* +get)"},
		{"(~x*", "+get)"},
		{"(", "~x*", "+get", ")"},
		{"(~x* +get)", "(%R~y* &c +@string)"},
		{"(~x* +get)", "clearselectors"},
		{"on", ">pw", "~*", "&*", "+@all", "(~x +get)", "reset"},
		{"reset"},
		{"skip-sanitize-payload"},
		{"skip-sanitize-payload", "sanitize-payload"},
		{""},
		{"on", "", ">pw1", ""},
	}
	errorsCases := []struct {
		args []string
		want string
	}{
		{[]string{"+nosuch"}, aclModifierErr("+nosuch", "Unknown command or category name in ACL")},
		{[]string{"-@nosuch"}, aclModifierErr("-@nosuch", "Unknown command or category name in ACL")},
		{[]string{"#abc"}, aclModifierErr("#abc", "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters")},
		{[]string{"!" + strings.ToUpper(hash)}, aclModifierErr("!"+strings.ToUpper(hash), "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters")},
		{[]string{"<missing"}, aclModifierErr("<missing", "The password you are trying to remove from the user does not exist")},
		{[]string{"!" + sha256Hex("missing")}, aclModifierErr("!"+sha256Hex("missing"), "The password you are trying to remove from the user does not exist")},
		{[]string{"~*", "~x"}, aclModifierErr("~x", "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns")},
		{[]string{"allkeys", "%R~x"}, aclModifierErr("%R~x", "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns")},
		{[]string{"&*", "&x"}, aclModifierErr("&x", "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels")},
		{[]string{"%X~x"}, aclModifierErr("%X~x", "Syntax error")},
		{[]string{"%R"}, ""},
		{[]string{"bogus"}, aclModifierErr("bogus", "Syntax error")},
		{[]string{"-select|0"}, aclModifierErr("-select|0", "Unknown command or category name in ACL")},
		{[]string{"+config|get|x"}, aclModifierErr("+config|get|x", "Allowing first-arg of a subcommand is not supported")},
		{[]string{"+select|0|1"}, ""},
		{[]string{"+@all|x"}, ""},
		{[]string{"(~x +get"}, "-ERR Unmatched parenthesis in acl selector starting at '(~x +get'.\r\n"},
		{[]string{"(~x", "+get"}, ""},
		{[]string{"~x)"}, ""},
		{[]string{"(~x +nosuch)"}, ""},
		{[]string{"(reset)"}, ""},
		{[]string{"(on)"}, ""},
		{[]string{"on", "+nosuch"}, ""}, // nothing applied: the user is not created
	}
	aclDiff(t, func(s *aclSide) {
		p := s.start()
		c := s.dial(p)
		for _, mods := range modifiers {
			c.Do("ACL", "DELUSER", "u", "u2")
			s.do(c, append([]string{"ACL", "SETUSER", "u"}, mods...)...)
			s.doN(c, aclRules, "ACL", "GETUSER", "u")
			line := s.doN(c, aclRules, "ACL", "LIST")
			// The ACL LIST line of u, fed back as the rules of u2.
			var rules []string
			for _, l := range strings.Split(line, "\r\n") {
				if r, ok := strings.CutPrefix(l, "user u "); ok {
					rules = strings.Fields(r)
				}
			}
			s.rec("ACL SETUSER u2 <the rules of u in ACL LIST>", strings.Join(rules, " ")+" => "+c.Do(append([]string{"ACL", "SETUSER", "u2"}, rules...)...))
			s.doN(c, aclRules, "ACL", "LIST")
		}
		// The user stays as it was after a refused SETUSER: nothing of the
		// call applies.
		c.Do("ACL", "DELUSER", "u", "u2")
		for _, e := range errorsCases {
			args := append([]string{"ACL", "SETUSER", "u"}, e.args...)
			if e.want != "" {
				s.doWant(c, e.want, args...)
			} else {
				s.do(c, args...)
			}
			s.doN(c, aclRules, "ACL", "LIST")
		}
		s.do(c, "ACL", "SETUSER", "u", "on", ">p")
		s.do(c, "ACL", "SETUSER", "u", "off", "+nosuch")
		s.doN(c, aclRules, "ACL", "LIST")
		s.doWant(c, "-ERR Usernames can't contain spaces or null characters\r\n", "ACL", "SETUSER", "a b", "on")
		s.do(c, "ACL", "SETUSER", "a\x00b", "on")
		s.do(c, "ACL", "SETUSER")
		s.doWant(c, "-ERR The 'default' user cannot be removed\r\n", "ACL", "DELUSER", "default")
		s.do(c, "ACL", "DELUSER", "u", "default")
		s.do(c, "ACL", "DELUSER", "nosuch")
		s.do(c, "ACL", "DELUSER")
		s.do(c, "ACL", "GETUSER", "nosuch")
		s.do(c, "ACL", "SETUSER", "b", "on")
		s.do(c, "ACL", "SETUSER", "a", "on")
		s.do(c, "ACL", "USERS")
		s.do(c, "ACL", "WHOAMI")
		// RESP3 GETUSER: a map, selectors included.
		if resp3 {
			s.doN(c, aclHelloShape, "HELLO", "3")
			s.do(c, "ACL", "SETUSER", "r3", "on", "#"+hash, "~k", "&c", "-@all", "+@string", "(%W~w +@hash)")
			s.doN(c, aclRules, "ACL", "GETUSER", "r3")
		}
	})
}

// Command rules whose description depends on the whole command table (a
// best fit over the categories, counted over every command, Redis's
// including streams, geo, HyperLogLog, bitmaps, SORT, scripting): the
// description is the same (the ACL knows the commands zredis does not
// serve), and the commands both servers have are allowed or refused
// alike.
func TestACLUsersCommandRulesEnforced(t *testing.T) {
	rules := [][]string{
		{"-@all", "+@list", "-@set"},
		{"-@all", "+@string", "-@write"},
		{"-@all", "+@keyspace", "-@dangerous"},
		{"+@all", "-@read", "+@write"},
		{"-@all", "+@hash", "-@read"},
		{"-@all", "+@pubsub", "-@slow"},
		{"-@all", "+@transaction", "-@fast"},
		{"-@all", "+@connection", "-@dangerous"},
		{"+@all", "-@admin", "+config|get"},
		{"-@all", "+@read", "-@keyspace", "+type"},
		{"-@all", "+client", "-client|kill"},
		{"-@all", "+select|1"},
		{"-@all", "+@read", "+@write", "-@list", "-@dangerous"},
		{"-@all", "+@read", "+@hyperloglog", "-xinfo"},
		{"+@all", "-debug", "-eval", "-sort", "-@scripting", "+@geo"},
	}
	probes := [][]string{
		{"get", "k"}, {"set", "k", "v"}, {"strlen", "k"}, {"incr", "k"}, {"lpush", "k", "v"}, {"lrange", "k", "0", "1"},
		{"sadd", "k", "m"}, {"smembers", "k"}, {"zadd", "k", "1", "m"}, {"hset", "k", "f", "v"}, {"hget", "k", "f"},
		{"del", "k"}, {"type", "k"}, {"keys", "*"}, {"flushall"}, {"flushdb"}, {"publish", "c", "m"},
		{"subscribe", "c"}, {"multi"}, {"exec"}, {"ping"}, {"client", "id"}, {"client", "kill", "id", "1"},
		{"client", "list"}, {"config", "get", "hz"}, {"config", "set", "hz", "10"}, {"select", "1"}, {"select", "2"},
		{"info"},
	}
	aclDiff(t, func(s *aclSide) {
		p := s.start()
		c := s.dial(p)
		for _, r := range rules {
			s.do(c, append([]string{"ACL", "SETUSER", "u", "reset", "on", "nopass", "~*", "&*"}, r...)...)
			// The ACL knows every Redis 7.0 command, served or not, so the
			// description is redis-server's (single rules in any order).
			s.doN(c, aclRules, "ACL", "GETUSER", "u")
			for _, probe := range probes {
				s.do(c, append([]string{"ACL", "DRYRUN", "u"}, probe...)...)
			}
		}
	})
}

// AUTH and HELLO AUTH with user names, the WRONGPASS and NOAUTH texts, the
// current user as ACL WHOAMI and CLIENT LIST/INFO show it.
func TestACLUsersAuth(t *testing.T) { aclAuth(t, false) }

// TestACLUsersAuthResp3 adds HELLO 3 AUTH.
func TestACLUsersAuthResp3(t *testing.T) {
	aclAuth(t, true)
}

func aclAuth(t *testing.T, resp3 bool) {
	aclDiff(t, func(s *aclSide) {
		p := s.start()
		admin := s.dial(p)
		s.do(admin, "ACL", "SETUSER", "alice", "on", ">apw", ">apw2", "~*", "&*", "+@all")
		s.do(admin, "ACL", "SETUSER", "bob", "off", ">bpw", "~*", "+@all")
		s.do(admin, "ACL", "SETUSER", "free", "on", "nopass", "~*", "+@all")
		c := s.dial(p)
		s.doWant(c, "+OK\r\n", "AUTH", "alice", "apw")
		s.doWant(c, "$5\r\nalice\r\n", "ACL", "WHOAMI")
		s.doN(c, aclUserFields, "CLIENT", "INFO")
		s.doWant(c, "+OK\r\n", "AUTH", "alice", "apw2")
		s.doWant(c, aclWrongPass, "AUTH", "alice", "wrong")
		s.doWant(c, "$5\r\nalice\r\n", "ACL", "WHOAMI")
		s.doWant(c, aclWrongPass, "AUTH", "bob", "bpw")
		s.doWant(c, aclWrongPass, "AUTH", "nobody", "x")
		s.doWant(c, "+OK\r\n", "AUTH", "free", "anything")
		s.do(c, "ACL", "WHOAMI")
		s.doWant(c, "-ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?\r\n", "AUTH", "onlyone")
		s.do(c, "AUTH", "a", "b", "c")
		s.do(c, "AUTH")
		s.doWant(c, "+OK\r\n", "AUTH", "default", "whatever")
		s.do(c, "ACL", "WHOAMI")
		s.doN(admin, aclUserFields, "CLIENT", "LIST")

		for _, proto := range []string{"2", "3"} {
			if proto == "3" && !resp3 {
				continue
			}
			h := s.dial(p)
			s.doN(h, aclHelloShape, "HELLO", proto, "AUTH", "alice", "apw")
			s.do(h, "ACL", "WHOAMI")
			s.doN(h, aclUserFields, "CLIENT", "INFO")
			s.doN(h, aclHelloShape, "HELLO", proto, "AUTH", "alice", "bad")
			s.do(h, "ACL", "WHOAMI")
			s.doN(h, aclHelloShape, "HELLO", proto, "AUTH", "bob", "bpw")
			s.doN(h, aclHelloShape, "HELLO", proto, "AUTH", "nobody", "x")
			s.doN(h, aclHelloShape, "HELLO", proto, "AUTH", "free", "x", "SETNAME", "n")
			s.do(h, "ACL", "WHOAMI")
		}

		// The default user off: a new connection must authenticate; the
		// connections already open stay as they are.
		s.do(admin, "ACL", "SETUSER", "default", "off")
		n := s.dial(p)
		s.doWant(n, aclNoAuth, "PING")
		s.doWant(n, aclNoAuth, "GET", "k")
		s.do(n, "ACL", "WHOAMI")
		s.doWant(n, aclWrongPass, "AUTH", "default", "x")
		s.do(n, "AUTH", "x")
		s.doN(n, aclHelloShape, "HELLO", "2")
		s.doN(n, aclHelloShape, "HELLO", "2", "AUTH", "alice", "apw")
		s.do(n, "PING")
		s.do(admin, "PING")
		s.do(admin, "ACL", "WHOAMI")
		s.doN(admin, aclUserFields, "CLIENT", "LIST")
		s.do(admin, "ACL", "SETUSER", "default", "on")
		s.do(s.dial(p), "PING")
	})
}

// What a user may run: command, key (read, write, read-write patterns,
// commands with source and destination keys) and channel permissions, in
// and out of MULTI, root and selectors, and ACL DRYRUN's view of them.
func TestACLUsersEnforcement(t *testing.T) {
	aclDiff(t, func(s *aclSide) {
		p := s.start()
		admin := s.dial(p)
		for _, u := range [][]string{
			{"getter", "on", ">p", "-@all", "+get", "+multi", "+exec", "~foo*"},
			{"rw", "on", ">p", "+@all", "-@dangerous", "%R~r:*", "%W~w:*", "~rw:*"},
			{"pub", "on", ">p", "+@all", "~*", "resetchannels", "&news.*"},
			{"sel", "on", ">p", "-@all", "+get", "~a:*", "(+set ~b:*)", "(+@list %R~c:*)"},
			{"mu", "on", ">p", "+@all", "~*", "&*"},
		} {
			s.do(admin, append([]string{"ACL", "SETUSER"}, u...)...)
		}
		for _, k := range []string{"foo1", "r:1", "rw:1", "w:1", "b:1"} {
			admin.Do("SET", k, "v-"+k)
		}

		g := s.aclAuth(p, "getter", "p")
		s.doWant(g, aclCmdDenied("set"), "SET", "foo1", "x")
		s.doWant(g, "$6\r\nv-foo1\r\n", "GET", "foo1")
		s.doWant(g, aclKeysDenied, "GET", "bar")
		s.doWant(g, aclCmdDenied("mget"), "MGET", "foo1", "bar")
		s.do(g, "GET")
		s.do(g, "NOSUCH", "x")
		s.do(g, "ACL", "WHOAMI")
		s.do(g, "PING")
		s.do(g, "CLIENT", "ID")
		s.do(g, "SELECT", "1")
		s.do(g, "AUTH", "getter", "p")
		s.do(s.aclAuth(p, "getter", "p"), "QUIT")

		rw := s.aclAuth(p, "rw", "p")
		for _, args := range [][]string{
			{"GET", "r:1"}, {"SET", "r:1", "x"}, {"SET", "w:1", "x"}, {"GET", "w:1"}, {"SET", "w:1", "y", "GET"},
			{"SET", "rw:1", "z", "GET"}, {"INCR", "r:n"}, {"INCR", "w:n"}, {"INCR", "rw:n"},
			{"APPEND", "r:s", "x"}, {"APPEND", "w:s", "x"}, {"LPUSH", "w:l", "x"}, {"RPOP", "w:l"}, {"LLEN", "w:l"},
			{"EXISTS", "w:1"}, {"TYPE", "w:1"}, {"STRLEN", "w:1"}, {"DEL", "r:1"}, {"DEL", "w:x"}, {"UNLINK", "r:1"},
			{"EXPIRE", "r:1", "100"}, {"TTL", "w:1"}, {"TOUCH", "w:1"}, {"OBJECT", "ENCODING", "w:1"},
			{"COPY", "r:1", "w:copy"}, {"COPY", "w:1", "r:copy"}, {"COPY", "r:1", "rw:copy"},
			{"RENAME", "r:1", "w:ren"}, {"RENAME", "rw:1", "w:ren"}, {"RENAME", "w:ren", "rw:back"},
			{"LMOVE", "rw:nolist", "w:l", "LEFT", "RIGHT"}, {"SMOVE", "r:s", "w:s", "m"},
			{"SINTERSTORE", "w:dst", "r:a", "r:b"}, {"SINTERSTORE", "r:dst", "w:a"}, {"SUNION", "r:a", "w:b"},
			{"ZUNIONSTORE", "w:z", "2", "r:a", "rw:b"}, {"MSET", "w:1", "a", "r:1", "b"}, {"MSET", "w:1", "a", "rw:1", "b"},
			{"GETDEL", "w:1"}, {"GETEX", "r:1"}, {"GETEX", "rw:1", "PERSIST"},
		} {
			s.do(rw, args...)
		}
		s.doN(rw, sortedElems, "KEYS", "*")

		// Channels: PUBLISH and SUBSCRIBE match the channel against the
		// patterns, PSUBSCRIBE compares its pattern literally.
		pub := s.aclAuth(p, "pub", "p")
		s.doWant(pub, ":0\r\n", "PUBLISH", "news.x", "m")
		s.doWant(pub, aclChansDenied, "PUBLISH", "other", "m")
		s.do(pub, "SPUBLISH", "news.s", "m")
		s.doWant(pub, aclChansDenied, "SPUBLISH", "other", "m")
		for _, args := range [][]string{
			{"SUBSCRIBE", "other"}, {"SUBSCRIBE", "news.a", "other"}, {"PSUBSCRIBE", "news.a*"}, {"PSUBSCRIBE", "*"},
			{"PSUBSCRIBE", "news.*", "x"}, {"SSUBSCRIBE", "other"}, {"SUBSCRIBE", "news.a", "news.b"},
		} {
			sub := s.aclAuth(p, "pub", "p")
			s.do(sub, args...)
			s.rec("PING after "+aclLabel(args), sub.Do("PING"))
		}
		sub := s.aclAuth(p, "pub", "p")
		s.do(sub, "PSUBSCRIBE", "news.*")
		sub = s.aclAuth(p, "pub", "p")
		s.do(sub, "SSUBSCRIBE", "news.s")
		s.doN(pub, sortedElems, "PUBSUB", "CHANNELS")
		s.do(pub, "PUBSUB", "NUMSUB", "news.a")
		s.do(pub, "PUBSUB", "NUMPAT")

		// MULTI: a denied command is refused when queued, and EXEC aborts.
		s.doWant(g, "+OK\r\n", "MULTI")
		s.doWant(g, "+QUEUED\r\n", "GET", "foo1")
		s.doWant(g, aclCmdDenied("set"), "SET", "foo1", "x")
		s.do(g, "GET", "bar")
		s.doWant(g, aclExecAbort, "EXEC")

		// Permissions revoked between queueing and EXEC.
		m := s.aclAuth(p, "mu", "p")
		s.do(m, "MULTI")
		s.do(m, "SET", "k1", "v")
		s.do(m, "GET", "k1")
		s.do(m, "GET", "other")
		s.do(m, "PUBLISH", "c", "m")
		s.do(admin, "ACL", "SETUSER", "mu", "-set", "resetkeys", "~k*", "resetchannels")
		s.do(m, "EXEC")
		s.do(admin, "GET", "k1")
		s.do(admin, "ACL", "SETUSER", "mu", "+@all", "allkeys")
		s.do(m, "MULTI")
		s.do(m, "SET", "k2", "v")
		s.do(admin, "ACL", "SETUSER", "mu", "-multi")
		s.do(m, "EXEC")
		s.do(admin, "ACL", "SETUSER", "mu", "+@all", "-exec")
		s.do(m, "MULTI")
		s.do(m, "SET", "k3", "v")
		s.do(m, "EXEC")
		s.do(m, "DISCARD")

		// Selectors: the root denies, a selector allows.
		sl := s.aclAuth(p, "sel", "p")
		for _, args := range [][]string{
			{"GET", "a:1"}, {"SET", "b:1", "x"}, {"GET", "b:1"}, {"SET", "a:1", "x"}, {"LPUSH", "c:l", "x"},
			{"LRANGE", "c:l", "0", "-1"}, {"LRANGE", "a:l", "0", "-1"}, {"DEL", "b:1"}, {"MGET", "a:1", "b:1"},
		} {
			s.do(sl, args...)
		}
		s.doN(admin, aclRules, "ACL", "GETUSER", "sel")

		// ACL DRYRUN: OK or the denial, as a bulk string.
		for _, args := range [][]string{
			{"getter", "get", "foo1"}, {"getter", "set", "foo1", "x"}, {"getter", "get", "bar"},
			{"getter", "mget", "foo1", "bar"}, {"getter", "config", "get", "x"},
			{"rw", "set", "r:1", "x"}, {"rw", "get", "w:1"}, {"rw", "set", "w:1", "x"}, {"rw", "copy", "w:1", "r:1"},
			{"pub", "publish", "other", "m"}, {"pub", "publish", "news.x", "m"}, {"pub", "subscribe", "news.x", "y"},
			{"pub", "psubscribe", "news.a*"}, {"pub", "psubscribe", "news.*"}, {"pub", "ssubscribe", "other"},
			{"sel", "set", "b:1", "x"}, {"sel", "set", "a:1", "x"}, {"sel", "get", "b:1"},
			{"nobody", "get", "x"}, {"getter", "nosuch"}, {"getter", "get"}, {"getter", "get", "a", "b"},
			{"getter", "GET", "foo1"}, {"getter"},
		} {
			s.do(admin, append([]string{"ACL", "DRYRUN"}, args...)...)
		}
	})
}

// ACL LOG: the entries of command, key, channel and auth denials (ACL LOG
// reports no age or client to compare: those are reduced), their grouping,
// ACL LOG <count>, RESET, acllog-max-len.
func TestACLUsersLog(t *testing.T) {
	aclDiff(t, func(s *aclSide) {
		p := s.start()
		admin := s.dial(p)
		log := func(args ...string) {
			s.t.Helper()
			a := append([]string{"ACL", "LOG"}, args...)
			s.rec(aclLabel(a), aclLogFields(s.t, admin.Do(a...)))
		}
		s.do(admin, "ACL", "SETUSER", "eve", "on", ">p", "-@all", "+get", "+publish", "+multi", "+exec", "~foo*", "&ok")
		s.doWant(admin, "*0\r\n", "ACL", "LOG")
		e := s.aclAuth(p, "eve", "p")
		e.Do("SET", "foo1", "x")
		log()
		e.Do("SET", "foo1", "x")
		e.Do("SET", "foo2", "y")
		e2 := s.aclAuth(p, "eve", "p")
		e2.Do("SET", "foo3", "z")
		e.Do("GET", "bar")
		e.Do("PUBLISH", "nope", "m")
		e.Do("AUTH", "eve", "wrong")
		e.Do("AUTH", "nosuch", "x")
		e.Do("HELLO", "2", "AUTH", "eve", "wrong")
		e.Do("MULTI")
		e.Do("GET", "bar2")
		e.Do("EXEC")
		e.Do("MULTI")
		e.Do("GET", "foo1")
		admin.Do("ACL", "SETUSER", "eve", "resetkeys", "~zzz")
		e.Do("EXEC")
		log()
		log("1")
		log("3")
		log("0")
		s.do(admin, "ACL", "LOG", "-1")
		s.do(admin, "ACL", "LOG", "x")
		s.do(admin, "ACL", "LOG", "RESET", "x")
		s.doWant(admin, "+OK\r\n", "ACL", "LOG", "RESET")
		log()

		// acllog-max-len: the oldest entries go when new ones come.
		s.do(admin, "CONFIG", "GET", "acllog-max-len")
		s.do(admin, "CONFIG", "SET", "acllog-max-len", "2")
		for _, k := range []string{"a", "b", "c", "d"} {
			e.Do("GET", k)
		}
		log()
		s.do(admin, "CONFIG", "SET", "acllog-max-len", "1")
		log()
		e.Do("GET", "e")
		log()
		s.do(admin, "CONFIG", "SET", "acllog-max-len", "0")
		e.Do("GET", "f")
		log()
		s.do(admin, "CONFIG", "SET", "acllog-max-len", "-1")
	})
}

// ACL DELUSER disconnects the users' clients; ACL SETUSER that takes a
// channel away from a user disconnects its clients subscribed to it.
func TestACLUsersDisconnects(t *testing.T) {
	aclDiff(t, func(s *aclSide) {
		p := s.start()
		admin := s.dial(p)
		s.do(admin, "ACL", "SETUSER", "gone", "on", ">p", "+@all", "~*", "&*")
		s.do(admin, "ACL", "SETUSER", "gone2", "on", ">p", "+@all")
		s.do(admin, "ACL", "SETUSER", "stays", "on", ">p", "+@all")
		v1, v2 := s.aclAuth(p, "gone", "p"), s.aclAuth(p, "gone", "p")
		v3, st := s.aclAuth(p, "gone2", "p"), s.aclAuth(p, "stays", "p")
		s.do(v2, "SUBSCRIBE", "c")
		s.doWant(admin, ":2\r\n", "ACL", "DELUSER", "gone", "gone2", "nosuch")
		for i, c := range []*Conn{v1, v3, st} {
			c.Send(Encode("PING"))
			s.rec("client "+string(rune('1'+i))+": PING", aclRead(c, 10*time.Second))
		}
		s.want("subscriber: after DELUSER", "closed", aclRead(v2, 10*time.Second))
		s.doN(admin, aclUserFields, "CLIENT", "LIST")
		// DELUSER of the calling client's own user.
		s.do(admin, "ACL", "SETUSER", "self", "on", ">p", "+@all")
		self := s.aclAuth(p, "self", "p")
		self.Send(Encode("ACL", "DELUSER", "self"))
		s.rec("ACL DELUSER self (own user)", aclRead(self, 10*time.Second))
		s.rec("after own DELUSER", aclRead(self, 10*time.Second))

		// Channels taken away.
		s.do(admin, "ACL", "SETUSER", "subs", "on", ">p", "+@all", "resetchannels", "&news.*", "&chat", "&p.*")
		a := s.aclAuth(p, "subs", "p")
		b := s.aclAuth(p, "subs", "p")
		c := s.aclAuth(p, "subs", "p")
		d := s.aclAuth(p, "subs", "p")
		s.do(a, "SUBSCRIBE", "news.a")
		s.do(b, "SUBSCRIBE", "chat")
		s.do(c, "PSUBSCRIBE", "p.*")
		s.do(d, "SSUBSCRIBE", "chat")
		s.do(admin, "ACL", "SETUSER", "subs", "&extra")
		for _, cc := range []*Conn{a, b, c, d} {
			s.do(cc, "PING")
		}
		s.do(admin, "ACL", "SETUSER", "subs", "resetchannels", "&news.*", "&p.*", "&extra")
		for i, cc := range []*Conn{a, b, c, d} {
			cc.Send(Encode("PING"))
			s.rec("subscriber "+string(rune('a'+i))+": PING after the channel went", aclRead(cc, 10*time.Second))
		}
		s.do(admin, "ACL", "SETUSER", "subs", "resetchannels", "&p.x")
		c.Send(Encode("PING"))
		s.rec("pattern subscriber after &p.* became &p.x", aclRead(c, 10*time.Second))
		s.do(admin, "PUBLISH", "news.a", "m")
	})
}

// acl-pubsub-default: the channels of a new user (and of reset), at start
// and by CONFIG SET.
func TestACLUsersPubsubDefault(t *testing.T) {
	aclDiff(t, func(s *aclSide) {
		p := s.start()
		c := s.dial(p)
		s.doWant(c, "*2\r\n$18\r\nacl-pubsub-default\r\n$13\r\nresetchannels\r\n", "CONFIG", "GET", "acl-pubsub-default")
		s.do(c, "ACL", "SETUSER", "n1", "on")
		s.do(c, "CONFIG", "SET", "acl-pubsub-default", "allchannels")
		s.do(c, "ACL", "SETUSER", "n2", "on")
		s.do(c, "ACL", "SETUSER", "n3", "on", "&x", "reset")
		s.do(c, "ACL", "SETUSER", "n4", "on", "resetchannels")
		s.do(c, "ACL", "LIST")
		s.do(c, "ACL", "GETUSER", "n2")
		s.do(s.dial(p), "AUTH", "n2", "x")
		s.do(c, "ACL", "SETUSER", "n2", "+@all", "nopass")
		n2 := s.aclAuth(p, "n2", "x")
		s.do(n2, "PUBLISH", "any", "m")
		s.do(c, "CONFIG", "SET", "acl-pubsub-default", "resetchannels")
		s.do(c, "ACL", "SETUSER", "n5", "on")
		s.do(c, "ACL", "LIST")
		s.do(c, "CONFIG", "SET", "acl-pubsub-default", "bogus")
		s.do(c, "CONFIG", "GET", "acl-pubsub-default")

		q := s.start("--acl-pubsub-default", "allchannels")
		qc := s.dial(q)
		s.do(qc, "ACL", "SETUSER", "n", "on")
		s.do(qc, "ACL", "LIST")
	})
}

// `user` lines in the configuration file: the users they define, and the
// start refused on a bad line or with an aclfile as well.
func TestACLUsersConfigLines(t *testing.T) {
	aclDiff(t, func(s *aclSide) {
		dir := s.t.TempDir()
		conf := writeFile(s.t, dir, "users.conf", "user default on >pw ~* &* +@all\nuser alice on >a ~a:* +@read\n")
		p := s.startWith(testsupport.Options{Args: []string{conf}, Password: "pw"})
		c := s.dial(p)
		s.doWant(c, aclNoAuth, "PING")
		s.doWant(c, aclWrongPass, "AUTH", "wrong")
		s.doWant(c, "+OK\r\n", "AUTH", "pw")
		s.do(c, "ACL", "WHOAMI")
		s.do(c, "SET", "a:1", "v")
		s.doN(c, aclRules, "ACL", "LIST")
		s.do(c, "CONFIG", "GET", "requirepass")
		a := s.dial(p)
		s.doWant(a, "+OK\r\n", "AUTH", "alice", "a")
		s.do(a, "GET", "a:1")
		s.doWant(a, aclKeysDenied, "GET", "b")
		s.doWant(a, aclCmdDenied("set"), "SET", "a:1", "x")
	})
}

// A bad user line, or users in both the file and an aclfile: the server
// does not start, and says why as redis-server does (a fatal configuration
// error while reading the file, or an error when the users are loaded).
func TestACLUsersConfigLinesRefused(t *testing.T) {
	aclDiff(t, func(s *aclSide) {
		for _, bad := range []struct{ conf, want string }{
			{"user alice on +nosuch\n", "Error loading ACL rule '+nosuch' for the user named 'alice': Unknown command or category name in ACL"},
			{"user alice on ~* ~x\n", ">>> 'user alice on ~* ~x'\nError in user declaration 'on': Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns"},
			{"user alice on #abc\n", ">>> 'user alice on #abc'\nError in user declaration 'alice': The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters"},
			{"user alice on (~x\n", ">>> 'user alice on (~x'\nError in user declaration 'alice': Unknown command or category name in ACL"},
			{"user\n", ">>> 'user'\nBad directive or wrong number of arguments"},
			{"aclfile users.acl\nuser alice on\n", "Configuring Redis with users defined in redis.conf and at the same setting an ACL file path is invalid. This setup is very likely to lead to configuration errors and security holes, please define either an ACL file or declare users directly in your redis.conf, but not both."},
		} {
			bdir := s.t.TempDir()
			writeFile(s.t, bdir, "users.acl", "user default on nopass ~* &* +@all\n")
			bconf := writeFile(s.t, bdir, "bad.conf", bad.conf)
			bp := s.startWith(testsupport.Options{Args: []string{bconf}, Dir: bdir, NoWait: true})
			code, exited := bp.Wait(10 * time.Second)
			label := strings.ReplaceAll(bad.conf, "\n", "; ")
			s.rec("start with "+label, fmt.Sprintf("exited %v, code %d", exited, code))
			out := bp.Output()
			s.want("message of the start with "+label, bad.want, map[bool]string{true: bad.want, false: out}[strings.Contains(out, bad.want)])
		}
	})
}

// The aclfile: the users it defines at start, ACL LOAD after the file
// changed, a bad file refused whole, ACL SAVE, and both without an aclfile.
func TestACLUsersACLFile(t *testing.T) {
	aclDiff(t, func(s *aclSide) {
		dir := s.t.TempDir()
		users := "user default on nopass ~* &* +@all\nuser alice on #" + sha256Hex("a") + " ~a:* resetchannels -@all +get\n"
		path := writeFile(s.t, dir, "users.acl", users)
		p := s.startWith(testsupport.Options{Args: []string{"--aclfile", "users.acl"}, Dir: dir})
		c := s.dial(p)
		s.do(c, "CONFIG", "GET", "aclfile")
		s.doN(c, aclRules, "ACL", "LIST")
		alice := s.aclAuth(p, "alice", "a")
		s.do(alice, "GET", "a:1")

		// The file changed: ACL LOAD replaces every user.
		writeFile(s.t, dir, "users.acl", users+"user bob on >b ~* +@all\n")
		s.doWant(c, "+OK\r\n", "ACL", "LOAD")
		s.doN(c, aclRules, "ACL", "LIST")
		s.do(c, "PING")
		alice.Send(Encode("GET", "a:1"))
		s.rec("alice after ACL LOAD", aclRead(alice, 10*time.Second))
		s.do(s.dial(p), "AUTH", "bob", "b")

		// Bad files: refused whole, the users stay.
		for _, bad := range []string{
			"user carol on +nosuch\n",
			"user default on nopass ~* &* +@all\ngarbage here\n",
			"user default on nopass ~* &* +@all\nuser carol on\nuser carol off\n",
			"user default on nopass ~* &* +@all\nuser 'q\n",
			"user default on nopass ~* &* +@all\n\n   \n# comment\nuser carol on\n",
			"user carol on\n",
		} {
			writeFile(s.t, dir, "users.acl", bad)
			s.do(c, "ACL", "LOAD")
			s.doN(c, aclRules, "ACL", "LIST")
		}
		s.do(c, "ACL", "SETUSER", "default", "on", "nopass", "~*", "&*", "+@all")
		os.Remove(path)
		s.do(c, "ACL", "LOAD")

		// ACL SAVE writes every user, one line each.
		s.do(c, "ACL", "SETUSER", "dave", "on", ">d", "%R~d:*", "&d", "-@all", "+@string", "(~x +@hash)")
		s.do(c, "ACL", "SETUSER", "erin", "off", "nopass", "skip-sanitize-payload")
		s.doWant(c, "+OK\r\n", "ACL", "SAVE")
		b, err := os.ReadFile(path)
		require.NoError(s.t, err)
		s.rec("saved file", aclRules(string(b)))
		s.do(c, "ACL", "LOAD")
		s.doN(c, aclRules, "ACL", "LIST")

		q := s.start()
		qc := s.dial(q)
		s.doWant(qc, "-ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to store users in the Redis configuration.\r\n", "ACL", "LOAD")
		s.do(qc, "ACL", "SAVE")
		s.do(qc, "CONFIG", "GET", "aclfile")
		s.rec("CONFIG SET aclfile <path>", qc.Do("CONFIG", "SET", "aclfile", filepath.Join(dir, "x.acl")))
	})
}

// requirepass is the default user's password: CONFIG SET requirepass
// changes it as ACL GETUSER default shows, and ACL SETUSER default adds to
// what AUTH accepts.
func TestACLUsersRequirepass(t *testing.T) {
	aclDiff(t, func(s *aclSide) {
		p := s.start()
		c := s.dial(p)
		s.do(c, "ACL", "GETUSER", "default")
		s.do(c, "CONFIG", "SET", "requirepass", "x")
		s.do(c, "ACL", "GETUSER", "default")
		s.do(c, "ACL", "LIST")
		n := s.dial(p)
		s.doWant(n, aclNoAuth, "PING")
		s.doWant(n, "+OK\r\n", "AUTH", "x")
		s.do(n, "ACL", "SETUSER", "default", ">y")
		for _, pw := range []string{"y", "x", "z"} {
			s.do(s.dial(p), "AUTH", pw)
			s.do(s.dial(p), "AUTH", "default", pw)
		}
		s.do(n, "CONFIG", "GET", "requirepass")
		s.do(n, "ACL", "SETUSER", "default", "resetpass", ">z")
		s.do(n, "CONFIG", "GET", "requirepass")
		s.do(s.dial(p), "AUTH", "x")
		s.do(n, "CONFIG", "SET", "requirepass", "w")
		s.do(n, "ACL", "GETUSER", "default")
		s.do(n, "CONFIG", "SET", "requirepass", "")
		s.do(n, "ACL", "GETUSER", "default")
		s.do(s.dial(p), "PING")

		q := s.startWith(testsupport.Options{Args: []string{"--requirepass", "boot"}, Password: "boot"})
		qc := s.dial(q)
		s.do(qc, "AUTH", "boot")
		s.do(qc, "ACL", "LIST")
	})
}

// The passwords of ACL SETUSER, AUTH and HELLO never reach SLOWLOG or
// MONITOR.
func TestACLUsersRedaction(t *testing.T) {
	aclDiff(t, func(s *aclSide) {
		p := s.start("--slowlog-log-slower-than", "0", "--slowlog-max-len", "100")
		m := s.dial(p)
		require.Equal(s.t, "+OK\r\n", m.Do("MONITOR"))
		c := s.dial(p)
		require.Equal(s.t, "+OK\r\n", c.Do("SLOWLOG", "RESET"))
		for _, args := range [][]string{
			{"ACL", "SETUSER", "bob", "on", ">secretpw", "~*", "+@all"},
			{"ACL", "SETUSER", "bob", ">secretpw2", "<secretpw2", "#" + sha256Hex("secrethash")},
			{"ACL", "SETUSER", "bob", ">secretpw3", "+nosuch"},
			{"AUTH", "bob", "secretpw"},
			{"AUTH", "bob", "secretwrong"},
			{"HELLO", "2", "AUTH", "bob", "secretpw"},
			{"ACL", "DRYRUN", "bob", "set", "k", "secretvalue"},
			{"ACL", "GETUSER", "bob"},
			{"MULTI"},
			{"ACL", "SETUSER", "bob", ">secretmulti"},
			{"EXEC"},
		} {
			s.doN(c, aclHelloShape, args...)
		}
		entries := parseSlowlog(s.t, c.Do("SLOWLOG", "GET", "-1"))
		var got []string
		for i := len(entries) - 1; i >= 0; i-- {
			got = append(got, aclLabel(entries[i].args))
		}
		s.rec("SLOWLOG GET -1", strings.Join(got, "\n"))
		require.Equal(s.t, "$3\r\nend\r\n", c.Do("PING", "end"))
		re := regexp.MustCompile(`^\+\d+\.\d{6} \[\d+ [^\]]+\] (.*)\r\n$`)
		var lines []string
		for {
			l, err := m.ReadErr(10 * time.Second)
			require.NoError(s.t, err, "after %q", lines)
			mm := re.FindStringSubmatch(l)
			require.NotNil(s.t, mm, l)
			if mm[1] == `"PING" "end"` {
				break
			}
			lines = append(lines, mm[1])
		}
		s.rec("MONITOR", strings.Join(lines, "\n"))
		all := strings.Join(got, "\n") + strings.Join(lines, "\n")
		assert.NotContains(s.t, all, "secretpw", "%s: a password reached SLOWLOG or MONITOR", s.name)
		assert.NotContains(s.t, all, "secretmulti", "%s: a password reached SLOWLOG or MONITOR", s.name)
	})
}

// INFO: redis-server 7.0.15 has no acl_access_denied_auth/_cmd/_key/
// _channel fields (nor any other acl* field) in any section; after denials
// of every kind zredis shows none either.
func TestACLUsersInfoStats(t *testing.T) {
	aclDiff(t, func(s *aclSide) {
		p := s.start()
		admin := s.dial(p)
		admin.Do("ACL", "SETUSER", "u", "on", ">p", "-@all", "+get", "+publish", "~k", "&c")
		u := s.aclAuth(p, "u", "p")
		u.Do("SET", "k", "v")
		u.Do("GET", "x")
		u.Do("PUBLISH", "x", "m")
		u.Do("AUTH", "u", "wrong")
		var fields []string
		for _, l := range strings.Split(admin.Do("INFO", "everything"), "\r\n") {
			if strings.HasPrefix(l, "acl") {
				fields = append(fields, l)
			}
		}
		s.want("INFO acl* fields", "", strings.Join(fields, "\n"))
	})
}

// laterCommandRule is a rule naming a command later than 7.0 (the hash
// field expiration of 7.4 and 8.0), which zredis serves and so describes
// in ACL GETUSER and LIST where redis-server 7.0 has nothing to say.
var laterCommandRule = regexp.MustCompile(` [+-](hexpire|hpexpire|hexpireat|hpexpireat|httl|hpttl|hexpiretime|hpexpiretime|hpersist|hgetex|hsetex|hgetdel)\b`)

// withoutLaterCommands removes those rules from the bulk strings of a
// raw RESP reply, fixing their lengths.
func withoutLaterCommands(raw string) string {
	var b strings.Builder
	for len(raw) > 0 {
		i := strings.Index(raw, "$")
		if i < 0 {
			b.WriteString(raw)
			break
		}
		b.WriteString(raw[:i])
		raw = raw[i:]
		head, rest, ok := strings.Cut(raw, "\r\n")
		n, err := strconv.Atoi(head[1:])
		if !ok || err != nil || n < 0 || len(rest) < n+2 {
			b.WriteString(raw)
			break
		}
		body := laterCommandRule.ReplaceAllString(rest[:n], "")
		b.WriteString("$" + strconv.Itoa(len(body)) + "\r\n" + body + "\r\n")
		raw = rest[n+2:]
	}
	return b.String()
}
