// Package keyslot is the hash slot of a key in Redis Cluster, as
// redis-server 7.0 computes it (keyHashSlot). It is a leaf, so that both
// the keyspace, which indexes database 0's keys by slot in cluster mode,
// and package cluster can have it.
package keyslot

// Slots is the number of hash slots (CLUSTER_SLOTS).
const Slots = 16384

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

// CRC16 is Redis's crc16: CRC-16/XMODEM.
func CRC16(b []byte) uint16 { return crc16(b) }

func crc16[K string | []byte](b K) uint16 {
	var c uint16
	for i := 0; i < len(b); i++ {
		c = c<<8 ^ crc16tab[byte(c>>8)^b[i]]
	}
	return c
}

// Of is the hash slot of key: the CRC16 of the key, or of the part
// between its first '{' and the first '}' after it when that part is not
// empty (a hash tag, which puts keys in one slot).
func Of(key []byte) int { return of(key) }

// OfString is Of for a key held as a string (the keyspace's).
func OfString(key string) int { return of(key) }

func of[K string | []byte](key K) int {
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
