// Package cluster holds what a Redis Cluster node knows and keeps, as
// redis-server 7.0 has it: the hash slot of a key, and the nodes of the
// cluster as CLUSTER NODES shows them and nodes.conf stores them. The bus
// messages are package cluster/bus.
package cluster

import "github.com/zredis/zredis/cluster/bus"

// Slots is the number of hash slots (CLUSTER_SLOTS).
const Slots = bus.Slots

// crc16tab is CRC-16/XMODEM's table (polynomial 0x1021), Redis's crc16.c.
var crc16tab = func() (t [256]uint16) {
	for i := range t {
		c := uint16(i) << 8
		for range 8 {
			if c&0x8000 != 0 {
				c = c<<1 ^ 0x1021
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return t
}()

// crc16 is Redis's crc16: CRC-16/XMODEM.
func crc16(b []byte) uint16 {
	var c uint16
	for _, x := range b {
		c = c<<8 ^ crc16tab[byte(c>>8)^x]
	}
	return c
}

// KeySlot is the hash slot of key (keyHashSlot): the CRC16 of the key, or
// of the part between its first '{' and the first '}' after it when that
// part is not empty (a hash tag, which puts keys in one slot).
func KeySlot(key []byte) int {
	for s := 0; s < len(key); s++ {
		if key[s] != '{' {
			continue
		}
		for e := s + 1; e < len(key); e++ {
			if key[e] == '}' {
				if e == s+1 {
					break // "{}": the whole key
				}
				return int(crc16(key[s+1:e]) & (Slots - 1))
			}
		}
		break
	}
	return int(crc16(key) & (Slots - 1))
}
