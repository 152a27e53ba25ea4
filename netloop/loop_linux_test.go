package netloop

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// echo is a handler that writes back every byte it reads, repeated rep
// times (to produce more output than a socket buffer holds).
type echo struct {
	rep    int
	closed chan struct{}
	once   sync.Once
}

func (e *echo) Readable(c *Conn) {
	buf := make([]byte, 4096)
	n, err := c.Read(buf)
	if err == ErrWouldBlock {
		return
	}
	if err != nil {
		c.Close()
		return
	}
	for i := 0; i < e.rep; i++ {
		c.Write(buf[:n])
	}
}

func (e *echo) Closed(*Conn) { e.once.Do(func() { close(e.closed) }) }

// serve starts a loop and a listener whose connections it adds to it.
func serve(t *testing.T, h Handler) (addr string, l *Loop) {
	l, err := New()
	require.NoError(t, err)
	done := make(chan struct{})
	go func() { defer close(done); l.Run() }()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			fd, err := TakeFD(nc)
			require.NoError(t, err)
			l.Submit(func() { l.Add(fd, h) })
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		l.Stop()
		<-done
	})
	return ln.Addr().String(), l
}

func TestEcho(t *testing.T) {
	h := &echo{rep: 1, closed: make(chan struct{})}
	addr, _ := serve(t, h)
	nc, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer nc.Close()
	for i := 0; i < 100; i++ {
		_, err := nc.Write([]byte("hello\n"))
		require.NoError(t, err)
		line, err := bufio.NewReader(nc).ReadString('\n')
		require.NoError(t, err)
		require.Equal(t, "hello\n", line)
	}
	nc.Close()
	select {
	case <-h.closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Closed not called after the peer went away")
	}
}

// A reply larger than the socket buffers is written in parts as the
// socket drains; nothing is lost or reordered.
func TestLargeOutput(t *testing.T) {
	h := &echo{rep: 20000, closed: make(chan struct{})}
	addr, _ := serve(t, h)
	nc, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer nc.Close()
	msg := []byte("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")
	_, err = nc.Write(msg)
	require.NoError(t, err)
	time.Sleep(50 * time.Millisecond) // let the server fill the socket first
	got := make([]byte, len(msg)*h.rep)
	_, err = io.ReadFull(nc, got)
	require.NoError(t, err)
	require.Equal(t, bytes.Repeat(msg, h.rep), got)
}

// detacher detaches on input and answers from another goroutine.
type detacher struct{}

func (detacher) Readable(c *Conn) {
	buf := make([]byte, 64)
	n, err := c.Read(buf)
	if err != nil {
		if err != ErrWouldBlock {
			c.Close()
		}
		return
	}
	c.Detach()
	reply := append([]byte("late:"), buf[:n]...)
	go func() {
		time.Sleep(10 * time.Millisecond)
		c.Loop().Submit(func() {
			c.Write(reply)
			c.Attach()
		})
	}()
}

func (detacher) Closed(*Conn) {}

func TestDetachAttach(t *testing.T) {
	addr, _ := serve(t, detacher{})
	nc, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer nc.Close()
	rd := bufio.NewReader(nc)
	for i := 0; i < 5; i++ {
		_, err := nc.Write([]byte("x\n"))
		require.NoError(t, err)
		line, err := rd.ReadString('\n')
		require.NoError(t, err)
		require.Equal(t, "late:x\n", line)
	}
}

func TestStopClosesConnections(t *testing.T) {
	h := &echo{rep: 1, closed: make(chan struct{})}
	l, err := New()
	require.NoError(t, err)
	done := make(chan struct{})
	go func() { defer close(done); l.Run() }()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK, 0)
	require.NoError(t, err)
	defer syscall.Close(fds[1])
	l.Submit(func() { l.Add(fds[0], h) })
	l.Stop()
	<-done
	<-h.closed
}

// refWriter answers each input byte with a large buffer written by
// reference between two small copied writes, so that output piles up
// behind a socket that does not take it all.
type refWriter struct {
	big    [][]byte
	closed chan struct{}
	once   sync.Once
}

func (h *refWriter) Readable(c *Conn) {
	buf := make([]byte, 64)
	n, err := c.Read(buf)
	if err == ErrWouldBlock {
		return
	}
	if err != nil {
		c.Close()
		return
	}
	for _, b := range buf[:n] {
		i := int(b - '0')
		c.Write([]byte{'<', b})
		c.WriteBuffers([][]byte{{'['}, h.big[i], {']'}})
		c.Write([]byte{'>'})
	}
}

func (h *refWriter) Closed(*Conn) { h.once.Do(func() { close(h.closed) }) }

// WriteBuffers keeps what the socket does not take by reference and
// sends everything in order with the copied writes around it.
func TestWriteBuffersInOrder(t *testing.T) {
	h := &refWriter{closed: make(chan struct{})}
	var want bytes.Buffer
	for i := 0; i < 4; i++ {
		b := bytes.Repeat([]byte{byte('a' + i)}, (i+1)*3<<20)
		h.big = append(h.big, b)
	}
	in := []byte("0123210")
	for _, c := range in {
		i := int(c - '0')
		want.WriteString("<" + string(c) + "[")
		want.Write(h.big[i])
		want.WriteString("]>")
	}
	addr, _ := serve(t, h)
	nc, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer nc.Close()
	for _, c := range in {
		_, err := nc.Write([]byte{c})
		require.NoError(t, err)
		time.Sleep(time.Millisecond)
	}
	got := make([]byte, want.Len())
	nc.SetReadDeadline(time.Now().Add(20 * time.Second))
	// Read slowly at first, so that the output waits in the queue.
	time.Sleep(50 * time.Millisecond)
	_, err = io.ReadFull(nc, got)
	require.NoError(t, err)
	require.True(t, bytes.Equal(want.Bytes(), got), "output out of order or changed")
}
