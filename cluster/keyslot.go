// Package cluster holds what a Redis Cluster node knows and keeps, as
// redis-server 7.0 has it: the hash slot of a key, and the nodes of the
// cluster as CLUSTER NODES shows them and nodes.conf stores them. The bus
// messages are package cluster/bus.
package cluster

import (
	"github.com/zredis/zredis/cluster/bus"
	"github.com/zredis/zredis/keyslot"
)

// Slots is the number of hash slots (CLUSTER_SLOTS).
const Slots = bus.Slots

// The bus and the keyspace's slot index (package keyslot) count the same
// slots.
var (
	_ [Slots - keyslot.Slots]struct{}
	_ [keyslot.Slots - Slots]struct{}
)

// crc16 is Redis's crc16: CRC-16/XMODEM (package keyslot's).
func crc16(b []byte) uint16 { return keyslot.CRC16(b) }

// KeySlot is the hash slot of key (keyHashSlot): the CRC16 of the key, or
// of the part between its first '{' and the first '}' after it when that
// part is not empty (a hash tag, which puts keys in one slot). Package
// keyslot computes it, for the keyspace too.
func KeySlot(key []byte) int { return keyslot.Of(key) }
