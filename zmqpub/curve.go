package zmqpub

// The CURVE security mechanism of ZMTP 3 (CurveZMQ, rfc.zeromq.org/spec/26),
// byte for byte as libzmq 4.3 speaks it (src/curve_server.cpp,
// curve_client_tools.hpp, curve_mechanism_base.cpp):
//
//	client                                   server
//	greeting "CURVE", as-server 0    <->     greeting "CURVE", as-server 1
//	HELLO    C', Box[64 zeros](C'->S)  ->
//	                                   <-    WELCOME  Box[S' + cookie](S->C')
//	INITIATE cookie, Box[C + vouch + metadata](C'->S'),
//	         vouch = Box[C' + S](C->S')  ->
//	                                   <-    READY    Box[metadata](S'->C')
//	MESSAGE  Box[flags + frame](C'->S')  <->  MESSAGE Box[flags + frame](S'->C')
//
// C, S are the long-term keys, C', S' the keys of this connection only.
// After the handshake every frame, a command (PING, PONG) as well as a
// message frame, travels as one MESSAGE command in a ZMTP frame without
// flags; the first byte inside the box carries libzmq's message flags
// (0x01 more, 0x02 command). Nonces are 8-byte counters, strictly
// increasing in each direction.
//
// The primitives are golang.org/x/crypto's nacl/box, nacl/secretbox and
// curve25519, the NaCl constructions CurveZMQ is defined on.

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"golang.org/x/crypto/curve25519"
	"golang.org/x/crypto/nacl/box"
	"golang.org/x/crypto/nacl/secretbox"

	"github.com/zredis/zredis/zmqpub/z85"
)

// CurveKeys is a long-term CURVE key pair.
type CurveKeys struct {
	Public, Secret [32]byte
}

// NewCurveKeys returns the key pair of a secret key: its public key is
// derived (X25519 with the base point), as libzmq's zmq_curve_public does.
func NewCurveKeys(secret [32]byte) CurveKeys {
	k := CurveKeys{Secret: secret}
	pub, err := curve25519.X25519(secret[:], curve25519.Basepoint)
	if err != nil {
		// Only a low-order point gives an error, and the base point is not one.
		panic("zmqpub: deriving a CURVE public key: " + err.Error())
	}
	copy(k.Public[:], pub)
	return k
}

// GenerateCurveKeys returns a fresh key pair, as zmq_curve_keypair does.
func GenerateCurveKeys() (CurveKeys, error) {
	var secret [32]byte
	if _, err := rand.Read(secret[:]); err != nil {
		return CurveKeys{}, err
	}
	return NewCurveKeys(secret), nil
}

// ErrRefused marks a handshake that the server refused on security
// grounds: another mechanism than the one required, a key it does not
// accept, a box that does not open.
var ErrRefused = errors.New("zmtp: refused")

// errGreetingCut is a peer that hung up before the end of its greeting,
// after ours was sent.
var errGreetingCut = errors.New("zmtp: greeting cut short")

func refusedf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrRefused, fmt.Sprintf(format, args...))
}

const (
	mechanismNull  = "NULL"
	mechanismCurve = "CURVE"

	// libzmq's message flags inside a MESSAGE box.
	curveFlagMore    = 0x01
	curveFlagCommand = 0x02

	curveHelloSize    = 200 // the whole HELLO command body
	curveWelcomeSize  = 168
	curveInitiateMin  = 257
	curveMessageMin   = 8 + 8 + box.Overhead + 1
	curveCookieSize   = 16 + 32 + 32 + 16 // nonce, Box[C' + s'](t)
	curveStatusRefuse = "400"             // ZAP's status code for a refused key, sent in ERROR
)

var (
	curveMessageCommand = []byte("\x07MESSAGE")
	nonceHello          = "CurveZMQHELLO---"
	nonceWelcome        = "WELCOME-"
	nonceCookie         = "COOKIE--"
	nonceInitiate       = "CurveZMQINITIATE"
	nonceVouch          = "VOUCH---"
	nonceReady          = "CurveZMQREADY---"
	nonceMessageServer  = "CurveZMQMESSAGES" // sent by the server
	nonceMessageClient  = "CurveZMQMESSAGEC" // sent by the client
)

// makeNonce builds a 24-byte nonce: a 16-byte prefix and an 8-byte
// big-endian counter.
func makeNonce(prefix string, counter uint64) *[24]byte {
	var n [24]byte
	copy(n[:], prefix)
	binary.BigEndian.PutUint64(n[16:], counter)
	return &n
}

// makeLongNonce builds a 24-byte nonce: an 8-byte prefix and 16 given bytes.
func makeLongNonce(prefix string, rest []byte) *[24]byte {
	var n [24]byte
	copy(n[:], prefix)
	copy(n[8:], rest)
	return &n
}

// CurveSession is the state of one connection after a CURVE handshake:
// the key of its boxes and the nonces of each direction. Sending and
// receiving may run on two goroutines (each side used by one at a time);
// messages must reach the wire in the order they were sealed.
type CurveSession struct {
	shared     [32]byte
	sendPrefix string
	recvPrefix string
	sendNonce  uint64 // the next nonce to send
	recvNonce  uint64 // the last nonce received
	plain      []byte // sender's scratch: flags and frame, before sealing
}

// appendSealed appends one MESSAGE frame carrying flags and the parts
// (concatenated) of one frame.
func (s *CurveSession) appendSealed(dst []byte, flags byte, parts ...[]byte) []byte {
	s.plain = append(s.plain[:0], flags)
	for _, p := range parts {
		s.plain = append(s.plain, p...)
	}
	size := 8 + 8 + box.Overhead + len(s.plain)
	dst = AppendFrameHeader(dst, 0, size)
	dst = append(dst, curveMessageCommand...)
	dst = binary.BigEndian.AppendUint64(dst, s.sendNonce)
	dst = box.SealAfterPrecomputation(dst, s.plain, makeNonce(s.sendPrefix, s.sendNonce), &s.shared)
	s.sendNonce++
	if cap(s.plain) > 64<<10 {
		s.plain = nil
	}
	return dst
}

// AppendMessageFrame appends one message frame, sealed; more says whether
// another frame of the same message follows.
func (s *CurveSession) AppendMessageFrame(dst []byte, more bool, body []byte) []byte {
	var flags byte
	if more {
		flags = curveFlagMore
	}
	return s.appendSealed(dst, flags, body)
}

// AppendCommand appends a command (PING, PONG, ...) sealed in a MESSAGE.
func (s *CurveSession) AppendCommand(dst []byte, name string, data []byte) []byte {
	return s.appendSealed(dst, curveFlagCommand, []byte{byte(len(name))}, []byte(name), data)
}

// Open decrypts a frame read after the handshake and returns the frame it
// carries, More and Command set from the flags in the box. A frame that
// is not a MESSAGE, is too short, repeats or goes back on a nonce, or
// does not open is an ErrProtocol error: the connection must be closed.
func (s *CurveSession) Open(f Frame) (Frame, error) {
	b := f.Body
	if f.More {
		return Frame{}, protocolErrorf("CURVE MESSAGE with the MORE flag")
	}
	if len(b) < len(curveMessageCommand) || !bytes.Equal(b[:len(curveMessageCommand)], curveMessageCommand) {
		return Frame{}, protocolErrorf("a frame other than MESSAGE after the CURVE handshake")
	}
	if len(b) < curveMessageMin {
		return Frame{}, protocolErrorf("CURVE MESSAGE of %d bytes", len(b))
	}
	nonce := binary.BigEndian.Uint64(b[8:16])
	if nonce <= s.recvNonce {
		return Frame{}, protocolErrorf("CURVE MESSAGE nonce %d after %d", nonce, s.recvNonce)
	}
	plain, ok := box.OpenAfterPrecomputation(make([]byte, 0, len(b)-16-box.Overhead), b[16:], makeNonce(s.recvPrefix, nonce), &s.shared)
	if !ok {
		return Frame{}, protocolErrorf("CURVE MESSAGE does not open")
	}
	s.recvNonce = nonce
	flags := plain[0]
	return Frame{More: flags&curveFlagMore != 0, Command: flags&curveFlagCommand != 0, Body: plain[1:]}, nil
}

// greetingOf returns a ZMTP 3.1 greeting naming mechanism, with the
// as-server flag.
func greetingOf(mechanism string, asServer bool) [greetingSize]byte {
	g := greeting
	clear(g[12:32])
	copy(g[12:32], mechanism)
	if asServer {
		g[32] = 1
	}
	return g
}

// exchangeGreetings sends ours and reads and checks the peer's greeting
// (signature, version 3 or later), and returns the peer's mechanism.
func exchangeGreetings(conn io.Writer, br *bufio.Reader, ours *[greetingSize]byte) (string, error) {
	if _, err := conn.Write(ours[:]); err != nil {
		return "", err
	}
	var peer [greetingSize]byte
	if n, err := io.ReadFull(br, peer[:]); err != nil {
		if (err == io.EOF || err == io.ErrUnexpectedEOF) && (n < 10 || peer[0] == 0xFF && peer[9]&0x01 != 0) {
			// libzmq sends its greeting in parts and hangs up as soon as
			// it reads a mechanism it does not speak, after its
			// signature or before anything of its own.
			return "", fmt.Errorf("%w: the peer hung up after %d bytes of its greeting, on reading ours (mechanism %q): %w", errGreetingCut, n, bytes.TrimRight(ours[12:32], "\x00"), err)
		}
		return "", fmt.Errorf("zmtp: reading greeting: %w", err)
	}
	if peer[0] != 0xFF || peer[9]&0x01 == 0 {
		return "", protocolErrorf("bad greeting signature %x", peer[:10])
	}
	if peer[10] < 3 {
		return "", protocolErrorf("peer speaks ZMTP %d.%d, want 3 or later", peer[10], peer[11])
	}
	return string(bytes.TrimRight(peer[12:32], "\x00")), nil
}

// readHandshakeCommand reads one command frame of the handshake and
// returns its name and data. An ERROR is returned as an error that
// carries its reason, wrapping ErrRefused.
func readHandshakeCommand(br *bufio.Reader, want string) ([]byte, error) {
	f, err := ReadFrame(br, maxHandshakeFrame)
	if err != nil {
		return nil, fmt.Errorf("zmtp: reading %s: %w", want, err)
	}
	if !f.Command {
		return nil, protocolErrorf("message frame during the handshake")
	}
	name, data, err := ParseCommand(f.Body)
	if err != nil {
		return nil, err
	}
	switch name {
	case want:
		return data, nil
	case "ERROR":
		return nil, refusedf("peer sent ERROR %q", errorReason(data))
	default:
		return nil, protocolErrorf("command %q during the handshake, want %s", name, want)
	}
}

// CurveServerHandshake runs the greeting and the CURVE handshake as the
// server, with the long-term key pair keys: it checks the client's
// boxes, the vouch for its long-term key C and, with allowed, that C may
// connect (if not, it sends ERROR "400" as libzmq does when ZAP refuses a
// key), and that the peer's socket type is peerType. A peer that speaks
// another mechanism is refused without an ERROR, as libzmq refuses it.
// It returns the session and the client's long-term public key. The
// errors say why, and wrap ErrRefused when the refusal is a matter of
// security; they never carry secret material. The caller sets the
// deadline.
func CurveServerHandshake(conn io.Writer, br *bufio.Reader, keys *CurveKeys, allowed func(key *[32]byte) bool, ours, peerType string) (*CurveSession, [32]byte, error) {
	var clientKey [32]byte
	g := greetingOf(mechanismCurve, true)
	mech, err := exchangeGreetings(conn, br, &g)
	if errors.Is(err, errGreetingCut) {
		// A libzmq listener without CURVE (or a port probe).
		return nil, clientKey, fmt.Errorf("%w: listener does not speak CURVE (%w)", ErrRefused, err)
	}
	if err != nil {
		return nil, clientKey, err
	}
	if mech != mechanismCurve {
		return nil, clientKey, refusedf("listener's security mechanism is %q; CURVE is required", mech)
	}

	// HELLO: version, padding, C', nonce, Box[64 zeros](C'->S).
	data, err := readHandshakeCommand(br, "HELLO")
	if err != nil {
		return nil, clientKey, err
	}
	if len(data) != curveHelloSize-6 {
		return nil, clientKey, protocolErrorf("CURVE HELLO of %d bytes, want %d", len(data)+6, curveHelloSize)
	}
	if data[0] != 1 || data[1] != 0 {
		return nil, clientKey, protocolErrorf("CURVE HELLO version %d.%d, want 1.0", data[0], data[1])
	}
	for _, b := range data[2:74] {
		if b != 0 {
			return nil, clientKey, protocolErrorf("CURVE HELLO padding is not zero")
		}
	}
	var cnClient [32]byte
	copy(cnClient[:], data[74:106])
	helloNonce := binary.BigEndian.Uint64(data[106:114])
	sig, ok := box.Open(nil, data[114:194], makeNonce(nonceHello, helloNonce), &cnClient, &keys.Secret)
	if !ok || subtle.ConstantTimeCompare(sig, make([]byte, 64)) != 1 {
		return nil, clientKey, refusedf("CURVE HELLO does not open: the listener has another server key")
	}

	// WELCOME: Box[S' + cookie](S->C'), cookie = nonce + Box[C' + s'](t)
	// with a cookie key t of this connection.
	cnPublic, cnSecret, err := box.GenerateKey(rand.Reader)
	if err != nil {
		return nil, clientKey, err
	}
	var cookieKey [32]byte
	var random [32]byte
	if _, err := rand.Read(cookieKey[:]); err != nil {
		return nil, clientKey, err
	}
	if _, err := rand.Read(random[:]); err != nil {
		return nil, clientKey, err
	}
	cookieNonce, welcomeNonce := random[:16], random[16:]
	cookie := append([]byte(nil), cookieNonce...)
	cookie = secretbox.Seal(cookie, append(cnClient[:], cnSecret[:]...), makeLongNonce(nonceCookie, cookieNonce), &cookieKey)
	welcome := append([]byte(nil), welcomeNonce...)
	welcome = box.Seal(welcome, append(cnPublic[:], cookie...), makeLongNonce(nonceWelcome, welcomeNonce), &cnClient, &keys.Secret)
	if _, err := conn.Write(AppendCommand(nil, "WELCOME", welcome)); err != nil {
		return nil, clientKey, err
	}

	// INITIATE: cookie, nonce, Box[C + vouch nonce + vouch + metadata](C'->S').
	data, err = readHandshakeCommand(br, "INITIATE")
	if err != nil {
		return nil, clientKey, err
	}
	if len(data) < curveInitiateMin-9 {
		return nil, clientKey, protocolErrorf("CURVE INITIATE of %d bytes, want at least %d", len(data)+9, curveInitiateMin)
	}
	cookiePlain, ok := secretbox.Open(nil, data[16:96], makeLongNonce(nonceCookie, data[:16]), &cookieKey)
	if !ok || subtle.ConstantTimeCompare(cookiePlain[:32], cnClient[:]) != 1 || subtle.ConstantTimeCompare(cookiePlain[32:], cnSecret[:]) != 1 {
		return nil, clientKey, refusedf("CURVE INITIATE cookie is not ours")
	}
	initiateNonce := binary.BigEndian.Uint64(data[96:104])
	if initiateNonce <= helloNonce {
		return nil, clientKey, protocolErrorf("CURVE INITIATE nonce %d after %d", initiateNonce, helloNonce)
	}
	s := &CurveSession{sendPrefix: nonceMessageServer, recvPrefix: nonceMessageClient, sendNonce: 1, recvNonce: initiateNonce}
	box.Precompute(&s.shared, &cnClient, cnSecret)
	plain, ok := box.OpenAfterPrecomputation(nil, data[104:], makeNonce(nonceInitiate, initiateNonce), &s.shared)
	if !ok {
		return nil, clientKey, refusedf("CURVE INITIATE does not open")
	}
	copy(clientKey[:], plain[:32])
	vouch, ok := box.Open(nil, plain[48:128], makeLongNonce(nonceVouch, plain[32:48]), &clientKey, cnSecret)
	if !ok || subtle.ConstantTimeCompare(vouch[:32], cnClient[:]) != 1 || subtle.ConstantTimeCompare(vouch[32:], keys.Public[:]) != 1 {
		return nil, clientKey, refusedf("CURVE INITIATE vouch does not hold for the key %s", z85.EncodeKey(clientKey))
	}
	if allowed != nil && !allowed(&clientKey) {
		writeError(conn, curveStatusRefuse)
		return nil, clientKey, refusedf("listener's CURVE key %s is not allowed", z85.EncodeKey(clientKey))
	}
	props, err := parseProperties(plain[128:])
	if err != nil {
		return nil, clientKey, err
	}
	if got := props["socket-type"]; got != peerType {
		return nil, clientKey, protocolErrorf("peer socket type %q, want %q", got, peerType)
	}

	// READY: nonce, Box[metadata](S'->C').
	ready := binary.BigEndian.AppendUint64(nil, s.sendNonce)
	ready = box.SealAfterPrecomputation(ready, appendProperty(nil, "Socket-Type", ours), makeNonce(nonceReady, s.sendNonce), &s.shared)
	s.sendNonce++
	if _, err := conn.Write(AppendCommand(nil, "READY", ready)); err != nil {
		return nil, clientKey, err
	}
	return s, clientKey, nil
}

// CurveClientHandshake runs the greeting and the CURVE handshake as a
// client with the long-term key pair keys, to a server whose long-term
// public key is serverKey, and checks that the server's socket type is
// peerType. A server that refuses the key answers ERROR: the error wraps
// ErrRefused. The caller sets the deadline.
func CurveClientHandshake(conn io.Writer, br *bufio.Reader, keys *CurveKeys, serverKey *[32]byte, ours, peerType string) (*CurveSession, error) {
	g := greetingOf(mechanismCurve, false)
	mech, err := exchangeGreetings(conn, br, &g)
	if err != nil {
		return nil, err
	}
	if mech != mechanismCurve {
		return nil, refusedf("server's security mechanism is %q, not CURVE", mech)
	}
	cnPublic, cnSecret, err := box.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	s := &CurveSession{sendPrefix: nonceMessageClient, recvPrefix: nonceMessageServer, sendNonce: 1}

	// HELLO
	hello := make([]byte, 0, curveHelloSize-6)
	hello = append(hello, 1, 0)
	hello = append(hello, make([]byte, 72)...)
	hello = append(hello, cnPublic[:]...)
	hello = binary.BigEndian.AppendUint64(hello, s.sendNonce)
	hello = box.Seal(hello, make([]byte, 64), makeNonce(nonceHello, s.sendNonce), serverKey, cnSecret)
	s.sendNonce++
	if _, err := conn.Write(AppendCommand(nil, "HELLO", hello)); err != nil {
		return nil, err
	}

	// WELCOME
	data, err := readHandshakeCommand(br, "WELCOME")
	if err != nil {
		return nil, err
	}
	if len(data) != curveWelcomeSize-8 {
		return nil, protocolErrorf("CURVE WELCOME of %d bytes, want %d", len(data)+8, curveWelcomeSize)
	}
	welcome, ok := box.Open(nil, data[16:], makeLongNonce(nonceWelcome, data[:16]), serverKey, cnSecret)
	if !ok {
		return nil, refusedf("CURVE WELCOME does not open: the server has another key")
	}
	var cnServer [32]byte
	copy(cnServer[:], welcome[:32])
	cookie := welcome[32:128]
	box.Precompute(&s.shared, &cnServer, cnSecret)

	// INITIATE
	var vouchNonce [16]byte
	if _, err := rand.Read(vouchNonce[:]); err != nil {
		return nil, err
	}
	vouch := box.Seal(nil, append(cnPublic[:], serverKey[:]...), makeLongNonce(nonceVouch, vouchNonce[:]), &cnServer, &keys.Secret)
	plain := append(append(append(keys.Public[:], vouchNonce[:]...), vouch...), appendProperty(nil, "Socket-Type", ours)...)
	initiate := append([]byte(nil), cookie...)
	initiate = binary.BigEndian.AppendUint64(initiate, s.sendNonce)
	initiate = box.SealAfterPrecomputation(initiate, plain, makeNonce(nonceInitiate, s.sendNonce), &s.shared)
	s.sendNonce++
	if _, err := conn.Write(AppendCommand(nil, "INITIATE", initiate)); err != nil {
		return nil, err
	}

	// READY
	data, err = readHandshakeCommand(br, "READY")
	if err != nil {
		return nil, err
	}
	if len(data) < 8+box.Overhead {
		return nil, protocolErrorf("CURVE READY of %d bytes", len(data)+6)
	}
	s.recvNonce = binary.BigEndian.Uint64(data[:8])
	meta, ok := box.OpenAfterPrecomputation(nil, data[8:], makeNonce(nonceReady, s.recvNonce), &s.shared)
	if !ok {
		return nil, protocolErrorf("CURVE READY does not open")
	}
	props, err := parseProperties(meta)
	if err != nil {
		return nil, err
	}
	if got := props["socket-type"]; got != peerType {
		return nil, protocolErrorf("peer socket type %q, want %q", got, peerType)
	}
	return s, nil
}
