// Package bus is Redis Cluster's bus protocol as redis-server 7.0 speaks
// it (cluster.h's clusterMsg): the binary messages nodes exchange on
// their cluster port, decoded from and encoded to their exact wire form,
// so that a zredis node and redis-server nodes gossip with each other.
//
// A message is a fixed header of HeaderLen bytes (the sender's name,
// epochs, replication offset, slot bitmap, ports and flags) followed by
// the data of its type: gossip entries and extensions for PING, PONG and
// MEET, a node name for FAIL, a channel and a message for PUBLISH, a slot
// bitmap for UPDATE. Integers are big-endian (Redis's htonl, htons,
// htonu64). Parse checks a message as clusterProcessPacket does before
// it acts on one, and refuses what Redis would drop, with the warning
// Redis logs; it also refuses what Redis would read past the end of (an
// extension header cut short), and never trusts a length it did not
// check against the bytes it has.
package bus

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
)

// Sizes of cluster.h's structures, in bytes.
const (
	NameLen   = 40               // CLUSTER_NAMELEN: a node name, 40 hex digits
	Slots     = 16384            // CLUSTER_SLOTS
	SlotBytes = Slots / 8        // a slot bitmap
	ipLen     = 46               // NET_IP_STR_LEN
	HeaderLen = 2256             // CLUSTERMSG_MIN_LEN: the header, without data
	FullLen   = HeaderLen + 2096 // sizeof(clusterMsg): the header and the largest data (UPDATE)
	gossipLen = 104              // sizeof(clusterMsgDataGossip)
	failLen   = NameLen          // sizeof(clusterMsgDataFail)
	updateLen = 8 + NameLen + SlotBytes
	extHdrLen = 8 // clusterMsgPingExt's length, type and padding

	// ProtoVer is CLUSTER_PROTO_VER: a message of another version is
	// dropped.
	ProtoVer = 1
)

// Offsets in the header.
const (
	offSig          = 0
	offTotlen       = 4
	offVer          = 8
	offPort         = 10
	offType         = 12
	offCount        = 14
	offCurrentEpoch = 16
	offConfigEpoch  = 24
	offOffset       = 32
	offSender       = 40
	offMyslots      = 80
	offSlaveof      = 2128
	offMyip         = 2168
	offExtensions   = 2214
	offPport        = 2246
	offCport        = 2248
	offFlags        = 2250
	offState        = 2252
	offMflags       = 2253
)

// Type is a message's type (CLUSTERMSG_TYPE_*).
type Type uint16

const (
	Ping Type = iota
	Pong
	Meet
	Fail
	Publish
	FailoverAuthRequest
	FailoverAuthAck
	Update
	MFStart
	Module
	PublishShard
	TypeCount // CLUSTERMSG_TYPE_COUNT
)

// String is the type's name as clusterGetMessageTypeString gives it
// (Redis's log lines use it).
func (t Type) String() string {
	switch t {
	case Ping:
		return "ping"
	case Pong:
		return "pong"
	case Meet:
		return "meet"
	case Fail:
		return "fail"
	case Publish:
		return "publish"
	case PublishShard:
		return "publishshard"
	case FailoverAuthRequest:
		return "auth-req"
	case FailoverAuthAck:
		return "auth-ack"
	case Update:
		return "update"
	case MFStart:
		return "mfstart"
	case Module:
		return "module"
	}
	return "unknown"
}

// Known reports whether t is a type redis-server 7.0 knows.
func (t Type) Known() bool { return t < TypeCount }

// Node flags (CLUSTER_NODE_*), as the header and gossip entries carry them.
const (
	FlagMaster     uint16 = 1
	FlagReplica    uint16 = 2
	FlagPFail      uint16 = 4
	FlagFail       uint16 = 8
	FlagMyself     uint16 = 16
	FlagHandshake  uint16 = 32
	FlagNoAddr     uint16 = 64
	FlagMeet       uint16 = 128
	FlagMigrateTo  uint16 = 256
	FlagNoFailover uint16 = 512
)

// Message flags, in MFlags[0] (CLUSTERMSG_FLAG0_*).
const (
	MFlagPaused   uint8 = 1 << 0 // a master paused for a manual failover
	MFlagForceAck uint8 = 1 << 1 // vote even if the master is not failing
	mflagExtData  uint8 = 1 << 2 // extensions follow the gossip entries
)

// Extension types (clusterMsgPingtypes).
const extHostname = 0

// Name is a node name: 40 hex digits, or all zero bytes for none.
type Name [NameLen]byte

// IsZero reports whether n is the null name (a master's "slaveof").
func (n Name) IsZero() bool { return n == Name{} }

// Bitmap is a slot bitmap: slot s is bit s%8 of byte s/8, as Redis's
// bitmapTestBit reads it.
type Bitmap [SlotBytes]byte

// Has reports whether slot s is set.
func (b *Bitmap) Has(s int) bool { return b[s>>3]&(1<<(s&7)) != 0 }

// Set sets slot s.
func (b *Bitmap) Set(s int) { b[s>>3] |= 1 << (s & 7) }

// Clear clears slot s.
func (b *Bitmap) Clear(s int) { b[s>>3] &^= 1 << (s & 7) }

// Count is the number of slots set. A reshard's every CLUSTER SETSLOT
// counts each master's slots (the cluster's size), as does gossip: a
// word at a time rather than a bit.
func (b *Bitmap) Count() int {
	c := 0
	for i := 0; i < SlotBytes; i += 8 {
		c += bits.OnesCount64(binary.LittleEndian.Uint64(b[i:]))
	}
	return c
}

// Next is the first slot from s on that is set (set true) or clear (set
// false), Slots when there is none: the runs of slots that nodes.conf
// and CLUSTER NODES list as ranges, found a word at a time.
func (b *Bitmap) Next(s int, set bool) int {
	for s < Slots {
		w := binary.LittleEndian.Uint64(b[s>>6<<3:])
		if !set {
			w = ^w
		}
		w >>= uint(s & 63)
		if w != 0 {
			return min(s+bits.TrailingZeros64(w), Slots)
		}
		s = s&^63 + 64
	}
	return Slots
}

// Header is a message's fixed part. For a replica, Slots and ConfigEpoch
// are its master's (clusterBuildMessageHdr).
type Header struct {
	Type         Type
	Port         uint16 // the client port (TLS one when tls-cluster)
	PPort        uint16 // the plaintext client port when Port is TLS, else 0
	CPort        uint16 // the cluster bus port
	CurrentEpoch uint64
	ConfigEpoch  uint64
	Offset       uint64 // replication offset
	Sender       Name
	Slots        Bitmap
	ReplicaOf    Name   // the sender's master, zero for a master
	IP           string // cluster-announce-ip, "" to have the receiver use the socket's address
	Flags        uint16
	State        uint8 // the cluster's state as the sender sees it: 0 ok, 1 fail
	MFlags       [3]uint8
}

// Gossip is one entry of a PING, PONG or MEET's gossip section: what the
// sender knows of another node.
type Gossip struct {
	Name         Name
	PingSent     uint32 // seconds (Redis's ping_sent/1000)
	PongReceived uint32 // seconds
	IP           string
	Port         uint16
	CPort        uint16
	Flags        uint16
	PPort        uint16
}

// Message is one bus message. Which of the fields past Header are used
// depends on Type.
type Message struct {
	Header

	// PING, PONG, MEET.
	Gossip   []Gossip
	Hostname string // the hostname extension; "" when absent
	// UnknownExts counts the extensions of types this package does not
	// know (Redis logs "Received unknown extension type" and skips them).
	UnknownExts int

	// FAIL: the node the sender marks as failing.
	About Name

	// PUBLISH, PUBLISHSHARD.
	Channel, Payload []byte

	// UPDATE: another node's slots and config epoch.
	UpdateEpoch uint64
	UpdateNode  Name
	UpdateSlots Bitmap

	// MODULE.
	ModuleID   uint64
	ModuleType uint8
}

// Errors of FrameLen and Parse. The messages are the warnings Redis logs
// when it drops a message or closes a link for one.
var (
	ErrBadFrame = errors.New("Bad message length or signature received from Cluster bus.")
	errShort    = errors.New("message shorter than its header")
	errVersion  = errors.New("message of another protocol version")
)

// FrameLen reads a message's length from its first 8 bytes, as
// clusterReadHandler does before it reads the rest: the signature must
// be "RCmb" and the length at least HeaderLen, and, unlike Redis, which
// allocates whatever the peer announces, at most max. An error closes the
// link.
func FrameLen(first8 []byte, max int) (int, error) {
	if len(first8) < 8 || string(first8[:4]) != "RCmb" {
		return 0, ErrBadFrame
	}
	n := binary.BigEndian.Uint32(first8[offTotlen:])
	if n < HeaderLen || uint64(n) > uint64(max) {
		return 0, ErrBadFrame
	}
	return int(n), nil
}

// Parse decodes one whole message, b (totlen bytes, FrameLen's). It
// returns an error for a message Redis drops: of another version, or
// whose length is not the one its type and counts give. A message of a
// type Redis does not know is returned with only its header (Redis
// accepts it as well formed, and ignores it). Channel and Payload alias
// b.
func Parse(b []byte) (*Message, error) {
	if len(b) < HeaderLen {
		return nil, errShort
	}
	be := binary.BigEndian
	if be.Uint16(b[offVer:]) != ProtoVer {
		return nil, errVersion
	}
	m := &Message{}
	h := &m.Header
	h.Type = Type(be.Uint16(b[offType:]))
	h.Port = be.Uint16(b[offPort:])
	h.CurrentEpoch = be.Uint64(b[offCurrentEpoch:])
	h.ConfigEpoch = be.Uint64(b[offConfigEpoch:])
	h.Offset = be.Uint64(b[offOffset:])
	copy(h.Sender[:], b[offSender:])
	copy(h.Slots[:], b[offMyslots:])
	copy(h.ReplicaOf[:], b[offSlaveof:])
	h.IP = cString(b[offMyip : offMyip+ipLen])
	h.PPort = be.Uint16(b[offPport:])
	h.CPort = be.Uint16(b[offCport:])
	h.Flags = be.Uint16(b[offFlags:])
	h.State = b[offState]
	copy(h.MFlags[:], b[offMflags:offMflags+3])

	totlen := len(b)
	data := b[HeaderLen:]
	wrongLen := func(explen int) error {
		return fmt.Errorf("Received invalid %s packet of length %d but expected length %d", h.Type, totlen, explen)
	}
	switch h.Type {
	case Ping, Pong, Meet:
		count := int(be.Uint16(b[offCount:]))
		explen := HeaderLen + gossipLen*count
		if explen > totlen {
			return nil, wrongLen(explen)
		}
		m.Gossip = make([]Gossip, count)
		for i := range m.Gossip {
			m.Gossip[i] = parseGossip(data[i*gossipLen : (i+1)*gossipLen])
		}
		if h.MFlags[0]&mflagExtData != 0 {
			exts := int(be.Uint16(b[offExtensions:]))
			for ; exts > 0; exts-- {
				if totlen-explen < extHdrLen {
					// Redis reads this header past the end of the
					// message; this is dropped instead.
					return nil, fmt.Errorf("Received invalid %s packet with extension data that exceeds total packet length (%d)", h.Type, totlen)
				}
				ext := b[explen:]
				// Redis keeps the length in 16 bits.
				extlen := int(uint16(be.Uint32(ext)))
				if extlen%8 != 0 {
					return nil, fmt.Errorf("Received a %s packet without proper padding (%d bytes)", h.Type, extlen)
				}
				if totlen-explen < extlen {
					return nil, fmt.Errorf("Received invalid %s packet with extension data that exceeds total packet length (%d)", h.Type, totlen)
				}
				if extlen < extHdrLen {
					// A zero length would loop on one extension.
					return nil, fmt.Errorf("Received a %s packet without proper padding (%d bytes)", h.Type, extlen)
				}
				switch be.Uint16(ext[4:]) {
				case extHostname:
					m.Hostname = cString(ext[extHdrLen:extlen])
				default:
					m.UnknownExts++
				}
				explen += extlen
			}
		}
		if explen != totlen {
			return nil, wrongLen(explen)
		}
	case Fail:
		if explen := HeaderLen + failLen; totlen != explen {
			return nil, wrongLen(explen)
		}
		copy(m.About[:], data)
	case Publish, PublishShard:
		if totlen < HeaderLen+8 {
			return nil, wrongLen(HeaderLen + 8)
		}
		clen, mlen := uint64(be.Uint32(data)), uint64(be.Uint32(data[4:]))
		if explen := uint64(HeaderLen+8) + clen + mlen; uint64(totlen) != explen {
			return nil, fmt.Errorf("Received invalid %s packet of length %d but expected length %d", h.Type, totlen, explen)
		}
		m.Channel = data[8 : 8+clen]
		m.Payload = data[8+clen : 8+clen+mlen]
	case FailoverAuthRequest, FailoverAuthAck, MFStart:
		if totlen != HeaderLen {
			return nil, wrongLen(HeaderLen)
		}
	case Update:
		if explen := HeaderLen + updateLen; totlen != explen {
			return nil, wrongLen(explen)
		}
		m.UpdateEpoch = be.Uint64(data)
		copy(m.UpdateNode[:], data[8:])
		copy(m.UpdateSlots[:], data[8+NameLen:])
	case Module:
		if totlen < HeaderLen+13 {
			return nil, wrongLen(HeaderLen + 13)
		}
		n := uint64(be.Uint32(data[8:]))
		if explen := uint64(HeaderLen+13) + n; uint64(totlen) != explen {
			return nil, fmt.Errorf("Received invalid %s packet of length %d but expected length %d", h.Type, totlen, explen)
		}
		m.ModuleID = be.Uint64(data)
		m.ModuleType = data[12]
		m.Payload = data[13 : 13+n]
	}
	return m, nil
}

func parseGossip(b []byte) Gossip {
	be := binary.BigEndian
	var g Gossip
	copy(g.Name[:], b)
	g.PingSent = be.Uint32(b[40:])
	g.PongReceived = be.Uint32(b[44:])
	g.IP = cString(b[48 : 48+ipLen])
	g.Port = be.Uint16(b[94:])
	g.CPort = be.Uint16(b[96:])
	g.Flags = be.Uint16(b[98:])
	g.PPort = be.Uint16(b[100:])
	return g
}

// cString is the NUL-terminated string at the start of b.
func cString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// putCString writes s into b (a fixed-size field of zeros), truncated to
// leave its last byte NUL, as strncpy with the size less one does.
func putCString(b []byte, s string) {
	copy(b[:len(b)-1], s)
}

// Append appends m's wire form to dst: the header, then the data its
// type has, with the length, gossip count, extension count and
// extension flag computed from the fields.
func (m *Message) Append(dst []byte) []byte {
	start := len(dst)
	dst = append(dst, make([]byte, HeaderLen)...)
	b := dst[start:]
	be := binary.BigEndian
	h := &m.Header
	copy(b[offSig:], "RCmb")
	be.PutUint16(b[offVer:], ProtoVer)
	be.PutUint16(b[offPort:], h.Port)
	be.PutUint16(b[offType:], uint16(h.Type))
	be.PutUint64(b[offCurrentEpoch:], h.CurrentEpoch)
	be.PutUint64(b[offConfigEpoch:], h.ConfigEpoch)
	be.PutUint64(b[offOffset:], h.Offset)
	copy(b[offSender:], h.Sender[:])
	copy(b[offMyslots:], h.Slots[:])
	copy(b[offSlaveof:], h.ReplicaOf[:])
	putCString(b[offMyip:offMyip+ipLen], h.IP)
	be.PutUint16(b[offPport:], h.PPort)
	be.PutUint16(b[offCport:], h.CPort)
	be.PutUint16(b[offFlags:], h.Flags)
	b[offState] = h.State
	copy(b[offMflags:], h.MFlags[:])
	b[offMflags] &^= mflagExtData

	switch h.Type {
	case Ping, Pong, Meet:
		be.PutUint16(b[offCount:], uint16(len(m.Gossip)))
		for _, g := range m.Gossip {
			dst = appendGossip(dst, &g)
		}
		if m.Hostname != "" {
			b = dst[start:]
			b[offMflags] |= mflagExtData
			be.PutUint16(b[offExtensions:], 1)
			n := extHdrLen + (len(m.Hostname)+1+7)/8*8
			ext := make([]byte, n)
			be.PutUint32(ext, uint32(n))
			be.PutUint16(ext[4:], extHostname)
			copy(ext[extHdrLen:], m.Hostname)
			dst = append(dst, ext...)
		}
	case Fail:
		dst = append(dst, m.About[:]...)
	case Publish, PublishShard:
		dst = be.AppendUint32(dst, uint32(len(m.Channel)))
		dst = be.AppendUint32(dst, uint32(len(m.Payload)))
		dst = append(dst, m.Channel...)
		dst = append(dst, m.Payload...)
	case Update:
		dst = be.AppendUint64(dst, m.UpdateEpoch)
		dst = append(dst, m.UpdateNode[:]...)
		dst = append(dst, m.UpdateSlots[:]...)
	case Module:
		dst = be.AppendUint64(dst, m.ModuleID)
		dst = be.AppendUint32(dst, uint32(len(m.Payload)))
		dst = append(dst, m.ModuleType)
		dst = append(dst, m.Payload...)
	}
	be.PutUint32(dst[start+offTotlen:], uint32(len(dst)-start))
	return dst
}

func appendGossip(dst []byte, g *Gossip) []byte {
	start := len(dst)
	dst = append(dst, make([]byte, gossipLen)...)
	b := dst[start:]
	be := binary.BigEndian
	copy(b, g.Name[:])
	be.PutUint32(b[40:], g.PingSent)
	be.PutUint32(b[44:], g.PongReceived)
	putCString(b[48:48+ipLen], g.IP)
	be.PutUint16(b[94:], g.Port)
	be.PutUint16(b[96:], g.CPort)
	be.PutUint16(b[98:], g.Flags)
	be.PutUint16(b[100:], g.PPort)
	return dst
}
