package cluster

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zredis/zredis/cluster/bus"
)

// migrationState is a node that replicates m1, beside replica r2 of m1
// and m2, a master with slots that had replicas and has none: what
// clusterHandleSlaveMigration looks at.
func migrationState(t *testing.T, barrier int, allow bool) (s *State, m1, m2 *Node) {
	t.Helper()
	s, err := New(Options{MigrationBarrier: barrier, AllowReplicaMigration: allow})
	require.NoError(t, err)
	name := func(c string) bus.Name { return nameOf(strings.Repeat(c, bus.NameLen)) }
	me := s.cfg.Myself
	me.Name = name("1") // the smallest name: the candidate
	m1 = &Node{Name: name("a"), Flags: bus.FlagMaster | bus.FlagMigrateTo, IP: "127.0.0.1", Port: 1}
	m2 = &Node{Name: name("b"), Flags: bus.FlagMaster | bus.FlagMigrateTo, IP: "127.0.0.1", Port: 2}
	r2 := &Node{Name: name("c"), Flags: bus.FlagReplica, Master: m1.Name}
	s.cfg.Nodes = append(s.cfg.Nodes, m1, m2, r2)
	s.setMaster(m1)
	for j := 0; j < 100; j++ {
		s.addSlot(m1, j)
		s.addSlot(m2, 100+j)
	}
	s.state = stateOK
	return s, m1, m2
}

// A replica of a master with two working replicas moves to the orphaned
// master, once it has been orphaned for the migration delay; not when
// its master would keep no more than cluster-migration-barrier replicas,
// nor without cluster-allow-replica-migration.
func TestReplicaMigration(t *testing.T) {
	s, m1, m2 := migrationState(t, 1, true)
	s.replicaMigrationIfNeeded()
	require.Equal(t, m1.Name, s.cfg.Myself.Master, "no migration before the delay")
	require.NotZero(t, m2.orphanedTime)
	m2.orphanedTime -= migrationDelay + 1
	s.replicaMigrationIfNeeded()
	require.Equal(t, m2.Name, s.cfg.Myself.Master)
	require.True(t, s.fo.reconnect, "the server is told its new master")
	require.NotZero(t, m2.Flags&bus.FlagMigrateTo)

	for _, c := range []struct {
		barrier int
		allow   bool
	}{{2, true}, {1, false}} {
		s, m1, m2 := migrationState(t, c.barrier, c.allow)
		s.replicaMigrationIfNeeded()
		m2.orphanedTime -= migrationDelay + 1
		s.replicaMigrationIfNeeded()
		require.Equal(t, m1.Name, s.cfg.Myself.Master, "%+v", c)
	}
}

// A master that lost its last slot to a newer configuration becomes a
// replica of the node that took it; a master that keeps slots gives up
// the keys of those it lost (clusterUpdateSlotsConfigWith).
func TestUpdateSlotsConfigDemotes(t *testing.T) {
	s, err := New(Options{AllowReplicaMigration: true})
	require.NoError(t, err)
	me := s.cfg.Myself
	me.ConfigEpoch = 1
	other := &Node{Name: nameOf(strings.Repeat("d", bus.NameLen)), Flags: bus.FlagMaster, ConfigEpoch: 2, IP: "127.0.0.1", Port: 3}
	s.cfg.Nodes = append(s.cfg.Nodes, other)
	for j := 0; j < 10; j++ {
		s.addSlot(me, j)
	}
	var some bus.Bitmap
	some.Set(3)
	s.updateSlotsConfigWith(other, 2, &some)
	require.NotZero(t, me.Flags&bus.FlagMaster)
	require.Equal(t, []int{3}, s.lostSlots)

	s.lostSlots = nil
	var all bus.Bitmap
	for j := 0; j < 10; j++ {
		all.Set(j)
	}
	s.updateSlotsConfigWith(other, 2, &all)
	require.NotZero(t, me.Flags&bus.FlagReplica)
	require.Equal(t, other.Name, me.Master)
	require.Empty(t, s.lostSlots, "a node that becomes a replica resynchronises instead")
	require.Equal(t, 10, other.numSlots())
}

// electionState is a replica (offset 100) of m, a failed master with
// slots, beside r2, another replica of m with the given offset, in a
// cluster of three masters.
func electionState(t *testing.T, opt Options, r2Offset int64) (s *State, log *logRecorder) {
	t.Helper()
	log = &logRecorder{}
	opt.Logf = log.logf
	opt.Offset = func() int64 { return 100 }
	opt.NodeTimeout = time.Second
	s, err := New(opt)
	require.NoError(t, err)
	name := func(c string) bus.Name { return nameOf(strings.Repeat(c, bus.NameLen)) }
	m := &Node{Name: name("a"), Flags: bus.FlagMaster | bus.FlagFail, failTime: nowMs()}
	r2 := &Node{Name: name("c"), Flags: bus.FlagReplica, Master: m.Name, ReplOffset: r2Offset}
	s.cfg.Nodes = append(s.cfg.Nodes, m, r2)
	s.setMaster(m)
	for j := 0; j < 100; j++ {
		s.addSlot(m, j)
	}
	s.size = 3
	return s, log
}

// A replica's election (clusterHandleSlaveFailover): none with
// cluster-replica-no-failover or data too old; a delay of a second per
// replica with a better offset; the request in a new epoch once the
// delay passed; with a majority of the votes, the master's slots.
func TestReplicaElection(t *testing.T) {
	s, _ := electionState(t, Options{ReplicaNoFailover: true}, 0)
	s.handleReplicaFailover(0)
	require.Zero(t, s.fo.authTime, "no election with cluster-replica-no-failover")

	s, log := electionState(t, Options{ReplicaValidityFactor: 10, ReplPingPeriod: 10 * time.Second}, 0)
	s.handleReplicaFailover(60_000)
	require.Zero(t, s.fo.authTime, "no election with data too old")
	s.cfg.Lookup(s.cfg.Myself.Master).failTime -= 10_000 // logged once the master failed long enough ago
	s.fo.cantReason = cantNone
	s.handleReplicaFailover(60_000)
	require.True(t, log.has("Disconnected from master for longer than allowed"))

	s, _ = electionState(t, Options{}, 200) // r2 has more data: rank 1
	now := nowMs()
	s.handleReplicaFailover(0)
	require.Equal(t, 1, s.fo.authRank)
	require.GreaterOrEqual(t, s.fo.authTime, now+1500)
	require.False(t, s.fo.authSent)

	s.fo.authTime = nowMs() - 1 // the delay passed
	epoch := s.cfg.CurrentEpoch
	s.handleReplicaFailover(0)
	require.True(t, s.fo.authSent)
	require.Equal(t, epoch+1, s.fo.authEpoch)

	s.fo.authCount = 1
	s.handleReplicaFailover(0)
	require.NotZero(t, s.cfg.Myself.Flags&bus.FlagReplica, "one vote of three masters is not a majority")
	s.fo.authCount = 2
	s.handleReplicaFailover(0)
	me := s.cfg.Myself
	require.NotZero(t, me.Flags&bus.FlagMaster)
	require.Equal(t, 100, me.numSlots())
	require.Equal(t, s.fo.authEpoch, me.ConfigEpoch)
	require.True(t, s.fo.promoted, "the server is told to turn master")
}

// A master whose only replica turned master (here: that replica was
// CLUSTER RESET, and gossips as a master without slots) no longer has a
// replica: clusterSetNodeAsMaster removes it (clusterNodeRemoveSlave),
// which clears the master's migrate-to flag, so the master is not an
// orphan replicas migrate to.
func TestReplicaTurnedMasterLeavesNoOrphan(t *testing.T) {
	s, m1, m2 := migrationState(t, 1, true)
	r3 := &Node{Name: nameOf(strings.Repeat("d", bus.NameLen)), Flags: bus.FlagReplica}
	s.cfg.Nodes = append(s.cfg.Nodes, r3)
	s.moveReplica(r3, m2)
	s.setAsMaster(r3)
	require.Zero(t, m2.Flags&bus.FlagMigrateTo, "m2 has no replica left")
	require.NotZero(t, r3.Flags&bus.FlagMigrateTo, "the former replica may get replicas")
	s.replicaMigrationIfNeeded()
	m2.orphanedTime -= migrationDelay + 1
	s.replicaMigrationIfNeeded()
	require.Equal(t, m1.Name, s.cfg.Myself.Master, "m2 is no orphan")
}
