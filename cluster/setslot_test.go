package cluster

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	nameMe      = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	nameOther   = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	nameReplica = "cccccccccccccccccccccccccccccccccccccccc"
)

// loadedState is a node (not started) read from a nodes.conf holding
// conf, and the file's path.
func loadedState(t *testing.T, conf string) (*State, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "nodes.conf")
	require.NoError(t, os.WriteFile(path, []byte(conf), 0o644))
	st, err := New(Options{ConfigFile: path, BindIP: "127.0.0.1", Port: 7000, BusPort: 17000})
	require.NoError(t, err)
	return st, path
}

// SETSLOT's refusals that need a cluster of several nodes, and its
// changes: the routing republished and nodes.conf written (with 7.0's
// [slot->-id] and [slot-<-id] marks) before it returns; SETSLOT NODE to
// itself of a slot it imported takes a new config epoch; a forgotten
// node's migrations end.
func TestSetSlot(t *testing.T) {
	st, path := loadedState(t, nameMe+" 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-100\n"+
		nameOther+" 127.0.0.1:7001@17001 master - 0 0 2 connected 101-200\n"+
		nameReplica+" 127.0.0.1:7002@17002 slave "+nameOther+" 0 0 2 connected\n"+
		"vars currentEpoch 2 lastVoteEpoch 0\n")
	file := func() string {
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		return string(b)
	}

	assert.Equal(t, "Target node is not a master", st.SetSlot(5, SetSlotMigrating, []byte(nameReplica), 0))
	assert.Equal(t, "Target node is not a master", st.SetSlot(150, SetSlotImporting, []byte(nameReplica), 0))
	assert.Equal(t, "Target node is not a master", st.SetSlot(5, SetSlotNode, []byte(nameReplica), 0))
	assert.Equal(t, "I'm not the owner of hash slot 150", st.SetSlot(150, SetSlotMigrating, []byte(nameOther), 0))
	assert.Equal(t, "I'm already the owner of hash slot 5", st.SetSlot(5, SetSlotImporting, []byte(nameOther), 0))
	assert.Equal(t, "Invalid or out of range slot", st.SetSlot(-1, SetSlotStable, nil, 0))
	assert.Equal(t, "Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP", st.SetSlot(5, SetSlotInvalid, nil, 0))
	assert.Equal(t, "Can't assign hashslot 5 to a different node while I still hold keys for this hash slot.",
		st.SetSlot(5, SetSlotNode, []byte(nameOther), 3))

	require.Equal(t, "", st.SetSlot(5, SetSlotMigrating, []byte(nameOther), 3))
	require.Equal(t, "", st.SetSlot(150, SetSlotImporting, []byte(nameOther), 0))
	assert.Contains(t, file(), " 0-100 [5->-"+nameOther+"] [150-<-"+nameOther+"]\n")
	rt := st.Routes()
	require.NotNil(t, rt.Migrating[5])
	assert.Equal(t, nameOther, string(rt.Migrating[5].Name[:]))
	require.NotNil(t, rt.Importing[150])
	assert.Equal(t, "127.0.0.1:7001", rt.Importing[150].Addr)

	// The slot imported becomes this node's, with a config epoch no
	// other node has.
	require.Equal(t, "", st.SetSlot(150, SetSlotNode, []byte(nameMe), 0))
	conf := file()
	assert.Contains(t, conf, nameMe+" 127.0.0.1:7000@17000 myself,master - 0 0 3 connected 0-100 150 [5->-"+nameOther+"]\n")
	assert.Contains(t, conf, nameOther+" 127.0.0.1:7001@17001 master - 0 0 2 disconnected 101-149 151-200\n")
	assert.Contains(t, conf, "vars currentEpoch 3 ")
	rt = st.Routes()
	assert.Nil(t, rt.Importing[150])
	assert.True(t, rt.Owner(150).Myself)

	// The last key of a migrating slot gone, NODE ends the migration.
	require.Equal(t, "", st.SetSlot(5, SetSlotNode, []byte(nameOther), 0))
	assert.NotContains(t, file(), "[5->-")
	assert.Nil(t, st.Routes().Migrating[5])
	assert.Equal(t, nameOther, string(st.Routes().Owner(5).Name[:]))

	// STABLE, and a forgotten node, end a migration too.
	require.Equal(t, "", st.SetSlot(7, SetSlotMigrating, []byte(nameOther), 1))
	require.Equal(t, "", st.SetSlot(7, SetSlotStable, nil, 1))
	assert.NotContains(t, file(), "[7->-")
	require.Equal(t, "", st.SetSlot(7, SetSlotMigrating, []byte(nameOther), 1))
	require.Equal(t, "", st.Forget([]byte(nameOther)))
	assert.NotContains(t, file(), "[7->-")
	assert.Nil(t, st.Routes().Migrating[7])
}

// A replica refuses SETSLOT before it reads the slot.
func TestSetSlotReplica(t *testing.T) {
	st, _ := loadedState(t, nameMe+" 127.0.0.1:7000@17000 myself,slave "+nameOther+" 0 0 0 connected\n"+
		nameOther+" 127.0.0.1:7001@17001 master - 0 0 2 connected 0-16383\n")
	assert.Equal(t, "Please use SETSLOT only with masters.", st.SetSlot(-1, SetSlotStable, nil, 0))
}

// A master whose last slot SETSLOT NODE gives away becomes a replica of
// the new owner when replica migration is allowed (7.0's setslot
// branch), and stays a master without slots when it is not.
func TestSetSlotLastSlotMakesAReplica(t *testing.T) {
	conf := nameMe + " 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 5\n" +
		nameOther + " 127.0.0.1:7001@17001 master - 0 0 2 connected 6-200\n" +
		"vars currentEpoch 2 lastVoteEpoch 0\n"
	for _, allow := range []bool{true, false} {
		path := filepath.Join(t.TempDir(), "nodes.conf")
		require.NoError(t, os.WriteFile(path, []byte(conf), 0o644))
		st, err := New(Options{ConfigFile: path, BindIP: "127.0.0.1", Port: 7000, BusPort: 17000, AllowReplicaMigration: allow})
		require.NoError(t, err)
		require.Equal(t, "", st.SetSlot(5, SetSlotNode, []byte(nameOther), 0))
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		if allow {
			assert.Contains(t, string(b), nameMe+" 127.0.0.1:7000@17000 myself,slave "+nameOther+" ")
		} else {
			assert.Contains(t, string(b), nameMe+" 127.0.0.1:7000@17000 myself,master - ")
		}
	}
}
