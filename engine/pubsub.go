package engine

import (
	"strconv"
	"unsafe"

	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/sds"
)

// The Pub/Sub registry (Redis pubsub.c): who is subscribed to what, and
// the delivery of published messages. The server owns one
// (Server.PubSub); like everything else a command touches it lives under
// the keyspace lock. Messages for another client leave through the
// deliver function, which the server implements without writing to a
// socket under the lock.

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

// Subscribed reports whether cl is in Pub/Sub mode (CLIENT_PUBSUB).
func (cl *Client) Subscribed() bool { return cl.Subs+cl.PSubs+cl.SSubs > 0 }

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

// SubscribeChannel subscribes cl to a channel (a shard channel for
// SSUBSCRIBE), reporting whether it was not subscribed yet.
func (ps *Subscriptions) SubscribeChannel(cl *Client, ch []byte, shard bool) bool {
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

// UnsubscribeChannel removes cl's subscription to a channel, reporting
// whether there was one.
func (ps *Subscriptions) UnsubscribeChannel(cl *Client, ch string, shard bool) bool {
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

// SubscribePattern subscribes cl to a pattern, reporting whether it was
// not subscribed yet.
func (ps *Subscriptions) SubscribePattern(cl *Client, pat []byte) bool {
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

// UnsubscribePattern removes cl's subscription to a pattern, reporting
// whether there was one.
func (ps *Subscriptions) UnsubscribePattern(cl *Client, pat string) bool {
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
		ps.UnsubscribeChannel(cl, ch, false)
	}
	for _, ch := range s.shards.Keys() {
		ps.UnsubscribeChannel(cl, ch, true)
	}
	for _, p := range s.patterns.Keys() {
		ps.UnsubscribePattern(cl, p)
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

// PublishShard is SPUBLISH's delivery: to the subscribers of a shard
// channel, and no pattern.
func (ps *Subscriptions) PublishShard(channel, msg []byte) int {
	return ps.publish(channel, msg, true)
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

// Empty reports whether the registry holds nothing: no subscription, no
// record of a client.
func (ps *Subscriptions) Empty() bool {
	return len(ps.clients)+len(ps.channels)+len(ps.patterns)+len(ps.shards)+ps.patternOrder.Len() == 0
}

// SubscribedTo lists what cl is subscribed to, in subscription order.
func (ps *Subscriptions) SubscribedTo(cl *Client) (channels, patterns, shards []string) {
	s := ps.subsOf(cl, false)
	if s == nil {
		return nil, nil, nil
	}
	return s.channels.Keys(), s.patterns.Keys(), s.shards.Keys()
}

// Channels lists the channels (shard channels with shard) that have
// subscribers, in no particular order.
func (ps *Subscriptions) Channels(shard bool) []string {
	index := ps.channels
	if shard {
		index = ps.shards
	}
	out := make([]string, 0, len(index))
	for ch := range index {
		out = append(out, ch)
	}
	return out
}

// NumSub is the number of subscribers of a channel (a shard channel with
// shard).
func (ps *Subscriptions) NumSub(ch []byte, shard bool) int {
	index := ps.channels
	if shard {
		index = ps.shards
	}
	if set := index[string(ch)]; set != nil {
		return set.Len()
	}
	return 0
}

// NumPat is the number of distinct patterns with subscribers (7.0 counts
// patterns, not pattern subscriptions).
func (ps *Subscriptions) NumPat() int { return len(ps.patterns) }

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
