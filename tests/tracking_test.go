package tests

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Client-side caching against a real redis-server: the same scenario
// runs on a fresh zredis and a fresh redis-server, and every reply and
// every invalidation (pushed in RESP3, or sent to a redirect's
// connection in RESP2) must be the same, client IDs aside.

// trackingSession runs a scenario's steps on one server, recording what
// each connection received.
type trackingSession struct {
	t     *testing.T
	p     *Proc
	conns map[string]*Conn
	log   []string
}

func newTrackingSession(t *testing.T, p *Proc) *trackingSession {
	return &trackingSession{t: t, p: p, conns: map[string]*Conn{}}
}

// conn is the session's connection called name, opened on first use.
func (s *trackingSession) conn(name string) *Conn {
	c := s.conns[name]
	if c == nil {
		c = Dial(s.t, s.p.Addr)
		s.conns[name] = c
	}
	return c
}

// do sends a command on name's connection and records its reply with
// the pushes that came before it.
func (s *trackingSession) do(name string, args ...string) string {
	s.t.Helper()
	c := s.conn(name)
	r := c.Do(args...)
	for last := r; strings.HasPrefix(last, ">") && !strings.HasPrefix(args[0], "SUBSCRIBE"); {
		last = c.Read()
		r += last
	}
	s.log = append(s.log, name+" "+strings.Join(args, " ")+" -> "+r)
	return r
}

// drain records what name's connection received unasked (pushes,
// messages) within a short wait, for the steps where nothing follows.
func (s *trackingSession) drain(name string) {
	s.t.Helper()
	var got []string
	for {
		r, err := s.conn(name).ReadErr(200 * time.Millisecond)
		if err != nil {
			break
		}
		got = append(got, r)
	}
	s.log = append(s.log, name+" received "+strings.Join(got, ""))
}

// id is name's client ID.
func (s *trackingSession) id(name string) string {
	return strings.Trim(s.conn(name).Do("CLIENT", "ID"), ":\r\n")
}

var trackingIDs = regexp.MustCompile(`(redirect\r\n:|tracking-redir-broken\r\n:|redir=|REDIRECT |ID )\d+`)

// fields records only the lines or fields of a reply that hold one of
// names (INFO's tracking counts, CLIENT LIST's flags and redir).
func (s *trackingSession) fields(name string, names []string, args ...string) {
	s.t.Helper()
	r := s.conn(name).Do(args...)
	var kept []string
	for _, f := range strings.FieldsFunc(r, func(c rune) bool { return c == ' ' || c == '\r' || c == '\n' }) {
		for _, n := range names {
			if strings.HasPrefix(f, n) {
				kept = append(kept, f)
			}
		}
	}
	s.log = append(s.log, name+" "+strings.Join(args, " ")+" -> "+strings.Join(kept, " "))
}

var (
	trackingInfo  = []string{"tracking_"}
	trackingFlags = []string{"flags=", "redir="}
)

// trackingDiff runs scenario on both servers and compares the logs.
func trackingDiff(t *testing.T, args []string, scenario func(s *trackingSession)) {
	t.Helper()
	z := newTrackingSession(t, StartZredis(t, args...))
	r := newTrackingSession(t, StartRedis(t, args...))
	scenario(z)
	scenario(r)
	require.Equal(t, len(r.log), len(z.log))
	if os.Getenv("ZREDIS_TEST_SHOWLOG") != "" {
		t.Log(strings.Join(z.log, "\n"))
	}
	for i := range z.log {
		zl, rl := trackingIDs.ReplaceAllString(z.log[i], "${1}N"), trackingIDs.ReplaceAllString(r.log[i], "${1}N")
		diffCases.Add(1)
		assert.Equal(t, rl, zl, "step %d", i)
	}
}

// The default mode over RESP3: reads remember keys, any change of them
// (SET, DEL, EXPIRE, MSET, a write of the client itself) is pushed once;
// FLUSHALL and FLUSHDB push a null; CLIENT TRACKINGINFO, GETREDIR and
// INFO's counts follow.
func TestTrackingDefaultResp3(t *testing.T) {
	trackingDiff(t, nil, func(s *trackingSession) {
		s.conn("a").Do("HELLO", "3")
		s.do("a", "CLIENT", "TRACKING", "on")
		s.do("a", "GET", "k1")
		s.do("a", "MGET", "k2", "k3")
		s.do("a", "HGET", "h", "f")
		s.do("w", "SET", "k1", "v")
		s.do("w", "SET", "k1", "again") // forgotten after the first change
		s.do("a", "PING")
		s.do("w", "MSET", "k2", "1", "k3", "2")
		s.do("w", "HSET", "h", "f", "1")
		s.do("a", "PING")
		s.do("a", "GET", "k1")
		s.do("w", "DEL", "k1")
		s.do("a", "GET", "k2")
		s.do("w", "EXPIRE", "k2", "100")
		s.do("a", "PING")
		s.do("a", "SET", "k4", "x")
		s.do("a", "GET", "k4")
		s.do("a", "SET", "k4", "y") // its own write: pushed after the reply
		s.do("a", "CLIENT", "TRACKINGINFO")
		s.do("a", "CLIENT", "GETREDIR")
		s.fields("w", trackingInfo, "INFO")
		s.do("a", "GET", "k5")
		s.do("w", "FLUSHALL")
		s.do("a", "PING")
		s.do("a", "GET", "k6")
		s.do("w", "FLUSHDB")
		s.do("a", "PING")
		s.do("a", "CLIENT", "TRACKING", "off")
		s.do("a", "CLIENT", "TRACKINGINFO")
		s.do("a", "CLIENT", "GETREDIR")
	})
}

// Expiry and eviction invalidate as any change does.
func TestTrackingExpiryEviction(t *testing.T) {
	trackingDiff(t, []string{"--maxmemory-policy", "allkeys-random"}, func(s *trackingSession) {
		s.conn("a").Do("HELLO", "3")
		s.do("a", "CLIENT", "TRACKING", "on")
		s.do("w", "SET", "e1", "v", "PX", "100")
		s.do("a", "GET", "e1")
		time.Sleep(400 * time.Millisecond) // active expiry
		s.drain("a")
		s.do("w", "SET", "e2", "v", "PX", "1")
		time.Sleep(20 * time.Millisecond)
		s.do("a", "GET", "e2") // lazy expiry: the read itself removes it
		s.do("a", "PING")
		s.conn("w").Do("SET", "big", strings.Repeat("x", 4<<20))
		s.do("a", "STRLEN", "big")
		s.conn("w").Do("CONFIG", "SET", "maxmemory", "1")
		s.conn("w").Do("SET", "other", "v") // evicts, then refused or not
		s.conn("w").Do("CONFIG", "SET", "maxmemory", "0")
		s.do("a", "PING")
	})
}

// BCAST with prefixes, NOLOOP, OPTIN/OPTOUT with CLIENT CACHING, and the
// errors of conflicting options.
func TestTrackingModes(t *testing.T) {
	trackingDiff(t, nil, func(s *trackingSession) {
		s.conn("a").Do("HELLO", "3")
		s.do("a", "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "a", "PREFIX", "b")
		s.do("w", "SET", "a1", "1")
		s.do("w", "SET", "b1", "1")
		s.do("w", "SET", "c1", "1")
		s.do("a", "PING")
		s.do("a", "CLIENT", "TRACKINGINFO")
		s.fields("w", trackingInfo, "INFO")
		s.do("a", "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "ab")
		s.do("a", "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "x", "PREFIX", "xy")
		s.do("a", "CLIENT", "TRACKING", "on")
		s.do("a", "CLIENT", "TRACKING", "off")
		s.do("a", "CLIENT", "TRACKING", "on", "BCAST", "NOLOOP")
		s.do("a", "SET", "own", "1")
		s.do("w", "SET", "theirs", "1")
		s.do("a", "PING")
		s.do("a", "CLIENT", "TRACKING", "off")
		s.do("a", "CLIENT", "TRACKING", "on", "OPTIN")
		s.do("a", "GET", "x1")
		s.do("a", "CLIENT", "CACHING", "yes")
		s.do("a", "GET", "x2")
		s.do("a", "GET", "x3") // CACHING held for one command only
		s.do("w", "MSET", "x1", "1", "x2", "1", "x3", "1")
		s.do("a", "PING")
		s.do("a", "CLIENT", "CACHING", "no")
		s.do("a", "CLIENT", "TRACKING", "on", "OPTOUT")
		s.do("a", "CLIENT", "TRACKING", "off")
		s.do("a", "CLIENT", "TRACKING", "on", "OPTOUT")
		s.do("a", "CLIENT", "CACHING", "no")
		s.do("a", "GET", "y1")
		s.do("a", "GET", "y2")
		s.do("w", "MSET", "y1", "1", "y2", "1")
		s.do("a", "PING")
		s.do("a", "CLIENT", "TRACKINGINFO")
		s.do("a", "CLIENT", "TRACKING", "off")
		s.do("a", "CLIENT", "TRACKING", "on", "NOLOOP")
		s.do("a", "GET", "n1")
		s.do("a", "SET", "n1", "z")
		s.do("a", "PING")
		for _, bad := range [][]string{
			{"CLIENT", "TRACKING", "on", "PREFIX", "x"},
			{"CLIENT", "TRACKING", "on", "REDIRECT", "999999"},
			{"CLIENT", "TRACKING", "on", "REDIRECT", "x"},
			{"CLIENT", "TRACKING", "on", "OPTIN", "OPTOUT"},
			{"CLIENT", "TRACKING", "on", "BCAST", "OPTIN"},
			{"CLIENT", "TRACKING", "maybe"},
			{"CLIENT", "TRACKING", "on", "foo"},
			{"CLIENT", "TRACKING"},
			{"CLIENT", "CACHING", "maybe"},
			{"CLIENT", "CACHING"},
		} {
			s.do("a", bad...)
		}
		s.do("a", "RESET")
		s.do("a", "CLIENT", "TRACKINGINFO")
	})
}

// A RESP2 client redirects its invalidations to a subscriber of
// __redis__:invalidate; when the redirect's connection is gone the flag
// says so.
func TestTrackingRedirectResp2(t *testing.T) {
	trackingDiff(t, nil, func(s *trackingSession) {
		rid := s.id("r")
		s.do("r", "SUBSCRIBE", "__redis__:invalidate")
		s.do("c", "CLIENT", "TRACKING", "on", "REDIRECT", rid)
		s.fields("c", trackingFlags, "CLIENT", "LIST", "ID", s.id("c"))
		s.do("c", "GET", "r1")
		s.do("w", "SET", "r1", "1")
		s.drain("r")
		s.do("c", "GET", "r2")
		s.do("w", "FLUSHALL")
		s.drain("r")
		s.conn("r").Close()
		time.Sleep(100 * time.Millisecond)
		s.do("c", "GET", "r3")
		s.do("w", "SET", "r3", "1")
		s.do("c", "CLIENT", "TRACKINGINFO")
		// A RESP3 client whose redirect is gone is told so.
		s.conn("d").Do("HELLO", "3")
		rid = s.id("gone")
		s.do("d", "CLIENT", "TRACKING", "on", "REDIRECT", rid)
		s.conn("gone").Close()
		time.Sleep(100 * time.Millisecond)
		s.do("d", "GET", "r4")
		s.do("w", "SET", "r4", "1")
		s.do("d", "PING")
		s.fields("d", trackingFlags, "CLIENT", "INFO")
	})
}
