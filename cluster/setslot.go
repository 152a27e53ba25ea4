package cluster

import (
	"fmt"

	"github.com/zredis/zredis/cluster/bus"
)

// Resharding: CLUSTER SETSLOT, which redis-cli --cluster reshard sends
// around each slot it moves (IMPORTING on the target, MIGRATING on the
// source, the keys by MIGRATE, then NODE on the target, the source and
// every other master).

// SetSlotAction is what CLUSTER SETSLOT asks of a slot.
type SetSlotAction int

const (
	SetSlotInvalid SetSlotAction = iota
	SetSlotMigrating
	SetSlotImporting
	SetSlotStable
	SetSlotNode
)

// SetSlot is CLUSTER SETSLOT <slot> <action> [node] (clusterCommand's
// setslot branch), with Redis's checks in Redis's order: slot is -1 for
// an argument getSlotOrReply refuses; keysInSlot is how many keys this
// node holds in the slot (countKeysInSlot), which the caller, who owns
// the keyspace, counts. It returns Redis's error text without "ERR ",
// or "" once the change is made, nodes.conf written, and the routing
// republished: the reply then follows the file, as Redis's
// clusterBeforeSleep saves the configuration before replies are written.
// As Redis, the file is fsynced when the node took a new config epoch
// or became a replica (CLUSTER_TODO_FSYNC_CONFIG), not for the other
// changes (unless the
// write carries an epoch or a vote of another change: saveConfigSync).
func (s *State) SetSlot(slot int, action SetSlotAction, name []byte, keysInSlot int) string {
	s.mu.Lock()
	fsync, roleChanged := false, false
	me := s.cfg.Myself
	if me.Flags&bus.FlagReplica != 0 {
		s.mu.Unlock()
		return "Please use SETSLOT only with masters."
	}
	if slot < 0 {
		s.mu.Unlock()
		return "Invalid or out of range slot"
	}
	// target is the node named, checked as each action checks it.
	target := func(unknown string) (*Node, string) {
		n := s.lookupArg(name)
		if n == nil {
			return nil, fmt.Sprintf(unknown, name)
		}
		if n.Flags&bus.FlagReplica != 0 {
			return nil, "Target node is not a master"
		}
		return n, ""
	}
	switch action {
	case SetSlotMigrating:
		if s.slots[slot] != me {
			s.mu.Unlock()
			return fmt.Sprintf("I'm not the owner of hash slot %d", slot)
		}
		n, e := target("I don't know about node %s")
		if e != "" {
			s.mu.Unlock()
			return e
		}
		s.cfg.Migrating[slot] = n.Name
	case SetSlotImporting:
		if s.slots[slot] == me {
			s.mu.Unlock()
			return fmt.Sprintf("I'm already the owner of hash slot %d", slot)
		}
		n, e := target("I don't know about node %s")
		if e != "" {
			s.mu.Unlock()
			return e
		}
		s.cfg.Importing[slot] = n.Name
	case SetSlotStable:
		delete(s.cfg.Importing, slot)
		delete(s.cfg.Migrating, slot)
	case SetSlotNode:
		n, e := target("Unknown node %s")
		if e != "" {
			s.mu.Unlock()
			return e
		}
		// The keys of a slot this node serves must have left before
		// the slot may: else they would be unreachable here and
		// expired (and sent to the expiry stream) by a node that no
		// longer owns them.
		if s.slots[slot] == me && n != me && keysInSlot != 0 {
			s.mu.Unlock()
			return fmt.Sprintf("Can't assign hashslot %d to a different node while I still hold keys for this hash slot.", slot)
		}
		// A migration whose keys have all left is over.
		if keysInSlot == 0 {
			delete(s.cfg.Migrating, slot)
		}
		slotWasMine := s.slots[slot] == me
		s.delSlot(slot)
		s.addSlot(n, slot)
		// A master left without slots becomes a replica of the new
		// owner: the nodes' later claims of the slot find it no longer
		// this node's, so the configuration updates would not
		// (updateSlotsConfigWith).
		if slotWasMine && n != me && me.numSlots() == 0 && s.opt.AllowReplicaMigration {
			s.opt.Logf('#', "Configuration change detected. Reconfiguring myself as a replica of %.40s", n.Name[:])
			s.setMaster(n)
			roleChanged, fsync = true, true
		}
		if _, importing := s.cfg.Importing[slot]; n == me && importing {
			// The slot was moved by hand, without a failover's
			// election: a new config epoch, taken without consensus,
			// lets this node's claim win over the old owner's
			// everywhere; an epoch collision, should one happen, is
			// resolved as any other (handleEpochCollision).
			if s.bumpEpoch() {
				s.opt.Logf('#', "configEpoch updated after importing slot %d", slot)
				fsync = true
			}
			delete(s.cfg.Importing, slot)
			// The other nodes learn it now, not at their next ping.
			s.broadcastPong(false)
		}
	default:
		s.mu.Unlock()
		return "Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP"
	}
	s.todoSave, s.stateChanged, s.routesDirty = true, true, true
	s.updateState()
	if roleChanged {
		s.applyRole() // unlocks
	} else {
		s.unlock()
	}
	if err := s.saveConfigSync(fsync); err != nil {
		// clusterSaveConfigOrDie: Redis exits rather than run with a
		// configuration it could not write; a zredis node keeps it to
		// write at the next turn of the cron (todoSave) and says so.
		s.opt.Logf('#', "Fatal: can't update cluster config file.")
	}
	return ""
}
