package engine

import (
	"sort"
	"strconv"
	"strings"

	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/keyspace"
)

// Client-side caching (Redis 7.0 tracking.c): the server remembers which
// clients may hold which keys, and tells them when a key changes.
//
// In the default mode a tracking client's read-only commands record
// their keys in the tracking table (key -> client IDs); the first change
// of such a key (any write, expiry, eviction) sends each of them an
// invalidation and forgets the entry, so one read earns one message. In
// BCAST mode nothing is recorded: every change of a key under one of the
// client's prefixes is collected, and the keys changed are sent to the
// prefix's clients together (Broadcast), each time a connection releases
// the keyspace lock and on the cron tick, where Redis sends them once per
// event loop cycle. FLUSHDB, FLUSHALL and
// SWAPDB send every tracking client a null invalidation and empty the
// table.
//
// An invalidation is a RESP3 push ["invalidate", [key...]]; a client may
// instead redirect its invalidations to another connection, which gets
// them as pushes in RESP3 or, subscribed in RESP2, as messages of the
// __redis__:invalidate channel. Messages leave through the server's
// delivery function, the one Pub/Sub uses, so they are written after the
// reply of the command being run, as trackingHandlePendingKeyInvalidations
// orders them. Everything here runs under the keyspace lock.

// ClientTracking is one client's tracking state (the CLIENT_TRACKING_*
// flags, client_tracking_redirection and client_tracking_prefixes).
type ClientTracking struct {
	On, BCast, OptIn, OptOut, NoLoop bool
	// Caching is CLIENT CACHING's yes (OPTIN) or no (OPTOUT), for the
	// next command or transaction.
	Caching bool
	// BrokenRedir: the client redirect named is gone.
	BrokenRedir bool
	Redirect    int64
	Prefixes    []string // BCAST's, in byte order
}

// Tracking is the server's registry: the tracking table, the prefixes
// of the BCAST clients, and the INFO counts.
type Tracking struct {
	keys     map[string]map[int64]struct{} // TrackingTable
	items    int                           // TrackingTableTotalItems
	prefixes map[string]*bcastState        // PrefixTable
	clients  map[*Client]struct{}          // the clients with tracking on
	// bcastDue: some prefix collected a changed key since Broadcast.
	bcastDue bool
	maxKeys  int64 // tracking-table-max-keys
	evictRun int   // timeout_counter of trackingLimitUsedSlots

	// current is the client whose command is being processed
	// (server.current_client): NOLOOP clients hear nothing of their own
	// changes. executing: its command runs (Redis's fixed_time_expire),
	// so a message for it waits for the reply; before that (an eviction
	// the command set off) the message goes ahead of the reply.
	current   *Client
	executing bool

	lookup  func(id int64) *Client
	deliver func(cl *Client, frame []byte)
	onFirst func() // the first client turned tracking on
	frame   []byte // scratch: the keys of an invalidation
	msg     []byte // scratch: the message (deliver copies it)
}

// bcastState is one prefix's clients and the keys changed under it since
// the last broadcast, each with the client that changed it last.
type bcastState struct {
	clients map[*Client]struct{}
	keys    map[string]*Client
}

// NewTracking makes the registry. lookup finds a client by ID (a
// redirect's target); deliver hands a frame to a client's connection as
// Pub/Sub messages go (a RESP3 client gets an array as a push, '>' for
// its first byte); onFirst
// runs when the first client turns tracking on, for the server to start
// telling the registry of changes (keyspace.SetTracker).
func NewTracking(cfg *config.Config, lookup func(id int64) *Client, deliver func(cl *Client, frame []byte), onFirst func()) *Tracking {
	t := &Tracking{
		keys: map[string]map[int64]struct{}{}, prefixes: map[string]*bcastState{}, clients: map[*Client]struct{}{},
		lookup: lookup, deliver: deliver, onFirst: onFirst,
	}
	t.maxKeys = cfg.Int("tracking-table-max-keys")
	cfg.OnChange("tracking-table-max-keys", func(string) error {
		t.maxKeys = cfg.Int("tracking-table-max-keys")
		return nil
	})
	return t
}

// Clients is tracking_clients.
func (t *Tracking) Clients() int { return len(t.clients) }

// Keys, Items and Prefixes are tracking_total_keys, _items, _prefixes.
func (t *Tracking) Keys() int     { return len(t.keys) }
func (t *Tracking) Items() int    { return t.items }
func (t *Tracking) Prefixes() int { return len(t.prefixes) }

// FlushFreed is what emptying the tracking table on a FLUSHALL or
// FLUSHDB ASYNC adds to lazyfreed_objects (freeTrackingRadixTreeAsync):
// its keys, when its rax has more nodes than LAZYFREE_THRESHOLD. Call it
// before the flush empties the table.
func (t *Tracking) FlushFreed() int {
	const threshold = keyspace.LazyfreeThreshold
	n := len(t.keys)
	if n > threshold {
		return n // a node where each key ends, the root besides
	}
	if n == 0 {
		return 0
	}
	keys := make([]string, 0, n)
	for k := range t.keys {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if raxNodes(keys, 0) > threshold {
		return n
	}
	return 0
}

// raxNodes is the number of nodes of the rax below a node for the
// prefix of length d of keys (sorted, distinct, all with that prefix), as
// rax builds it: the node itself, then one compressed node for a run
// every key below shares, or a node per distinct next byte where they
// part; a key ends at a node of its own.
func raxNodes(keys []string, d int) int {
	if len(keys[0]) == d {
		keys = keys[1:] // the key ending here marks this node
	}
	if len(keys) == 0 {
		return 1
	}
	first, last := keys[0], keys[len(keys)-1]
	l := d
	for l < len(first) && l < len(last) && first[l] == last[l] {
		l++
	}
	if l > d {
		return 1 + raxNodes(keys, l)
	}
	n := 1
	for i := 0; i < len(keys); {
		j := i + 1
		for j < len(keys) && keys[j][d] == keys[i][d] {
			j++
		}
		n += raxNodes(keys[i:j], d+1)
		i = j
	}
	return n
}

// PrefixCollision is checkPrefixCollisionsOrReply: the error for a
// prefix of prefixes that overlaps one cl has or another of prefixes,
// or "".
func (t *Tracking) PrefixCollision(cl *Client, prefixes []string) string {
	overlap := func(a, b string) bool { return strings.HasPrefix(a, b) || strings.HasPrefix(b, a) }
	for i, p := range prefixes {
		if ct := cl.Tracking; ct != nil {
			for _, have := range ct.Prefixes {
				if overlap(have, p) {
					return "ERR Prefix '" + p + "' overlaps with an existing prefix '" + have + "'. Prefixes for a single client must not overlap."
				}
			}
		}
		for _, q := range prefixes[i+1:] {
			if overlap(p, q) {
				return "ERR Prefix '" + p + "' overlaps with another provided prefix '" + q + "'. Prefixes for a single client must not overlap."
			}
		}
	}
	return ""
}

// Enable is enableTracking: cl tracks, redirecting to redirect (0:
// none), in the mode of opts (its On is ignored), under prefixes for
// BCAST (none: every key).
func (t *Tracking) Enable(cl *Client, redirect int64, opts ClientTracking, prefixes []string) {
	ct := cl.Tracking
	if ct == nil {
		ct = &ClientTracking{}
		cl.Tracking = ct
	}
	if !ct.On && len(t.clients) == 0 && t.onFirst != nil {
		t.onFirst()
		t.onFirst = nil
	}
	t.clients[cl] = struct{}{}
	ct.On = true
	ct.BrokenRedir, ct.BCast, ct.OptIn, ct.OptOut, ct.NoLoop = false, false, false, false, false
	ct.Redirect = redirect
	if opts.BCast {
		ct.BCast = true
		if len(prefixes) == 0 {
			prefixes = []string{""}
		}
		for _, p := range prefixes {
			t.addPrefix(cl, p)
		}
	}
	ct.OptIn, ct.OptOut, ct.NoLoop = opts.OptIn, opts.OptOut, opts.NoLoop
}

func (t *Tracking) addPrefix(cl *Client, p string) {
	bs := t.prefixes[p]
	if bs == nil {
		bs = &bcastState{clients: map[*Client]struct{}{}, keys: map[string]*Client{}}
		t.prefixes[p] = bs
	}
	if _, ok := bs.clients[cl]; ok {
		return
	}
	bs.clients[cl] = struct{}{}
	ct := cl.Tracking
	i := sort.SearchStrings(ct.Prefixes, p)
	ct.Prefixes = append(ct.Prefixes, "")
	copy(ct.Prefixes[i+1:], ct.Prefixes[i:])
	ct.Prefixes[i] = p
}

// Disable is disableTracking: CLIENT TRACKING OFF, RESET, the client's
// end. The keys it read stay in the table until they change, as in
// Redis: an invalidation for a client that is gone is skipped then.
func (t *Tracking) Disable(cl *Client) {
	ct := cl.Tracking
	if ct == nil || !ct.On {
		return
	}
	for _, p := range ct.Prefixes {
		bs := t.prefixes[p]
		delete(bs.clients, cl)
		if len(bs.clients) == 0 {
			delete(t.prefixes, p)
		}
	}
	delete(t.clients, cl)
	*ct = ClientTracking{}
}

// AfterCommand is call()'s part: after a read-only command (not EVAL_RO,
// EVALSHA_RO or FCALL_RO themselves), the keys it read are remembered for
// the client that sent it, unless its mode and CLIENT CACHING say
// otherwise. For a command a script ran, callerCtx is the script's
// command: its client tracks, and the keys the script declared are the
// ones remembered (trackingRememberKeys(caller)).
func (t *Tracking) AfterCommand(c *Ctx, callerCtx *Ctx) {
	caller := callerCtx.Client
	ct := caller.Tracking
	if ct == nil || !ct.On || ct.BCast || c.Cmd.Flags&ReadOnly == 0 {
		return
	}
	switch c.Cmd.Name {
	case "eval_ro", "evalsha_ro", "fcall_ro":
		return
	}
	if ct.OptIn && !ct.Caching || ct.OptOut && ct.Caching {
		return
	}
	cmd, args := callerCtx.Cmd, callerCtx.Args
	if cmd.Flags&PubSub != 0 {
		return
	}
	for _, pos := range cmd.KeyPositions(args) {
		key := string(args[pos])
		ids := t.keys[key]
		if ids == nil {
			ids = map[int64]struct{}{}
			t.keys[key] = ids
		}
		if _, ok := ids[caller.ID]; !ok {
			ids[caller.ID] = struct{}{}
			t.items++
		}
	}
}

// KeyModified is trackingInvalidateKey (keyspace.Tracker): the key's
// trackers are told and forgotten, and the BCAST prefixes it falls under
// collect it.
func (t *Tracking) KeyModified(key []byte) { t.invalidate(string(key), true) }

func (t *Tracking) invalidate(key string, bcast bool) {
	if bcast && len(t.prefixes) != 0 {
		for p, bs := range t.prefixes {
			if strings.HasPrefix(key, p) {
				bs.keys[key] = t.current
				t.bcastDue = true
			}
		}
	}
	ids := t.keys[key]
	if ids == nil {
		return
	}
	for id := range ids {
		target := t.lookup(id)
		if target == nil || target.Tracking == nil || !target.Tracking.On || target.Tracking.BCast {
			continue
		}
		if target.Tracking.NoLoop && target == t.current {
			continue
		}
		t.send(target, appendKeys(t.frame[:0], key))
	}
	t.items -= len(ids)
	delete(t.keys, key)
}

// Flushed is trackingInvalidateKeysOnFlush (keyspace.Tracker): every
// tracking client gets a null invalidation, and the table is emptied.
func (t *Tracking) Flushed() {
	for cl := range t.clients {
		null := "$-1\r\n"
		if cl.W.Proto() == 3 {
			null = "_\r\n"
		}
		t.send(cl, append(t.frame[:0], null...))
	}
	clear(t.keys)
	t.items = 0
}

// Broadcast sends the keys changed under each prefix to its BCAST
// clients (trackingBroadcastInvalidationMessages); a NOLOOP client does
// not hear of the keys it changed itself. The server calls it at the end
// of every execution unit.
func (t *Tracking) Broadcast() {
	if !t.bcastDue {
		return
	}
	t.bcastDue = false
	names := make([]string, 0, len(t.prefixes))
	for p, bs := range t.prefixes {
		if len(bs.keys) != 0 {
			names = append(names, p)
		}
	}
	sort.Strings(names)
	for _, p := range names {
		bs := t.prefixes[p]
		keys := make([]string, 0, len(bs.keys))
		for k := range bs.keys {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		all := appendKeyList(nil, keys, bs.keys, nil)
		for cl := range bs.clients {
			if cl.Tracking.NoLoop {
				if own := appendKeyList(nil, keys, bs.keys, cl); own != nil {
					t.send(cl, own)
				}
				continue
			}
			t.send(cl, all)
		}
		clear(bs.keys)
	}
}

// appendKeyList appends the array of keys changed by anyone but except
// (nil: everyone); nil when there are none.
func appendKeyList(b []byte, keys []string, by map[string]*Client, except *Client) []byte {
	n := 0
	for _, k := range keys {
		if except == nil || by[k] != except {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, '\r', '\n')
	for _, k := range keys {
		if except == nil || by[k] != except {
			b = appendBulk(b, k)
		}
	}
	return b
}

// appendKeys appends the one-key array of an invalidation.
func appendKeys(b []byte, key string) []byte {
	b = append(b, "*1\r\n"...)
	return appendBulk(b, key)
}

// send is sendTrackingMessage: keys (an encoded array, or a null) to cl,
// or to the client it redirects to.
func (t *Tracking) send(cl *Client, keys []byte) {
	target, redirected := cl, false
	if id := cl.Tracking.Redirect; id != 0 {
		target = t.lookup(id)
		if target == nil {
			cl.Tracking.BrokenRedir = true
			if cl.W.Proto() == 3 {
				b := append(t.frame[:0], "*2\r\n$21\r\ntracking-redir-broken\r\n:"...)
				b = strconv.AppendInt(b, id, 10)
				t.frame = append(b, '\r', '\n')
				t.deliver(cl, t.frame)
			}
			return
		}
		redirected = true
	}
	switch {
	case target.W.Proto() == 3:
		t.msg = append(t.msg[:0], ">2\r\n$10\r\ninvalidate\r\n"...)
	case redirected && target.Subscribed():
		t.msg = append(t.msg[:0], "*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n"...)
	default:
		// RESP2 without a redirect: nothing can carry the message.
		return
	}
	t.msg = append(t.msg, keys...)
	if target == t.current && !t.executing {
		// Redis writes it to the client's buffer at once: ahead of the
		// reply of the command about to run.
		target.W.Raw(t.msg)
		if target.ReplyOff || target.ReplySkip {
			target.Pushed = append(target.Pushed, t.msg...)
		}
		return
	}
	t.deliver(target, t.msg)
}

// LimitKeys is trackingLimitUsedSlots: while the table holds more keys
// than tracking-table-max-keys, keys picked at random are invalidated, a
// bounded effort per call that grows while the table stays over.
func (t *Tracking) LimitKeys() {
	if t.maxKeys == 0 || int64(len(t.keys)) <= t.maxKeys {
		t.evictRun = 0
		return
	}
	effort := 100 * (t.evictRun + 1)
	for key := range t.keys { // Go's map order is the random walk
		if effort == 0 {
			break
		}
		effort--
		t.invalidate(key, false)
		if int64(len(t.keys)) <= t.maxKeys {
			t.evictRun = 0
			return
		}
	}
	t.evictRun++
}

// Lookup is the client of id, nil when there is none (CLIENT TRACKING
// REDIRECT's check).
func (t *Tracking) Lookup(id int64) *Client { return t.lookup(id) }
