package bus

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zredis/zredis/internal/testsupport"
)

// readMessage reads one framed message from c.
func readMessage(c net.Conn) (*Message, error) {
	first := make([]byte, 8)
	if _, err := io.ReadFull(c, first); err != nil {
		return nil, err
	}
	n, err := FrameLen(first, 1<<20)
	if err != nil {
		return nil, err
	}
	b := make([]byte, n)
	copy(b, first)
	if _, err := io.ReadFull(c, b[8:]); err != nil {
		return nil, err
	}
	return Parse(b)
}

// do sends one inline command and returns its reply's first line and,
// for a bulk reply, its body.
func do(rd *bufio.Reader, c net.Conn, args ...string) (string, error) {
	if _, err := fmt.Fprintf(c, "%s\r\n", strings.Join(args, " ")); err != nil {
		return "", err
	}
	line, err := rd.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	if !strings.HasPrefix(line, "$") {
		return line, nil
	}
	n, err := strconv.Atoi(line[1:])
	if err != nil || n < 0 {
		return "", fmt.Errorf("bulk length %q", line)
	}
	body := make([]byte, n+2)
	if _, err := io.ReadFull(rd, body); err != nil {
		return "", err
	}
	return string(body[:n]), nil
}

// command is do on the test's goroutine, which fails the test on an
// error.
func command(t *testing.T, rd *bufio.Reader, c net.Conn, args ...string) string {
	t.Helper()
	reply, err := do(rd, c, args...)
	require.NoError(t, err)
	return reply
}

// nodeLine is the line of CLUSTER NODES that starts with name, "" when
// there is none or the command failed; for Eventually's conditions,
// which run on another goroutine.
func nodeLine(rd *bufio.Reader, c net.Conn, name Name) string {
	nodes, err := do(rd, c, "CLUSTER", "NODES")
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(nodes, "\n") {
		if strings.HasPrefix(l, string(name[:])) {
			return l
		}
	}
	return ""
}

// A real redis-server 7.0 in cluster mode and a node speaking this
// package: redis-server's MEET parses, the PONG made with Append
// completes its handshake (it then lists the node, by the name the PONG
// gave, as a connected master), and it answers a PING from that node
// with a PONG that parses.
func TestHandshakeWithRedis(t *testing.T) {
	cport := testsupport.FreePort(t)
	r := testsupport.StartRedis(t, "--cluster-enabled", "yes", "--cluster-port", strconv.Itoa(cport))
	cli, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(r.Port))
	require.NoError(t, err)
	defer cli.Close()
	cli.SetDeadline(time.Now().Add(30 * time.Second))
	rd := bufio.NewReader(cli)
	redisID := command(t, rd, cli, "CLUSTER", "MYID")
	require.Len(t, redisID, NameLen)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	ourCport := uint16(ln.Addr().(*net.TCPAddr).Port)
	const ourPort = 6999 // announced only: redis-server does not connect to it
	var ourName Name
	copy(ourName[:], "0123456789abcdef0123456789abcdef01234567")
	pong := func() []byte {
		h := Header{Type: Pong, Port: ourPort, CPort: ourCport, Sender: ourName, Flags: FlagMaster}
		h.Slots.Set(100)
		return (&Message{Header: h, Hostname: "zredis-test"}).Append(nil)
	}

	require.Equal(t, "+OK", command(t, rd, cli, "CLUSTER", "MEET", "127.0.0.1", strconv.Itoa(ourPort), strconv.Itoa(int(ourCport))))
	ln.(*net.TCPListener).SetDeadline(time.Now().Add(10 * time.Second))
	in, err := ln.Accept()
	require.NoError(t, err)
	defer in.Close()
	in.SetDeadline(time.Now().Add(30 * time.Second))

	meet, err := readMessage(in)
	require.NoError(t, err)
	require.Equal(t, Meet, meet.Type)
	require.Equal(t, redisID, string(meet.Sender[:]))
	require.EqualValues(t, r.Port, meet.Port)
	require.EqualValues(t, cport, meet.CPort)
	require.Equal(t, FlagMaster|FlagMyself, meet.Flags)
	require.True(t, meet.ReplicaOf.IsZero())
	require.Equal(t, "", meet.IP)
	_, err = in.Write(pong())
	require.NoError(t, err)

	// redis-server pings the node on this link from now on; it gets its
	// PONGs.
	// The reader stops when the test closes the link, and the test
	// waits for it.
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		for {
			m, err := readMessage(in)
			if err != nil {
				return
			}
			if m.Type == Ping {
				in.Write(pong())
			}
		}
	}()
	defer func() {
		in.Close()
		<-exited
	}()

	var line string
	require.Eventually(t, func() bool {
		line = nodeLine(rd, cli, ourName)
		return strings.Contains(line, " connected")
	}, 10*time.Second, 50*time.Millisecond, "CLUSTER NODES does not list the node as connected")
	f := strings.Fields(line)
	require.True(t, strings.HasPrefix(f[1], fmt.Sprintf("127.0.0.1:%d@%d", ourPort, ourCport)), line)
	require.Equal(t, "master", f[2], line)
	require.Equal(t, "-", f[3], line)

	// The node's own link to redis-server's bus.
	out, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(cport))
	require.NoError(t, err)
	defer out.Close()
	out.SetDeadline(time.Now().Add(10 * time.Second))
	h := Header{Type: Ping, Port: ourPort, CPort: ourCport, Sender: ourName, Flags: FlagMaster}
	h.Slots.Set(100)
	_, err = out.Write((&Message{Header: h, Hostname: "zredis-test"}).Append(nil))
	require.NoError(t, err)
	reply, err := readMessage(out)
	require.NoError(t, err)
	require.Equal(t, Pong, reply.Type)
	require.Equal(t, redisID, string(reply.Sender[:]))
	require.Equal(t, FlagMaster|FlagMyself, reply.Flags)

	// The hostname the messages carry, and the slot they claim, which
	// no node had.
	require.Eventually(t, func() bool {
		f := strings.Fields(nodeLine(rd, cli, ourName))
		return len(f) > 8 && f[1] == fmt.Sprintf("127.0.0.1:%d@%d,zredis-test", ourPort, ourCport) && f[8] == "100"
	}, 10*time.Second, 50*time.Millisecond, "CLUSTER NODES does not show the hostname and the slot")
}
