package zmqpub

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFrameRoundTrip(t *testing.T) {
	tests := []struct {
		name       string
		size       int
		more       bool
		wantHeader []byte
	}{
		{"empty last", 0, false, []byte{0x00, 0}},
		{"short more", 3, true, []byte{0x01, 3}},
		{"largest short", 255, false, []byte{0x00, 255}},
		{"smallest long", 256, true, []byte{0x03, 0, 0, 0, 0, 0, 0, 1, 0}},
		{"long", 70000, false, []byte{0x02, 0, 0, 0, 0, 0, 1, 0x11, 0x70}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := bytes.Repeat([]byte{0xAB}, tt.size)
			wire := AppendMessageFrame(nil, tt.more, body)
			require.Equal(t, tt.wantHeader, wire[:len(tt.wantHeader)])
			f, err := ReadFrame(bufio.NewReader(bytes.NewReader(wire)), 1<<20)
			require.NoError(t, err)
			assert.Equal(t, tt.more, f.More)
			assert.False(t, f.Command)
			assert.Equal(t, body, f.Body)
		})
	}
}

func TestReadFrameRefusesBadInput(t *testing.T) {
	huge := binary.BigEndian.AppendUint64([]byte{0x02}, 1<<62)
	tests := []struct {
		name    string
		wire    []byte
		max     int64
		wantErr error
	}{
		{"declared size above the bound", huge, 1024, ErrProtocol},
		{"declared size above int64", binary.BigEndian.AppendUint64([]byte{0x02}, 1<<63+5), 1 << 40, ErrProtocol},
		{"short size above the bound", []byte{0x00, 200}, 100, ErrProtocol},
		{"reserved flag bits", []byte{0x08, 0}, 100, ErrProtocol},
		{"command with MORE", []byte{0x05, 0}, 100, ErrProtocol},
		{"truncated body", []byte{0x00, 5, 'a'}, 100, io.ErrUnexpectedEOF},
		{"truncated long size", []byte{0x02, 0, 0}, 100, io.ErrUnexpectedEOF},
		{"clean end", nil, 100, io.EOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadFrame(bufio.NewReader(bytes.NewReader(tt.wire)), tt.max)
			require.ErrorIs(t, err, tt.wantErr)
		})
	}
}

func TestCommands(t *testing.T) {
	ping := AppendPing(nil, 30, []byte("ctx"))
	f, err := ReadFrame(bufio.NewReader(bytes.NewReader(ping)), 100)
	require.NoError(t, err)
	require.True(t, f.Command)
	name, data, err := ParseCommand(f.Body)
	require.NoError(t, err)
	assert.Equal(t, "PING", name)
	assert.Equal(t, []byte{0, 30, 'c', 't', 'x'}, data)

	pong := AppendPong(nil, data)
	assert.Equal(t, []byte{0x04, 8, 4, 'P', 'O', 'N', 'G', 'c', 't', 'x'}, pong)
	assert.Equal(t, []byte{0x04, 5, 4, 'P', 'O', 'N', 'G'}, AppendPong(nil, []byte{0, 0}), "PING without context")

	for _, body := range [][]byte{nil, {0}, {5, 'P', 'I'}} {
		_, _, err := ParseCommand(body)
		assert.ErrorIs(t, err, ErrProtocol, "%q", body)
	}
}

func TestParseProperties(t *testing.T) {
	data := appendProperty(appendProperty(nil, "Socket-Type", "PULL"), "X-Empty", "")
	props, err := parseProperties(data)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"socket-type": "PULL", "x-empty": ""}, props)

	bad := [][]byte{
		{0},                              // empty name
		{3, 'a', 'b'},                    // name past the end
		{1, 'a', 0, 0, 0},                // value length cut
		{1, 'a', 0xFF, 0xFF, 0xFF, 0xFF}, // value length beyond the frame
	}
	for _, b := range bad {
		_, err := parseProperties(b)
		assert.ErrorIs(t, err, ErrProtocol, "%x", b)
	}
}

// tcpPair returns both ends of a loopback TCP connection.
func tcpPair(t *testing.T) (net.Conn, net.Conn) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	client, err := net.Dial("tcp", l.Addr().String())
	require.NoError(t, err)
	server, err := l.Accept()
	require.NoError(t, err)
	t.Cleanup(func() { client.Close(); server.Close() })
	for _, c := range []net.Conn{client, server} {
		c.SetDeadline(time.Now().Add(10 * time.Second))
	}
	return client, server
}

func TestHandshake(t *testing.T) {
	tests := []struct {
		name               string
		serverType, client string // what each side announces
		wantServerErr      bool
	}{
		{"PUSH to PULL", SocketPush, SocketPull, false},
		{"PUSH to PUSH", SocketPush, SocketPush, true},
		{"PUSH to SUB", SocketPush, "SUB", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client, server := tcpPair(t)
			clientErr := make(chan error, 1)
			go func() {
				clientErr <- Handshake(client, bufio.NewReader(client), tt.client, tt.serverType)
			}()
			err := Handshake(server, bufio.NewReader(server), tt.serverType, SocketPull)
			if tt.wantServerErr {
				require.ErrorIs(t, err, ErrProtocol)
				server.Close()
			} else {
				require.NoError(t, err)
			}
			<-clientErr
		})
	}
}

func TestHandshakeRefusesBadGreeting(t *testing.T) {
	zmtp2 := greeting
	zmtp2[10] = 2
	plain := greeting
	copy(plain[12:32], "PLAIN\x00\x00\x00")
	tests := []struct {
		name     string
		greeting []byte
	}{
		{"HTTP request", []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n" + string(make([]byte, 64)))},
		{"ZMTP 2", zmtp2[:]},
		{"PLAIN mechanism", plain[:]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client, server := tcpPair(t)
			go func() {
				client.Write(tt.greeting)
				io.Copy(io.Discard, client)
			}()
			err := Handshake(server, bufio.NewReader(server), SocketPush, SocketPull)
			require.ErrorIs(t, err, ErrProtocol)
			server.Close()
		})
	}
}

func TestSplitEndpoint(t *testing.T) {
	tests := []struct {
		endpoint, network, address string
		wantErr                    bool
	}{
		{"tcp://127.0.0.1:5555", "tcp", "127.0.0.1:5555", false},
		{"tcp://*:5555", "tcp", ":5555", false},
		{"tcp://[::1]:0", "tcp", "[::1]:0", false},
		{"tcp://localhost:7", "tcp", "localhost:7", false},
		{"ipc:///tmp/x.sock", "unix", "/tmp/x.sock", false},
		{"ipc://rel.sock", "unix", "rel.sock", false},
		{"tcp://127.0.0.1", "", "", true},
		{"tcp://127.0.0.1:", "", "", true},
		{"udp://1.2.3.4:5", "", "", true},
		{"127.0.0.1:5555", "", "", true},
		{"ipc://", "", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.endpoint, func(t *testing.T) {
			network, address, err := SplitEndpoint(tt.endpoint)
			if tt.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.network, network)
			assert.Equal(t, tt.address, address)
		})
	}
}
