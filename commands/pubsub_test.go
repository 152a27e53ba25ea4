package commands

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/resp"
)

// The fake server of the unit tests gets a registry of its own; what it
// delivers to a client is recorded, in order, for pushed to return.
var fakePubSubs struct {
	sync.Mutex
	m map[*fakeServer]*engine.Subscriptions
}

var pushedFrames struct {
	sync.Mutex
	m map[*engine.Client][]string
}

func (s *fakeServer) PubSub() *engine.Subscriptions {
	fakePubSubs.Lock()
	defer fakePubSubs.Unlock()
	if fakePubSubs.m == nil {
		fakePubSubs.m = map[*fakeServer]*engine.Subscriptions{}
	}
	ps := fakePubSubs.m[s]
	if ps == nil {
		ps = engine.NewPubSub(s.cfg, &s.stats, func(cl *engine.Client, frame []byte) {
			pushedFrames.Lock()
			defer pushedFrames.Unlock()
			if pushedFrames.m == nil {
				pushedFrames.m = map[*engine.Client][]string{}
			}
			pushedFrames.m[cl] = append(pushedFrames.m[cl], string(frame))
		})
		fakePubSubs.m[s] = ps
	}
	return ps
}

// pushed returns and forgets the frames delivered to cl.
func pushed(cl *engine.Client) []string {
	pushedFrames.Lock()
	defer pushedFrames.Unlock()
	out := pushedFrames.m[cl]
	delete(pushedFrames.m, cl)
	return out
}

// addClient connects another authenticated RESP2 client to the test
// environment.
func (e *testEnv) addClient(id int64) *engine.Client {
	cl := &engine.Client{ID: id, Addr: "127.0.0.1:5000" + string(rune('0'+id)), W: resp.NewWriter(), Authed: true}
	e.Srv.clients = append(e.Srv.clients, cl)
	return cl
}

// runAs runs one command as cl and returns its raw reply.
func (e *testEnv) runAs(cl *engine.Client, args ...string) string {
	e.t.Helper()
	main := e.Client
	e.Client = cl
	defer func() { e.Client = main }()
	return e.run(args...)
}

func message(ch, msg string) string { return replyBulks("message", ch, msg) }
func pmessage(pat, ch, msg string) string {
	return replyBulks("pmessage", pat, ch, msg)
}
func confirm(kind, name string, n int64) string {
	return replyArray(replyBulk(kind), replyBulk(name), replyInt(n))
}

func TestPubSubSubscribeReplies(t *testing.T) {
	runSteps(t, []step{
		{argv("UNSUBSCRIBE"), replyArray(replyBulk("unsubscribe"), replyNull, replyInt(0))},
		{argv("PUNSUBSCRIBE"), replyArray(replyBulk("punsubscribe"), replyNull, replyInt(0))},
		{argv("SUNSUBSCRIBE"), replyArray(replyBulk("sunsubscribe"), replyNull, replyInt(0))},
		{argv("SUBSCRIBE", "a", "b", "a"), confirm("subscribe", "a", 1) + confirm("subscribe", "b", 2) + confirm("subscribe", "a", 2)},
		{argv("PSUBSCRIBE", "p*"), confirm("psubscribe", "p*", 3)},
		{argv("SSUBSCRIBE", "s"), confirm("ssubscribe", "s", 1)},
		{argv("PING"), replyBulks("pong", "")},
		{argv("PING", "x"), replyBulks("pong", "x")},
		{argv("GET", "k"), replyErr(subscribedContextText("get"))},
		{argv("CLIENT", "ID"), replyErr(subscribedContextText("client|id"))},
		{argv("UNSUBSCRIBE", "a", "zz"), confirm("unsubscribe", "a", 2) + confirm("unsubscribe", "zz", 2)},
		{argv("UNSUBSCRIBE"), confirm("unsubscribe", "b", 1)},
		{argv("UNSUBSCRIBE"), replyArray(replyBulk("unsubscribe"), replyNull, replyInt(1))},
		{argv("PUNSUBSCRIBE"), confirm("punsubscribe", "p*", 0)},
		{argv("GET", "k"), replyErr(subscribedContextText("get"))},
		{argv("SUNSUBSCRIBE"), confirm("sunsubscribe", "s", 0)},
		{argv("GET", "k"), replyNull},
		{argv("PUBSUB", "NUMPAT"), replyInt(0)},
	})
}

func TestPubSubPublishDelivers(t *testing.T) {
	e := newTestEnv(t)
	s1, s2 := e.addClient(2), e.addClient(3)
	e.runAs(s1, "PSUBSCRIBE", "n*")
	e.runAs(s1, "SUBSCRIBE", "news")
	e.runAs(s2, "PSUBSCRIBE", "*s", "n*")
	e.runAs(s2, "SUBSCRIBE", "news")

	// Channel subscribers first, in subscription order; then each pattern
	// in the order it got its first subscriber, its subscribers in order.
	require.Equal(t, replyInt(5), e.run("PUBLISH", "news", "hi"))
	assert.Equal(t, []string{message("news", "hi"), pmessage("n*", "news", "hi")}, pushed(s1))
	assert.Equal(t, []string{message("news", "hi"), pmessage("n*", "news", "hi"), pmessage("*s", "news", "hi")}, pushed(s2))

	require.Equal(t, replyInt(0), e.run("PUBLISH", "other", "x"))
	require.Equal(t, replyInt(2), e.run("PUBLISH", "nope", "x"))
	assert.Equal(t, []string{pmessage("n*", "nope", "x")}, pushed(s1))
	assert.Equal(t, []string{pmessage("n*", "nope", "x")}, pushed(s2))

	// Shard channels are a namespace of their own, never matched by patterns.
	e.runAs(s1, "SSUBSCRIBE", "news")
	require.Equal(t, replyInt(1), e.run("SPUBLISH", "news", "s"))
	assert.Equal(t, []string{replyBulks("smessage", "news", "s")}, pushed(s1))
	assert.Empty(t, pushed(s2))

	assert.Equal(t, replyArray(replyBulk("news"), replyInt(2), replyBulk("x"), replyInt(0)), e.run("PUBSUB", "NUMSUB", "news", "x"))
	assert.Equal(t, replyArray(replyBulk("news"), replyInt(1)), e.run("PUBSUB", "SHARDNUMSUB", "news"))
	assert.Equal(t, replyInt(2), e.run("PUBSUB", "NUMPAT"))
	assert.Equal(t, replyBulks("news"), e.run("PUBSUB", "CHANNELS", "n*"))
	assert.Equal(t, replyBulks(), e.run("PUBSUB", "CHANNELS", "x*"))
	assert.Equal(t, replyBulks("news"), e.run("PUBSUB", "SHARDCHANNELS"))
	assert.Equal(t, int64(1), e.Srv.stats.PubSubChannels)
	assert.Equal(t, int64(2), e.Srv.stats.PubSubPatterns)
	assert.Equal(t, int64(1), e.Srv.stats.PubSubShardChannels)
}

// TestPubSubReleaseLeavesNoTrace: a client that leaves (or sends RESET)
// is in no index any more, and the counts drop.
func TestPubSubReleaseLeavesNoTrace(t *testing.T) {
	e := newTestEnv(t)
	s1, s2 := e.addClient(2), e.addClient(3)
	e.runAs(s1, "SUBSCRIBE", "a", "b")
	e.runAs(s1, "PSUBSCRIBE", "p*", "q*")
	e.runAs(s1, "SSUBSCRIBE", "s")
	e.runAs(s2, "SUBSCRIBE", "a")
	e.runAs(s2, "PSUBSCRIBE", "p*")
	ps := e.Srv.PubSub()

	e.KS.Exec(func() { ps.Release(s1) })
	assert.Equal(t, 0, s1.Subs+s1.PSubs+s1.SSubs)
	assert.Equal(t, replyInt(1), e.run("PUBLISH", "a", "x")) // s2 through a; p* does not match
	assert.Empty(t, pushed(s1))
	assert.Len(t, pushed(s2), 1)
	assert.Equal(t, replyInt(1), e.run("PUBSUB", "NUMPAT"))
	assert.Equal(t, replyBulks("a"), e.run("PUBSUB", "CHANNELS"))

	require.Equal(t, replySimple("RESET"), e.runAs(s2, "RESET"))
	assert.True(t, ps.Empty())
	assert.Equal(t, engine.ServerStats{}.PubSubChannels, e.Srv.stats.PubSubChannels)
	assert.Zero(t, e.Srv.stats.PubSubPatterns+e.Srv.stats.PubSubShardChannels)
	assert.Equal(t, replyInt(0), e.run("PUBLISH", "a", "x"))
}

func TestPubSubInMulti(t *testing.T) {
	runSteps(t, []step{
		{argv("MULTI"), replyOK},
		{argv("SUBSCRIBE", "a"), replySimple("QUEUED")},
		{argv("SSUBSCRIBE", "a"), replySimple("QUEUED")},
		{argv("EXEC"), replyArray(confirm("subscribe", "a", 1), replyErr(engine.ErrSsubscribeDenyBlocking))},
		{argv("MULTI"), replyErr(subscribedContextText("multi"))},
	})
}

func TestPubSubHelpAndErrors(t *testing.T) {
	e := runSteps(t, []step{
		{argv("PUBSUB", "CHANNELS", "a", "b"), replyErr("ERR unknown subcommand or wrong number of arguments for 'CHANNELS'. Try PUBSUB HELP.")},
		{argv("PUBSUB", "NUMPAT", "x"), replyErr(engine.ErrWrongArgs("pubsub|numpat"))},
		{argv("PUBLISH", "a"), replyErr(engine.ErrWrongArgs("publish"))},
	})
	help := e.run("PUBSUB", "HELP")
	assert.Contains(t, help, "*14\r\n+PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n")
	assert.Contains(t, help, "+NUMSUB [<channel> ...]\r\n")
}

// subscribedContextText is redis-server 7.0's reply to a command not
// allowed in RESP2's subscribed mode, written out so that a change of
// ErrSubscribedContext's text fails the tests above.
func subscribedContextText(name string) string {
	return "ERR Can't execute '" + name + "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context"
}
