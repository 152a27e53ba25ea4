package commands

import (
	"strconv"
	"unsafe"

	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/sds"
)

// Pub/Sub commands (Redis pubsub.c). The registry of subscriptions is a
// PubSub the server owns (Server.PubSub); like everything else a command
// touches it lives under the keyspace lock. Messages for another client
// leave through the PubSub's deliver function, which the server
// implements without writing to a socket under the lock.
func init() {
	const sub = PubSub | NoScript | Loading | Stale
	const info = PubSub | Loading | Stale
	register(
		&Command{Name: "subscribe", Arity: -2, Flags: sub, Group: "pubsub", Run: subscribeCommand},
		&Command{Name: "unsubscribe", Arity: -1, Flags: sub, Group: "pubsub", Run: unsubscribeCommand},
		&Command{Name: "psubscribe", Arity: -2, Flags: sub, Group: "pubsub", Run: psubscribeCommand},
		&Command{Name: "punsubscribe", Arity: -1, Flags: sub, Group: "pubsub", Run: punsubscribeCommand},
		&Command{Name: "publish", Arity: 3, Flags: info | Fast, Group: "pubsub", Run: publishCommand},
		&Command{Name: "ssubscribe", Arity: -2, Flags: sub, FirstKey: 1, LastKey: -1, KeyStep: 1, Group: "pubsub", Run: ssubscribeCommand},
		&Command{Name: "sunsubscribe", Arity: -1, Flags: sub, FirstKey: 1, LastKey: -1, KeyStep: 1, Group: "pubsub", Run: sunsubscribeCommand},
		&Command{Name: "spublish", Arity: 3, Flags: info | Fast, FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "pubsub", Run: spublishCommand},

		&Command{Name: "pubsub", Arity: -2, Group: "pubsub"},
		&Command{Name: "pubsub|channels", Arity: -2, Flags: info, Run: pubsubChannelsCommand},
		&Command{Name: "pubsub|numsub", Arity: -2, Flags: info, Run: pubsubNumsubCommand},
		&Command{Name: "pubsub|numpat", Arity: 2, Flags: info, Run: pubsubNumpatCommand},
		&Command{Name: "pubsub|shardchannels", Arity: -2, Flags: info, Run: pubsubShardchannelsCommand},
		&Command{Name: "pubsub|shardnumsub", Arity: -2, Flags: info, Run: pubsubShardnumsubCommand},
		&Command{Name: "pubsub|help", Arity: 2, Flags: Loading | Stale, Run: pubsubHelpCommand},
	)
	// RESET leaves every subscription, as clearClientConnectionState does.
	onReset(func(c *Ctx) { c.Srv.PubSub().Release(c.Client) })
}

// errSubscribedContext is processCommand's answer, in RESP2's subscribed
// mode, to a command other than those allowedSubscribed lists.
func errSubscribedContext(name string) string {
	return "ERR Can't execute '" + name + "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context"
}

// allowedSubscribed reports whether a RESP2 client with subscriptions may
// run cmd.
func allowedSubscribed(cmd *Command) bool {
	switch cmd.Name {
	case "ping", "subscribe", "ssubscribe", "unsubscribe", "sunsubscribe",
		"psubscribe", "punsubscribe", "quit", "reset":
		return true
	}
	return false
}

// subscribed reports whether cl is in Pub/Sub mode (CLIENT_PUBSUB).
func subscribed(cl *Client) bool { return cl.Subs+cl.PSubs+cl.SSubs > 0 }

// ---- the registry -----------------------------------------------------------

// Subscriptions is the registry of channel, pattern and shard-channel
// subscriptions, and the keyspace-notification switch. All its methods
// run with the keyspace lock held.
type Subscriptions struct {
	channels map[string]*orderedSet[*Client] // channel -> subscribers in subscription order
	shards   map[string]*orderedSet[*Client] // shard channel -> subscribers
	patterns map[string]*orderedSet[*Client] // pattern -> subscribers
	// patternOrder lists the patterns with subscribers in the order they
	// got their first one: PUBLISH matches them in this order.
	patternOrder orderedSet[string]
	clients      map[*Client]*clientSubs

	// events is notify-keyspace-events as the OR of config.Notify*
	// classes, cached so that Notify costs one load and a test when
	// notifications are off.
	events int

	stats   *ServerStats
	deliver func(cl *Client, frame []byte)

	frame []byte // scratch: the frame being published
	chann []byte // scratch: the channel of a keyspace event
}

// clientSubs is what one client is subscribed to, in subscription order.
type clientSubs struct {
	channels, patterns, shards orderedSet[string]
}

// NewPubSub makes the registry of a server. deliver hands a complete
// RESP frame to another client's connection: it is called under the
// keyspace lock, must copy frame (the registry reuses it) and must not
// block or call back into the registry. cfg's notify-keyspace-events is
// read now and on every CONFIG SET; stats receives the pubsub_* counts.
func NewPubSub(cfg *config.Config, stats *ServerStats, deliver func(cl *Client, frame []byte)) *Subscriptions {
	ps := &Subscriptions{
		channels: map[string]*orderedSet[*Client]{},
		shards:   map[string]*orderedSet[*Client]{},
		patterns: map[string]*orderedSet[*Client]{},
		clients:  map[*Client]*clientSubs{},
		stats:    stats,
		deliver:  deliver,
	}
	ps.events = int(cfg.Int("notify-keyspace-events"))
	cfg.OnChange("notify-keyspace-events", func(string) error {
		ps.events = int(cfg.Int("notify-keyspace-events"))
		return nil
	})
	return ps
}

// subsOf returns cl's subscriptions, creating the record when create is
// set; nil when cl has none and create is not set.
func (ps *Subscriptions) subsOf(cl *Client, create bool) *clientSubs {
	s := ps.clients[cl]
	if s == nil && create {
		s = &clientSubs{}
		ps.clients[cl] = s
	}
	return s
}

// forget drops cl's record once it has no subscription left, so that a
// client leaves no trace.
func (ps *Subscriptions) forget(cl *Client, s *clientSubs) {
	if s.channels.Len()+s.patterns.Len()+s.shards.Len() == 0 {
		delete(ps.clients, cl)
	}
}

func (ps *Subscriptions) updateStats() {
	ps.stats.PubSubChannels = int64(len(ps.channels))
	ps.stats.PubSubPatterns = int64(len(ps.patterns))
	ps.stats.PubSubShardChannels = int64(len(ps.shards))
}

// addSubscriber adds cl to the subscribers of name in index, reporting
// whether the index gained a new name.
func addSubscriber(index map[string]*orderedSet[*Client], name string, cl *Client) bool {
	set := index[name]
	fresh := set == nil
	if fresh {
		set = &orderedSet[*Client]{}
		index[name] = set
	}
	set.Add(cl)
	return fresh
}

// removeSubscriber removes cl from the subscribers of name, reporting
// whether name has none left (and left the index).
func removeSubscriber(index map[string]*orderedSet[*Client], name string, cl *Client) bool {
	set := index[name]
	if set == nil {
		return false
	}
	set.Remove(cl)
	if set.Len() == 0 {
		delete(index, name)
		return true
	}
	return false
}

// subscribeChannel subscribes cl to a channel (a shard channel for
// SSUBSCRIBE), reporting whether it was not subscribed yet.
func (ps *Subscriptions) subscribeChannel(cl *Client, ch []byte, shard bool) bool {
	s := ps.subsOf(cl, true)
	mine, index, count := &s.channels, ps.channels, &cl.Subs
	if shard {
		mine, index, count = &s.shards, ps.shards, &cl.SSubs
	}
	if !mine.Add(string(ch)) {
		return false
	}
	addSubscriber(index, mine.Last(), cl)
	*count++
	ps.updateStats()
	return true
}

// unsubscribeChannel removes cl's subscription to a channel, reporting
// whether there was one.
func (ps *Subscriptions) unsubscribeChannel(cl *Client, ch string, shard bool) bool {
	s := ps.subsOf(cl, false)
	if s == nil {
		return false
	}
	mine, index, count := &s.channels, ps.channels, &cl.Subs
	if shard {
		mine, index, count = &s.shards, ps.shards, &cl.SSubs
	}
	if !mine.Remove(ch) {
		return false
	}
	removeSubscriber(index, ch, cl)
	*count--
	ps.forget(cl, s)
	ps.updateStats()
	return true
}

// subscribePattern subscribes cl to a pattern, reporting whether it was
// not subscribed yet.
func (ps *Subscriptions) subscribePattern(cl *Client, pat []byte) bool {
	s := ps.subsOf(cl, true)
	if !s.patterns.Add(string(pat)) {
		return false
	}
	name := s.patterns.Last()
	if addSubscriber(ps.patterns, name, cl) {
		ps.patternOrder.Add(name)
	}
	cl.PSubs++
	ps.updateStats()
	return true
}

// unsubscribePattern removes cl's subscription to a pattern, reporting
// whether there was one.
func (ps *Subscriptions) unsubscribePattern(cl *Client, pat string) bool {
	s := ps.subsOf(cl, false)
	if s == nil || !s.patterns.Remove(pat) {
		return false
	}
	if removeSubscriber(ps.patterns, pat, cl) {
		ps.patternOrder.Remove(pat)
	}
	cl.PSubs--
	ps.forget(cl, s)
	ps.updateStats()
	return true
}

// Release removes every subscription of cl, without replies: the client
// is gone, or sent RESET. For a client without subscriptions it is one
// map lookup.
func (ps *Subscriptions) Release(cl *Client) {
	s := ps.clients[cl]
	if s == nil {
		return
	}
	for _, ch := range s.channels.Keys() {
		ps.unsubscribeChannel(cl, ch, false)
	}
	for _, ch := range s.shards.Keys() {
		ps.unsubscribeChannel(cl, ch, true)
	}
	for _, p := range s.patterns.Keys() {
		ps.unsubscribePattern(cl, p)
	}
	delete(ps.clients, cl)
}

// Publish sends msg to the subscribers of channel and to those of every
// pattern that matches it (a client subscribed through several gets it
// once per subscription), and returns how many messages it handed out.
// Channel subscribers come first, in subscription order, then the
// patterns in the order they were first subscribed to.
func (ps *Subscriptions) Publish(channel, msg []byte) int {
	return ps.publish(channel, msg, false)
}

// publish is Publish, or SPUBLISH's delivery to the subscribers of a
// shard channel (no patterns) when shard is set.
func (ps *Subscriptions) publish(channel, msg []byte, shard bool) int {
	receivers := 0
	index, kind := ps.channels, "message"
	if shard {
		index, kind = ps.shards, "smessage"
	}
	if subs := index[string(channel)]; subs != nil {
		ps.frame = appendMessage(ps.frame[:0], kind, channel, msg)
		for n := subs.head; n != nil; n = n.next {
			ps.deliver(n.key, ps.frame)
			receivers++
		}
	}
	if shard {
		return receivers
	}
	for p := ps.patternOrder.head; p != nil; p = p.next {
		pat := p.key
		if !sds.Match(stringBytes(pat), channel, false) {
			continue
		}
		ps.frame = appendPMessage(ps.frame[:0], pat, channel, msg)
		for n := ps.patterns[pat].head; n != nil; n = n.next {
			ps.deliver(n.key, ps.frame)
			receivers++
		}
	}
	return receivers
}

// stringBytes views s as bytes without copying, for the matcher, which
// only reads them.
func stringBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// appendMessage appends the frame [kind, channel, msg].
func appendMessage(b []byte, kind string, channel, msg []byte) []byte {
	b = append(b, "*3\r\n"...)
	b = appendBulk(b, kind)
	b = appendBulk(b, channel)
	return appendBulk(b, msg)
}

// appendPMessage appends the frame ["pmessage", pattern, channel, msg].
func appendPMessage(b []byte, pattern string, channel, msg []byte) []byte {
	b = append(b, "*4\r\n$8\r\npmessage\r\n"...)
	b = appendBulk(b, pattern)
	b = appendBulk(b, channel)
	return appendBulk(b, msg)
}

func appendBulk[S string | []byte](b []byte, s S) []byte {
	b = append(b, '$')
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, '\r', '\n')
	b = append(b, s...)
	return append(b, '\r', '\n')
}

// ---- SUBSCRIBE UNSUBSCRIBE PSUBSCRIBE PUNSUBSCRIBE ------------------------

// replySubscription writes one confirmation [kind, name, count]; with
// null, name is the null bulk string (an unsubscribe from everything when
// there was nothing to leave).
func replySubscription(c *Ctx, kind string, name []byte, null bool, count int) {
	c.W.Array(3)
	c.W.BulkString(kind)
	if null {
		c.W.Null()
	} else {
		c.W.Bulk(name)
	}
	c.W.Int(int64(count))
}

// subKind is what SUBSCRIBE, PSUBSCRIBE and SSUBSCRIBE (and their
// UNSUBSCRIBE) differ in: the names in their confirmations, the set of
// the client's subscriptions they change, and the count the
// confirmations carry.
type subKind struct {
	sub, unsub string
	add        func(ps *Subscriptions, cl *Client, name []byte)
	remove     func(ps *Subscriptions, cl *Client, name string)
	names      func(s *clientSubs) []string
	count      func(cl *Client) int
}

// Channels and patterns count together in confirmations, shard channels
// apart.
var (
	channelKind = subKind{
		sub: "subscribe", unsub: "unsubscribe",
		add:    func(ps *Subscriptions, cl *Client, ch []byte) { ps.subscribeChannel(cl, ch, false) },
		remove: func(ps *Subscriptions, cl *Client, ch string) { ps.unsubscribeChannel(cl, ch, false) },
		names:  func(s *clientSubs) []string { return s.channels.Keys() },
		count:  func(cl *Client) int { return cl.Subs + cl.PSubs },
	}
	patternKind = subKind{
		sub: "psubscribe", unsub: "punsubscribe",
		add:    func(ps *Subscriptions, cl *Client, p []byte) { ps.subscribePattern(cl, p) },
		remove: func(ps *Subscriptions, cl *Client, p string) { ps.unsubscribePattern(cl, p) },
		names:  func(s *clientSubs) []string { return s.patterns.Keys() },
		count:  channelKind.count,
	}
	shardKind = subKind{
		sub: "ssubscribe", unsub: "sunsubscribe",
		add:    func(ps *Subscriptions, cl *Client, ch []byte) { ps.subscribeChannel(cl, ch, true) },
		remove: func(ps *Subscriptions, cl *Client, ch string) { ps.unsubscribeChannel(cl, ch, true) },
		names:  func(s *clientSubs) []string { return s.shards.Keys() },
		count:  func(cl *Client) int { return cl.SSubs },
	}
)

// subscribe is (P|S)SUBSCRIBE name [name ...]: one confirmation per
// argument, with the client's count after it.
func subscribe(c *Ctx, k *subKind) {
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
func unsubscribe(c *Ctx, k *subKind) {
	ps := c.Srv.PubSub()
	cl := c.Client
	if len(c.Args) > 1 {
		for _, name := range c.Args[1:] {
			k.remove(ps, cl, string(name))
			replySubscription(c, k.unsub, name, false, k.count(cl))
		}
		return
	}
	var names []string
	if s := ps.subsOf(cl, false); s != nil {
		names = k.names(s)
	}
	for _, name := range names {
		k.remove(ps, cl, name)
		replySubscription(c, k.unsub, []byte(name), false, k.count(cl))
	}
	if len(names) == 0 {
		replySubscription(c, k.unsub, nil, true, k.count(cl))
	}
}

func subscribeCommand(c *Ctx)    { subscribe(c, &channelKind) }
func unsubscribeCommand(c *Ctx)  { unsubscribe(c, &channelKind) }
func psubscribeCommand(c *Ctx)   { subscribe(c, &patternKind) }
func punsubscribeCommand(c *Ctx) { unsubscribe(c, &patternKind) }

// ---- SSUBSCRIBE SUNSUBSCRIBE ------------------------------------------------

// Shard channels behave as in Redis 7.0 without cluster: a namespace of
// their own, counted apart from channels and patterns, never matched by
// patterns.

// errSsubscribeDenyBlocking answers SSUBSCRIBE inside a transaction: EXEC
// runs its commands as a client that may not block, and unlike
// SUBSCRIBE, 7.0's SSUBSCRIBE makes no exception for it.
const errSsubscribeDenyBlocking = "ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client"

func ssubscribeCommand(c *Ctx) {
	if c.Client.InMulti {
		c.Error(errSsubscribeDenyBlocking)
		return
	}
	subscribe(c, &shardKind)
}

func sunsubscribeCommand(c *Ctx) { unsubscribe(c, &shardKind) }

// ---- PUBLISH SPUBLISH -------------------------------------------------------

// publishCommand is PUBLISH channel message: the number of messages
// handed out.
func publishCommand(c *Ctx) {
	c.W.Int(int64(c.Srv.PubSub().Publish(c.Args[1], c.Args[2])))
}

func spublishCommand(c *Ctx) {
	c.W.Int(int64(c.Srv.PubSub().publish(c.Args[1], c.Args[2], true)))
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

func pubsubHelpCommand(c *Ctx) { replyHelp(c, pubsubHelpLines) }

// channelList answers PUBSUB CHANNELS / SHARDCHANNELS [pattern]: the
// channels with at least one subscriber that match pattern, in no
// particular order. More than one pattern is the container's syntax
// error, as in Redis.
func channelList(c *Ctx, index map[string]*orderedSet[*Client]) {
	if len(c.Args) > 3 {
		c.Error(ErrSubcommandSyntax(string(c.Args[1]), "PUBSUB"))
		return
	}
	var pattern []byte
	if len(c.Args) == 3 {
		pattern = c.Args[2]
	}
	mark := c.W.DeferArray()
	n := 0
	for ch := range index {
		if pattern == nil || sds.MatchString(pattern, ch, false) {
			c.W.BulkString(ch)
			n++
		}
	}
	c.W.FillArray(mark, n)
}

// subscriberCounts answers PUBSUB NUMSUB / SHARDNUMSUB: channel, count
// pairs in one flat array.
func subscriberCounts(c *Ctx, index map[string]*orderedSet[*Client]) {
	c.W.Array(2 * (len(c.Args) - 2))
	for _, ch := range c.Args[2:] {
		c.W.Bulk(ch)
		n := 0
		if set := index[string(ch)]; set != nil {
			n = set.Len()
		}
		c.W.Int(int64(n))
	}
}

func pubsubChannelsCommand(c *Ctx)      { channelList(c, c.Srv.PubSub().channels) }
func pubsubShardchannelsCommand(c *Ctx) { channelList(c, c.Srv.PubSub().shards) }
func pubsubNumsubCommand(c *Ctx)        { subscriberCounts(c, c.Srv.PubSub().channels) }
func pubsubShardnumsubCommand(c *Ctx)   { subscriberCounts(c, c.Srv.PubSub().shards) }

// pubsubNumpatCommand answers the number of distinct patterns with
// subscribers (7.0 counts patterns, not pattern subscriptions).
func pubsubNumpatCommand(c *Ctx) { c.W.Int(int64(len(c.Srv.PubSub().patterns))) }

// ---- insertion-ordered set ------------------------------------------------

// orderedSet is a set that iterates in insertion order, with O(1) add,
// remove and membership: subscriber lists and a client's subscriptions.
// The zero value is an empty set.
type orderedSet[K comparable] struct {
	nodes      map[K]*orderedNode[K]
	head, tail *orderedNode[K]
}

type orderedNode[K comparable] struct {
	key        K
	prev, next *orderedNode[K]
}

// Add appends k, reporting false when it was already present.
func (s *orderedSet[K]) Add(k K) bool {
	if _, ok := s.nodes[k]; ok {
		return false
	}
	if s.nodes == nil {
		s.nodes = map[K]*orderedNode[K]{}
	}
	n := &orderedNode[K]{key: k, prev: s.tail}
	if s.tail != nil {
		s.tail.next = n
	} else {
		s.head = n
	}
	s.tail = n
	s.nodes[k] = n
	return true
}

// Last is the key added last; the set must not be empty.
func (s *orderedSet[K]) Last() K { return s.tail.key }

// Remove removes k, reporting whether it was present.
func (s *orderedSet[K]) Remove(k K) bool {
	n, ok := s.nodes[k]
	if !ok {
		return false
	}
	delete(s.nodes, k)
	if n.prev != nil {
		n.prev.next = n.next
	} else {
		s.head = n.next
	}
	if n.next != nil {
		n.next.prev = n.prev
	} else {
		s.tail = n.prev
	}
	return true
}

// Len is the number of keys.
func (s *orderedSet[K]) Len() int { return len(s.nodes) }

// Keys lists the keys in insertion order, as a copy the caller may
// remove them from while walking it.
func (s *orderedSet[K]) Keys() []K {
	out := make([]K, 0, len(s.nodes))
	for n := s.head; n != nil; n = n.next {
		out = append(out, n.key)
	}
	return out
}
