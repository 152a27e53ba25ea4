package commands

import (
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/sds"
)

// Pub/Sub commands (Redis pubsub.c). The registry of subscriptions is the
// engine's (engine.Subscriptions), which the server owns (Server.PubSub).
func init() {
	const sub = engine.PubSub | engine.NoScript | engine.Loading | engine.Stale
	const info = engine.PubSub | engine.Loading | engine.Stale
	register(
		&engine.Command{Name: "subscribe", Arity: -2, Flags: sub, Group: "pubsub", Run: subscribeCommand},
		&engine.Command{Name: "unsubscribe", Arity: -1, Flags: sub, Group: "pubsub", Run: unsubscribeCommand},
		&engine.Command{Name: "psubscribe", Arity: -2, Flags: sub, Group: "pubsub", Run: psubscribeCommand},
		&engine.Command{Name: "punsubscribe", Arity: -1, Flags: sub, Group: "pubsub", Run: punsubscribeCommand},
		&engine.Command{Name: "publish", Arity: 3, Flags: info | engine.Fast, FlagsFor: mayReplicate, Group: "pubsub", Run: publishCommand},
		&engine.Command{Name: "ssubscribe", Arity: -2, Flags: sub, FirstKey: 1, LastKey: -1, KeyStep: 1, Group: "pubsub", Run: ssubscribeCommand},
		&engine.Command{Name: "sunsubscribe", Arity: -1, Flags: sub, FirstKey: 1, LastKey: -1, KeyStep: 1, Group: "pubsub", Run: sunsubscribeCommand},
		&engine.Command{Name: "spublish", Arity: 3, Flags: info | engine.Fast, FlagsFor: mayReplicate, FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "pubsub", Run: spublishCommand},

		&engine.Command{Name: "pubsub", Arity: -2, Group: "pubsub"},
		&engine.Command{Name: "pubsub|channels", Arity: -2, Flags: info, Run: pubsubChannelsCommand},
		&engine.Command{Name: "pubsub|numsub", Arity: -2, Flags: info, Run: pubsubNumsubCommand},
		&engine.Command{Name: "pubsub|numpat", Arity: 2, Flags: info, Run: pubsubNumpatCommand},
		&engine.Command{Name: "pubsub|shardchannels", Arity: -2, Flags: info, Run: pubsubShardchannelsCommand},
		&engine.Command{Name: "pubsub|shardnumsub", Arity: -2, Flags: info, Run: pubsubShardnumsubCommand},
		&engine.Command{Name: "pubsub|help", Arity: 2, Flags: engine.Loading | engine.Stale, Run: pubsubHelpCommand},
	)
}

// ---- SUBSCRIBE UNSUBSCRIBE PSUBSCRIBE PUNSUBSCRIBE ------------------------

// replySubscription writes one confirmation [kind, name, count], a push
// in RESP3; with null, name is the null bulk string (an unsubscribe from
// everything when there was nothing to leave).
func replySubscription(c *engine.Ctx, kind string, name []byte, null bool, count int) {
	w := c.W
	start := w.Len()
	w.Push(3)
	w.BulkString(kind)
	if null {
		w.Null()
	} else {
		w.Bulk(name)
	}
	w.Int(int64(count))
	// A push, kept under CLIENT REPLY OFF|SKIP: the connection needs its
	// bytes if it drops the rest of the reply.
	if cl := c.Client; cl.ReplyOff || cl.ReplySkip {
		b := w.Bytes()
		cl.Pushed = append(cl.Pushed, b[len(b)-(w.Len()-start):]...)
	}
}

// subKind is what SUBSCRIBE, PSUBSCRIBE and SSUBSCRIBE (and their
// UNSUBSCRIBE) differ in: the names in their confirmations, the set of
// the client's subscriptions they change, and the count the
// confirmations carry.
type subKind struct {
	sub, unsub string
	add        func(ps *engine.Subscriptions, cl *engine.Client, name []byte)
	remove     func(ps *engine.Subscriptions, cl *engine.Client, name string)
	names      func(ps *engine.Subscriptions, cl *engine.Client) []string
	count      func(cl *engine.Client) int
}

// Channels and patterns count together in confirmations, shard channels
// apart.
var (
	channelKind = subKind{
		sub: "subscribe", unsub: "unsubscribe",
		add:    func(ps *engine.Subscriptions, cl *engine.Client, ch []byte) { ps.SubscribeChannel(cl, ch, false) },
		remove: func(ps *engine.Subscriptions, cl *engine.Client, ch string) { ps.UnsubscribeChannel(cl, ch, false) },
		names: func(ps *engine.Subscriptions, cl *engine.Client) []string {
			channels, _, _ := ps.SubscribedTo(cl)
			return channels
		},
		count: func(cl *engine.Client) int { return cl.Subs + cl.PSubs },
	}
	patternKind = subKind{
		sub: "psubscribe", unsub: "punsubscribe",
		add:    func(ps *engine.Subscriptions, cl *engine.Client, p []byte) { ps.SubscribePattern(cl, p) },
		remove: func(ps *engine.Subscriptions, cl *engine.Client, p string) { ps.UnsubscribePattern(cl, p) },
		names: func(ps *engine.Subscriptions, cl *engine.Client) []string {
			_, patterns, _ := ps.SubscribedTo(cl)
			return patterns
		},
		count: channelKind.count,
	}
	shardKind = subKind{
		sub: "ssubscribe", unsub: "sunsubscribe",
		add:    func(ps *engine.Subscriptions, cl *engine.Client, ch []byte) { ps.SubscribeChannel(cl, ch, true) },
		remove: func(ps *engine.Subscriptions, cl *engine.Client, ch string) { ps.UnsubscribeChannel(cl, ch, true) },
		names: func(ps *engine.Subscriptions, cl *engine.Client) []string {
			_, _, shards := ps.SubscribedTo(cl)
			return shards
		},
		count: func(cl *engine.Client) int { return cl.SSubs },
	}
)

// subscribe is (P|S)SUBSCRIBE name [name ...]: one confirmation per
// argument, with the client's count after it.
func subscribe(c *engine.Ctx, k *subKind) {
	ps := c.Srv.PubSub()
	cl := c.Client
	for _, name := range c.Args[1:] {
		k.add(ps, cl, name)
		replySubscription(c, k.sub, name, false, k.count(cl))
	}
}

// unsubscribe is (P|S)UNSUBSCRIBE [name ...]: one confirmation per
// argument, subscribed or not; without arguments, one per name left, or
// a single one with a null name when there was none.
func unsubscribe(c *engine.Ctx, k *subKind) {
	ps := c.Srv.PubSub()
	cl := c.Client
	if len(c.Args) > 1 {
		for _, name := range c.Args[1:] {
			k.remove(ps, cl, string(name))
			replySubscription(c, k.unsub, name, false, k.count(cl))
		}
		return
	}
	names := k.names(ps, cl)
	for _, name := range names {
		k.remove(ps, cl, name)
		replySubscription(c, k.unsub, []byte(name), false, k.count(cl))
	}
	if len(names) == 0 {
		replySubscription(c, k.unsub, nil, true, k.count(cl))
	}
}

func subscribeCommand(c *engine.Ctx)    { subscribe(c, &channelKind) }
func unsubscribeCommand(c *engine.Ctx)  { unsubscribe(c, &channelKind) }
func psubscribeCommand(c *engine.Ctx)   { subscribe(c, &patternKind) }
func punsubscribeCommand(c *engine.Ctx) { unsubscribe(c, &patternKind) }

// ---- SSUBSCRIBE SUNSUBSCRIBE ------------------------------------------------

// Shard channels behave as in Redis 7.0 without cluster: a namespace of
// their own, counted apart from channels and patterns, never matched by
// patterns.

func ssubscribeCommand(c *engine.Ctx) {
	if c.Client.InMulti {
		c.Error(engine.ErrSsubscribeDenyBlocking)
		return
	}
	subscribe(c, &shardKind)
}

func sunsubscribeCommand(c *engine.Ctx) { unsubscribe(c, &shardKind) }

// ---- PUBLISH SPUBLISH -------------------------------------------------------

// publishCommand is PUBLISH channel message: the number of messages
// handed out here. The command goes to replicas (not to the AOF), which
// hand it to their own subscribers (forceCommandPropagation(c,
// PROPAGATE_REPL) outside cluster mode).
func publishCommand(c *engine.Ctx) {
	n := c.Srv.PubSub().Publish(c.Args[1], c.Args[2])
	propagatePublish(c, false)
	c.W.Int(int64(n))
}

// propagatePublish sends a published message on: in cluster mode to the
// other nodes over the bus (to those of this node's shard for SPUBLISH),
// instead of through the replication stream.
func propagatePublish(c *engine.Ctx, shard bool) {
	if st := c.D.Cluster; st != nil {
		st.Publish(c.Args[1], c.Args[2], shard)
		return
	}
	c.ForceReplicaPropagation()
}

// spublishCommand is SPUBLISH shardchannel message, propagated as
// PUBLISH is.
func spublishCommand(c *engine.Ctx) {
	n := c.Srv.PubSub().PublishShard(c.Args[1], c.Args[2])
	propagatePublish(c, true)
	c.W.Int(int64(n))
}

// ---- PUBSUB -----------------------------------------------------------------

var pubsubHelpLines = []string{
	"CHANNELS [<pattern>]",
	"    Return the currently active channels matching a <pattern> (default: '*').",
	"NUMPAT",
	"    Return number of subscriptions to patterns.",
	"NUMSUB [<channel> ...]",
	"    Return the number of subscribers for the specified channels, excluding",
	"    pattern subscriptions(default: no channels).",
	"SHARDCHANNELS [<pattern>]",
	"    Return the currently active shard level channels matching a <pattern> (default: '*').",
	"SHARDNUMSUB [<shardchannel> ...]",
	"    Return the number of subscribers for the specified shard level channel(s)",
}

func pubsubHelpCommand(c *engine.Ctx) { c.ReplyHelp(pubsubHelpLines) }

// channelList answers PUBSUB CHANNELS / SHARDCHANNELS [pattern]: the
// channels with at least one subscriber that match pattern, in no
// particular order. More than one pattern is the container's syntax
// error, as in Redis.
func channelList(c *engine.Ctx, shard bool) {
	if len(c.Args) > 3 {
		c.Error(engine.ErrSubcommandSyntax(string(c.Args[1]), "PUBSUB"))
		return
	}
	var pattern []byte
	if len(c.Args) == 3 {
		pattern = c.Args[2]
	}
	mark := c.W.DeferArray()
	n := 0
	for _, ch := range c.Srv.PubSub().Channels(shard) {
		if pattern == nil || sds.MatchString(pattern, ch, false) {
			c.W.BulkString(ch)
			n++
		}
	}
	c.W.FillArray(mark, n)
}

// subscriberCounts answers PUBSUB NUMSUB / SHARDNUMSUB: channel, count
// pairs in one flat array.
func subscriberCounts(c *engine.Ctx, shard bool) {
	ps := c.Srv.PubSub()
	c.W.Array(2 * (len(c.Args) - 2))
	for _, ch := range c.Args[2:] {
		c.W.Bulk(ch)
		c.W.Int(int64(ps.NumSub(ch, shard)))
	}
}

func pubsubChannelsCommand(c *engine.Ctx)      { channelList(c, false) }
func pubsubShardchannelsCommand(c *engine.Ctx) { channelList(c, true) }
func pubsubNumsubCommand(c *engine.Ctx)        { subscriberCounts(c, false) }
func pubsubShardnumsubCommand(c *engine.Ctx)   { subscriberCounts(c, true) }

// pubsubNumpatCommand answers the number of distinct patterns with
// subscribers (7.0 counts patterns, not pattern subscriptions).
func pubsubNumpatCommand(c *engine.Ctx) { c.W.Int(int64(c.Srv.PubSub().NumPat())) }
