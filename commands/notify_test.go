package commands

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/engine"
)

// listen sets notify-keyspace-events and subscribes a second client to
// every channel; the events then show up in pushed(listener).
func listen(t *testing.T, e *testEnv, flags string) *engine.Client {
	t.Helper()
	require.Equal(t, replyOK, e.run("CONFIG", "SET", "notify-keyspace-events", flags))
	l := e.addClient(9)
	e.runAs(l, "PSUBSCRIBE", "*")
	return l
}

func keyspaceMsg(db, key, event string) string {
	return pmessage("*", "__keyspace@"+db+"__:"+key, event)
}

func keyeventMsg(db, event, key string) string {
	return pmessage("*", "__keyevent@"+db+"__:"+event, key)
}

func TestNotifyChannelsAndClasses(t *testing.T) {
	for _, tc := range []struct {
		flags string
		want  []string
	}{
		{"KEA", []string{keyspaceMsg("0", "k", "set"), keyeventMsg("0", "set", "k"),
			keyspaceMsg("0", "k", "expire"), keyeventMsg("0", "expire", "k")}},
		{"K$", []string{keyspaceMsg("0", "k", "set")}},
		{"Eg", []string{keyeventMsg("0", "expire", "k")}},
		{"g$", nil}, // neither K nor E: nothing is published
		{"KE", nil}, // no class
		{"", nil},
	} {
		t.Run(tc.flags, func(t *testing.T) {
			e := newTestEnv(t)
			l := listen(t, e, tc.flags)
			e.run("SET", "k", "v", "EX", "10")
			assert.Equal(t, tc.want, pushed(l))
		})
	}
}

func TestNotifyDatabaseAndMove(t *testing.T) {
	e := newTestEnv(t)
	l := listen(t, e, "KEg")
	e.run("SELECT", "3")
	e.run("SET", "k", "v")
	e.run("MOVE", "k", "5")
	assert.Equal(t, []string{
		keyspaceMsg("3", "k", "move_from"), keyeventMsg("3", "move_from", "k"),
		keyspaceMsg("5", "k", "move_to"), keyeventMsg("5", "move_to", "k"),
	}, pushed(l))
}

func TestNotifyExpireInThePastIsDel(t *testing.T) {
	e := newTestEnv(t)
	l := listen(t, e, "Eg")
	e.run("SET", "k", "v")
	require.Equal(t, replyInt(1), e.run("EXPIRE", "k", "-1"))
	assert.Equal(t, []string{keyeventMsg("0", "del", "k")}, pushed(l))
}

// TestNotifyConfigIsCached: the class mask follows CONFIG SET at once.
func TestNotifyConfigIsCached(t *testing.T) {
	e := newTestEnv(t)
	ps := e.Srv.PubSub()
	assert.False(t, ps.Notifies(config.NotifyString))
	e.run("CONFIG", "SET", "notify-keyspace-events", "K$")
	assert.True(t, ps.Notifies(config.NotifyString))
	assert.False(t, ps.Notifies(config.NotifyGeneric))
	e.run("CONFIG", "SET", "notify-keyspace-events", "")
	assert.False(t, ps.Notifies(config.NotifyString))
}

// TestNotifyOffAllocatesNothing: with notifications off (and with them on
// but nobody subscribed) a Notify costs no allocation.
func TestNotifyOffAllocatesNothing(t *testing.T) {
	e := newTestEnv(t)
	c := &engine.Ctx{Srv: e.Srv, KS: e.KS, DB: e.KS.DB(0), Client: e.Client}
	key := []byte("some:key")
	assert.Zero(t, testing.AllocsPerRun(1000, func() { c.Notify(config.NotifyString, "set", key) }))
	e.run("CONFIG", "SET", "notify-keyspace-events", "KEA")
	assert.Zero(t, testing.AllocsPerRun(1000, func() { c.Notify(config.NotifyString, "set", key) }))
}

func BenchmarkNotifyOff(b *testing.B) {
	e := newTestEnv(b)
	c := &engine.Ctx{Srv: e.Srv, KS: e.KS, DB: e.KS.DB(0), Client: e.Client}
	key := []byte("some:key")
	b.ReportAllocs()
	for b.Loop() {
		c.Notify(config.NotifyString, "set", key)
	}
}
