package replication

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/keyspace"
)

// A master restarted from an RDB file with replication aux fields keeps
// the stream they record (RestoreInfo), and a file written then records
// it again (SaveInfo); REPLICAOF NO ONE on a master changes nothing, and
// INFO has no replica fields.
func TestLinkRestoreAndSaveInfoOnAMaster(t *testing.T) {
	h := &fakeHost{conns: map[int64]*fakeConn{}}
	ks := keyspace.New(16, keyspace.SystemClock{})
	cfg := config.New()
	stats := &engine.ServerStats{}
	m := NewMaster(h, ks, cfg, nopLog{}, stats)
	l := NewLink(nil, m, ks, nil, cfg, nopLog{}, stats, false)

	assert.Nil(t, l.SaveInfo(), "a master without a backlog has no stream to record")
	id := strings.Repeat("a", 40)
	l.RestoreInfo([][2]string{{"repl-stream-db", "3"}, {"repl-id", id}, {"repl-offset", "1234"}})
	aux := l.SaveInfo()
	require.Len(t, aux, 3)
	assert.Equal(t, [2]string{"repl-offset", "1234"}, aux[2])

	assert.Equal(t, "OK", l.ReplicaOf("", 0, "id=1 addr=x"))
	assert.False(t, l.IsReplica())
	assert.Nil(t, l.MasterClient())
	_, ok := l.Status()
	assert.False(t, ok)
	assert.Empty(t, l.AppendInfo(nil))
}
