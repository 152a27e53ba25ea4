package engine

import (
	"strconv"

	"github.com/zredis/zredis/config"
)

// Keyspace notifications (notify.c): a command that changes a key calls
// Notify with the event's class and Redis's event name once the change is
// made; what is published depends on notify-keyspace-events.
//
// With notify-keyspace-events empty (the default) a call is a load of a
// cached int and a test: no lookup, no allocation.

// Notify publishes a keyspace event about key in the client's database.
// class is one of config's Notify* classes.
func (c *Ctx) Notify(class int, event string, key []byte) {
	c.NotifyIn(c.DB.ID(), class, event, key)
}

// NotifyIn publishes a keyspace event about key in database db (MOVE and
// COPY ... DB notify the destination database).
func (c *Ctx) NotifyIn(db int, class int, event string, key []byte) {
	ps := c.Srv.PubSub()
	if ps.events&class == 0 {
		return
	}
	ps.notify(db, event, key)
}

// Notifies reports whether events of class are published, for a command
// that must look before it changes the key to know which events to send
// (whether a key is new, for class n).
func (c *Ctx) Notifies(class int) bool { return c.Srv.PubSub().events&class != 0 }

// Notifies reports whether events of class are published, for a caller
// that must prepare the key before calling Notify (the expired sink).
func (ps *Subscriptions) Notifies(class int) bool { return ps.events&class != 0 }

// Notify is Ctx.NotifyIn for callers outside a command (the expired
// sink). Under the keyspace lock.
func (ps *Subscriptions) Notify(db int, class int, event string, key []byte) {
	if ps.events&class == 0 {
		return
	}
	ps.notify(db, event, key)
}

// notify publishes event for key as notifyKeyspaceEvent does: on
// __keyspace@<db>__:<key> with the event as message when K is on, then on
// __keyevent@<db>__:<event> with the key as message when E is on.
func (ps *Subscriptions) notify(db int, event string, key []byte) {
	if len(ps.channels) == 0 && len(ps.patterns) == 0 {
		return // nobody listens: publishing would hand nothing out
	}
	if ps.events&config.NotifyKeyspace != 0 {
		ch := append(ps.chann[:0], "__keyspace@"...)
		ch = strconv.AppendInt(ch, int64(db), 10)
		ch = append(ch, "__:"...)
		ch = append(ch, key...)
		ps.chann = ch
		ps.Publish(ch, stringBytes(event))
	}
	if ps.events&config.NotifyKeyevent != 0 {
		ch := append(ps.chann[:0], "__keyevent@"...)
		ch = strconv.AppendInt(ch, int64(db), 10)
		ch = append(ch, "__:"...)
		ch = append(ch, event...)
		ps.chann = ch
		ps.Publish(ch, key)
	}
}
