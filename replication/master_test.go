package replication

import (
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/keyspace"
	"github.com/zredis/zredis/resp"
)

// fakeHost is a Host with connections of its own and no link.
type fakeHost struct {
	conns    map[int64]*fakeConn
	attached []engine.Propagator
	good     int64
	paused   bool
}

func (h *fakeHost) Conn(cl *engine.Client) Conn {
	if c := h.conns[cl.ID]; c != nil {
		return c
	}
	return nil
}
func (h *fakeHost) Link() (LinkStatus, bool)                      { return LinkStatus{}, false }
func (h *fakeHost) SetMaster(string, int)                         {}
func (h *fakeHost) UnsetMaster()                                  {}
func (h *fakeHost) AttachReplicas(p engine.Propagator)            { h.attached = append(h.attached, p) }
func (h *fakeHost) Detach(engine.Propagator)                      { h.attached = nil }
func (h *fakeHost) SetGoodReplicas(n int64)                       { h.good = n }
func (h *fakeHost) GoodReplicas() int64                           { return h.good }
func (h *fakeHost) SaveInfo() [][2]string                         { return nil }
func (h *fakeHost) FunctionCodes() []string                       { return nil }
func (h *fakeHost) Paused(int64) bool                             { return h.paused }
func (h *fakeHost) HoldWritesForFailover(bool)                    {}
func (h *fakeHost) ReplicaOutputLimitReached(uint64, *int64) bool { return false }
func (h *fakeHost) WriteRDB(io.Writer, *keyspace.Snapshot, []string, [][2]string) error {
	return nil
}

// fakeConn keeps what the master pushes to it.
type fakeConn struct {
	cl     *engine.Client
	pushed []byte
	done   chan struct{}
}

func (c *fakeConn) Client() *engine.Client { return c.cl }
func (c *fakeConn) Closing() bool          { return false }
func (c *fakeConn) Done() <-chan struct{}  { return c.done }
func (c *fakeConn) OverLimit() bool        { return false }
func (c *fakeConn) Push(frame []byte)      { c.pushed = append(c.pushed, frame...) }
func (c *fakeConn) CloseOverLimit()        {}
func (c *fakeConn) WriteLater([]byte)      {}
func (c *fakeConn) Send([]byte) <-chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}
func (c *fakeConn) CloseAfterFlush() {}
func (c *fakeConn) Drop()            {}
func (c *fakeConn) DisableNoDelay()  {}

type nopLog struct{}

func (nopLog) Noticef(string, ...any)  {}
func (nopLog) Warningf(string, ...any) {}

func newTestMaster(t *testing.T) (*Master, *fakeHost) {
	t.Helper()
	h := &fakeHost{conns: map[int64]*fakeConn{}}
	ks := keyspace.New(16, keyspace.SystemClock{})
	return NewMaster(h, ks, config.New(), nopLog{}, &engine.ServerStats{}), h
}

// A replica that asks to continue the history a restarted master
// resumed gets +CONTINUE with the new ID and the backlog from its
// offset, then the stream; its ACK counts for WAIT and for a shutdown.
func TestMasterPartialResyncAndStream(t *testing.T) {
	m, h := newTestMaster(t)
	m.Resume("0123456789012345678901234567890123456789", 100)
	require.Equal(t, []engine.Propagator{m}, h.attached, "a resumed stream is attached")
	oldID := m.Stream().ID2
	m.Propagate(0, [][]byte{[]byte("SET"), []byte("k"), []byte("v")})
	fed := m.Stream().Offset() - 100
	require.Positive(t, fed)

	cl := &engine.Client{ID: 7, Addr: "127.0.0.1:5000"}
	fc := &fakeConn{cl: cl, done: make(chan struct{})}
	h.conns[cl.ID] = fc
	m.SetListeningPort(cl, 6380)
	m.AddCapa(cl, "psync2")
	c := &engine.Ctx{Client: cl, W: resp.NewWriter()}
	m.Sync(c, true, oldID, 101)
	out := string(c.W.Bytes())
	assert.Equal(t, "+CONTINUE "+m.Stream().ID+"\r\n*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n", out)
	assert.True(t, cl.Replica)
	assert.Equal(t, 1, m.Count())

	m.Propagate(0, [][]byte{[]byte("DEL"), []byte("k")})
	assert.Equal(t, "*2\r\n$3\r\nDEL\r\n$1\r\nk\r\n", string(fc.pushed), "an online replica gets the stream")

	assert.False(t, m.AllAcked())
	m.Ack(cl, m.Stream().Offset(), -1)
	assert.True(t, m.AllAcked())
	assert.Equal(t, int64(1), m.countAcks(m.Stream().Offset()))

	role := &engine.Ctx{Client: &engine.Client{}, W: resp.NewWriter()}
	m.Role(role)
	assert.Contains(t, string(role.W.Bytes()), "$6\r\nmaster\r\n")
	assert.Contains(t, string(role.W.Bytes()), "$4\r\n6380\r\n")

	m.RemoveReplica(cl)
	assert.Equal(t, 0, m.Count())
	assert.Empty(t, m.conns, "the record goes with the connection")
}

// A master that never had a replica propagates nothing: no backlog, the
// offset stays 0.
func TestMasterWithoutReplicasFeedsNothing(t *testing.T) {
	m, h := newTestMaster(t)
	m.Propagate(0, [][]byte{[]byte("SET"), []byte("k"), []byte("v")})
	assert.Zero(t, m.Stream().Offset())
	assert.Nil(t, m.Stream().Backlog())
	assert.Empty(t, h.attached)
	assert.Contains(t, string(m.Info(nil)), "repl_backlog_active:0\r\n")
}

// A replica's REPLCONF declarations are kept for the connection only
// while it is one of the host's.
func TestMasterRecordsNeedAConnection(t *testing.T) {
	m, _ := newTestMaster(t)
	cl := &engine.Client{ID: 3}
	m.SetRDBFilter(cl, true)
	assert.False(t, m.FilterNeedsEOF(cl))
	assert.Empty(t, m.conns)
}

// A master whose writes are held for a cluster replica's manual failover
// (CLUSTER FAILOVER) sends no replication PING, as Redis's replicationCron
// skips it while cluster->mf_end is set and clients are paused: the PING
// would move the offset past the one the master gave its replica on the
// bus, which the replica must reach exactly before it fails over.
func TestMasterNoPingDuringClusterManualFailover(t *testing.T) {
	m, h := newTestMaster(t)
	m.Resume("0123456789012345678901234567890123456789", 100)
	cl := &engine.Client{ID: 7, Addr: "127.0.0.1:5000"}
	fc := &fakeConn{cl: cl, done: make(chan struct{})}
	h.conns[cl.ID] = fc
	m.AddCapa(cl, "psync2")
	c := &engine.Ctx{Client: cl, W: resp.NewWriter()}
	m.Sync(c, true, m.Stream().ID, 101)
	require.Equal(t, 1, m.Count())

	h.paused = true
	m.SetClusterManualFailover(true)
	before := m.Stream().Offset()
	for i := 0; i < 20; i++ { // two repl-ping-replica-period (10 s) turns
		m.Ack(cl, m.Stream().Offset(), -1)
		m.Cron(time.Now(), true)
	}
	assert.Equal(t, before, m.Stream().Offset(), "no PING while the manual failover holds writes")

	m.SetClusterManualFailover(false)
	h.paused = false
	for i := 0; i < 10; i++ {
		m.Ack(cl, m.Stream().Offset(), -1)
		m.Cron(time.Now(), true)
	}
	assert.Greater(t, m.Stream().Offset(), before, "PINGs again once it ends")
}
