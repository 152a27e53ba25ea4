package zmqpub

// The ZMTP 3 wire layer (rfc.zeromq.org/spec/23 and /37), as libzmq 4.3
// speaks it with the NULL security mechanism: the 64-byte greeting, the
// READY handshake, frames and the PING/PONG/ERROR commands. It is shared
// by the Publisher (PUSH) and the pull package (PULL); it holds no socket
// semantics of its own.

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
)

// Frame flag bits (ZMTP 3.0, "framing").
const (
	flagMore    = 0x01 // another frame of the same message follows
	flagLong    = 0x02 // the size is 8 bytes instead of 1
	flagCommand = 0x04 // a command frame, not a message frame
)

const (
	greetingSize = 64
	// maxHandshakeFrame bounds the READY or ERROR command a peer sends
	// during the handshake; libzmq's READY carries a socket type and
	// perhaps an identity and a few user properties.
	maxHandshakeFrame = 64 << 10
	// MaxPingContext is the longest PING context ZMTP 3.1 allows.
	MaxPingContext = 16
)

// Socket types this package speaks; the handshake sends one and checks the
// peer's.
const (
	SocketPush = "PUSH"
	SocketPull = "PULL"
)

// ErrProtocol wraps every violation of ZMTP by a peer.
var ErrProtocol = errors.New("zmtp: protocol error")

func protocolErrorf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrProtocol, fmt.Sprintf(format, args...))
}

// greeting is ours: signature (0xFF, 8 bytes padding, 0x7F), version 3.1,
// mechanism "NULL", as-server 0, filler. The padding is libzmq's: the
// big-endian identity length plus one, which a ZMTP 1.0 peer would read.
var greeting = func() [greetingSize]byte {
	var g [greetingSize]byte
	g[0] = 0xFF
	g[8] = 0x01
	g[9] = 0x7F
	g[10] = 3 // major version
	g[11] = 1 // minor version: 3.1, which adds PING and PONG
	copy(g[12:32], "NULL")
	return g
}()

// Handshake runs the ZMTP 3 greeting and NULL handshake on conn: it sends
// our greeting, checks the peer's (signature, version 3 or later,
// mechanism NULL), sends READY with Socket-Type ours, and checks that the
// peer's READY names peerType. On a wrong mechanism or socket type it sends
// an ERROR command before returning the error. Reads go through br, which
// must wrap conn and be kept for the frames that follow. The caller sets
// the deadline; Handshake leaves it as it is.
func Handshake(conn io.Writer, br *bufio.Reader, ours, peerType string) error {
	mech, err := exchangeGreetings(conn, br, &greeting)
	if err != nil {
		return err
	}
	if mech != mechanismNull {
		writeError(conn, "unsupported security mechanism")
		return protocolErrorf("peer security mechanism %q, want NULL", mech)
	}

	if _, err := conn.Write(AppendCommand(nil, "READY", appendProperty(nil, "Socket-Type", ours))); err != nil {
		return err
	}
	f, err := ReadFrame(br, maxHandshakeFrame)
	if err != nil {
		return fmt.Errorf("zmtp: reading READY: %w", err)
	}
	if !f.Command {
		return protocolErrorf("message frame during the handshake")
	}
	name, data, err := ParseCommand(f.Body)
	if err != nil {
		return err
	}
	switch name {
	case "READY":
	case "ERROR":
		return fmt.Errorf("zmtp: peer refused the handshake: %q", errorReason(data))
	default:
		return protocolErrorf("command %q during the handshake, want READY", name)
	}
	props, err := parseProperties(data)
	if err != nil {
		return err
	}
	if got := props["socket-type"]; got != peerType {
		writeError(conn, "invalid socket type")
		return protocolErrorf("peer socket type %q, want %q", got, peerType)
	}
	return nil
}

// writeError sends an ERROR command, best effort: the connection is about
// to be closed either way.
func writeError(w io.Writer, reason string) {
	if len(reason) > 255 {
		reason = reason[:255]
	}
	data := append([]byte{byte(len(reason))}, reason...)
	_, _ = w.Write(AppendCommand(nil, "ERROR", data))
}

// errorReason extracts the reason of an ERROR command's data (a length
// octet and the text), tolerating a short body.
func errorReason(data []byte) string {
	if len(data) == 0 {
		return ""
	}
	n := min(int(data[0]), len(data)-1)
	return string(data[1 : 1+n])
}

// Frame is one ZMTP frame as read from the wire.
type Frame struct {
	More    bool // another frame of the same message follows (message frames only)
	Command bool // a command frame (READY, PING, PONG, ERROR, ...)
	Body    []byte
}

// ReadFrame reads one frame from br. A frame whose declared size exceeds
// maxSize is refused before any allocation, with an ErrProtocol error, and
// leaves the stream unusable: the caller must close the connection. The
// body is freshly allocated and owned by the caller.
func ReadFrame(br *bufio.Reader, maxSize int64) (Frame, error) {
	flags, err := br.ReadByte()
	if err != nil {
		return Frame{}, err
	}
	if flags&^(flagMore|flagLong|flagCommand) != 0 {
		return Frame{}, protocolErrorf("reserved frame flag bits set: %#02x", flags)
	}
	var size uint64
	if flags&flagLong != 0 {
		var b [8]byte
		if _, err := io.ReadFull(br, b[:]); err != nil {
			return Frame{}, unexpectedEOF(err)
		}
		size = binary.BigEndian.Uint64(b[:])
	} else {
		b, err := br.ReadByte()
		if err != nil {
			return Frame{}, unexpectedEOF(err)
		}
		size = uint64(b)
	}
	if maxSize < 0 || size > uint64(maxSize) {
		return Frame{}, protocolErrorf("frame of %d bytes exceeds the limit of %d", size, maxSize)
	}
	f := Frame{More: flags&flagMore != 0, Command: flags&flagCommand != 0}
	if f.Command && f.More {
		return Frame{}, protocolErrorf("command frame with the MORE flag")
	}
	f.Body = make([]byte, size)
	if _, err := io.ReadFull(br, f.Body); err != nil {
		return Frame{}, unexpectedEOF(err)
	}
	return f, nil
}

// unexpectedEOF turns an EOF inside a frame into io.ErrUnexpectedEOF, so
// that a clean close (EOF before a frame) stays distinguishable.
func unexpectedEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// AppendFrameHeader appends the flags and size of a frame of size bytes:
// the short form up to 255 bytes, the long form above.
func AppendFrameHeader(dst []byte, flags byte, size int) []byte {
	if size <= 255 {
		return append(dst, flags, byte(size))
	}
	return binary.BigEndian.AppendUint64(append(dst, flags|flagLong), uint64(size))
}

// AppendMessageFrame appends one message frame with its header; more says
// whether another frame of the same message follows.
func AppendMessageFrame(dst []byte, more bool, body []byte) []byte {
	var flags byte
	if more {
		flags = flagMore
	}
	return append(AppendFrameHeader(dst, flags, len(body)), body...)
}

// AppendCommand appends a command frame: name (1 to 255 bytes) and data.
func AppendCommand(dst []byte, name string, data []byte) []byte {
	dst = AppendFrameHeader(dst, flagCommand, 1+len(name)+len(data))
	dst = append(dst, byte(len(name)))
	dst = append(dst, name...)
	return append(dst, data...)
}

// ParseCommand splits a command frame's body into its name and data.
func ParseCommand(body []byte) (name string, data []byte, err error) {
	if len(body) == 0 || len(body) < 1+int(body[0]) || body[0] == 0 {
		return "", nil, protocolErrorf("malformed command frame")
	}
	n := int(body[0])
	return string(body[1 : 1+n]), body[1+n:], nil
}

// AppendPing appends a PING command (ZMTP 3.1): a TTL in tenths of a
// second (0: none) and a context of at most MaxPingContext bytes.
func AppendPing(dst []byte, ttlDeciseconds uint16, context []byte) []byte {
	data := binary.BigEndian.AppendUint16(nil, ttlDeciseconds)
	return AppendCommand(dst, "PING", append(data, context...))
}

// AppendPong appends the PONG answering a PING whose data (TTL and context)
// is ping: ZMTP 3.1 says the PONG echoes the PING's context.
func AppendPong(dst []byte, ping []byte) []byte {
	return AppendCommand(dst, "PONG", PongContext(ping))
}

// PongContext returns the context a PONG echoes from the data of a PING
// (ZMTP 3.1: at most MaxPingContext bytes).
func PongContext(ping []byte) []byte {
	var context []byte
	if len(ping) > 2 {
		context = ping[2:]
	}
	if len(context) > MaxPingContext {
		context = context[:MaxPingContext]
	}
	return context
}

// appendProperty appends one READY metadata property: a name length octet,
// the name, a 4-byte big-endian value length and the value.
func appendProperty(dst []byte, name, value string) []byte {
	dst = append(dst, byte(len(name)))
	dst = append(dst, name...)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(value)))
	return append(dst, value...)
}

// parseProperties reads READY metadata into a map keyed by the lowercased
// property name (names are case-insensitive in ZMTP). Every length is
// checked against what data holds.
func parseProperties(data []byte) (map[string]string, error) {
	props := make(map[string]string)
	for len(data) > 0 {
		n := int(data[0])
		if n == 0 || len(data) < 1+n+4 {
			return nil, protocolErrorf("malformed READY property")
		}
		name := strings.ToLower(string(data[1 : 1+n]))
		data = data[1+n:]
		vlen := binary.BigEndian.Uint32(data)
		data = data[4:]
		if uint64(vlen) > uint64(len(data)) {
			return nil, protocolErrorf("READY property %q longer than the frame", name)
		}
		props[name] = string(data[:vlen])
		data = data[vlen:]
	}
	return props, nil
}

// SplitEndpoint turns a 0MQ endpoint into a Go network and address:
// "tcp://host:port" (host may be "*", an IP, [IPv6] or a name) gives "tcp"
// and "host:port" ("*" becomes the empty host, every interface);
// "ipc://path" gives "unix" and the path.
func SplitEndpoint(endpoint string) (network, address string, err error) {
	scheme, rest, ok := strings.Cut(endpoint, "://")
	if !ok || rest == "" {
		return "", "", fmt.Errorf("endpoint %q: want tcp://host:port or ipc://path", endpoint)
	}
	switch scheme {
	case "tcp":
		host, port, err := net.SplitHostPort(rest)
		if err != nil {
			return "", "", fmt.Errorf("endpoint %q: %w", endpoint, err)
		}
		if port == "" {
			return "", "", fmt.Errorf("endpoint %q: missing port", endpoint)
		}
		if host == "*" {
			host = ""
		}
		return "tcp", net.JoinHostPort(host, port), nil
	case "ipc":
		return "unix", rest, nil
	default:
		return "", "", fmt.Errorf("endpoint %q: unsupported transport %q (want tcp or ipc)", endpoint, scheme)
	}
}
