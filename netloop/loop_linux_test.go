package netloop

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
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

// flooder answers every read with a megabyte and records, per call, the
// output that was waiting when it was called.
type flooder struct {
	readPending bool
	mu          sync.Mutex
	calls       int
	pendingSeen []int
}

func (f *flooder) Readable(c *Conn) {
	c.SetReadWhilePending(f.readPending)
	f.mu.Lock()
	f.calls++
	f.pendingSeen = append(f.pendingSeen, c.Pending())
	f.mu.Unlock()
	buf := make([]byte, 4096)
	for {
		if _, err := c.Read(buf); err != nil {
			if err != ErrWouldBlock {
				c.Close()
			}
			break
		}
	}
	c.Write(make([]byte, 1<<20))
}

func (f *flooder) Closed(*Conn) {}

func (f *flooder) seen() (int, []int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls, append([]int(nil), f.pendingSeen...)
}

// By default a connection whose output waits is not read; with
// SetReadWhilePending it is, and Pending (read here from another
// goroutine) shows the output growing.
func TestReadWhilePending(t *testing.T) {
	for _, on := range []bool{false, true} {
		f := &flooder{readPending: on}
		addr, _ := serve(t, f)
		nc, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer nc.Close()
		nc.(*net.TCPConn).SetReadBuffer(4096)
		for i := 0; i < 20; i++ {
			_, err := nc.Write([]byte("x"))
			require.NoError(t, err)
			time.Sleep(5 * time.Millisecond)
		}
		if !on {
			time.Sleep(50 * time.Millisecond)
			calls, seen := f.seen()
			for i, p := range seen {
				require.Zero(t, p, "call %d of %d was made with output waiting", i, calls)
			}
			require.Less(t, calls, 20, "the connection was read while its output waited")
			continue
		}
		require.Eventually(t, func() bool {
			calls, seen := f.seen()
			return calls > 0 && seen[len(seen)-1] > 1<<20
		}, 5*time.Second, 5*time.Millisecond, "the connection was not read while its output waited: %v", fmt.Sprint(f.seen()))
	}
}

// drainer writes a large payload on the first input and reports, through
// OnDrained, when the socket took all of it.
type drainer struct {
	payload []byte
	drained chan struct{}
	closed  chan struct{}
}

func (d *drainer) Readable(c *Conn) {
	buf := make([]byte, 64)
	if _, err := c.Read(buf); err != nil {
		if err != ErrWouldBlock {
			c.Close()
		}
		return
	}
	c.Write(d.payload)
	c.OnDrained(func() { close(d.drained) })
}

func (d *drainer) Closed(*Conn) { close(d.closed) }

// TestOnDrained: the callback runs only once the peer has read what the
// socket could not take at once, and runs at once when nothing waits.
func TestOnDrained(t *testing.T) {
	d := &drainer{payload: bytes.Repeat([]byte("x"), 32<<20), drained: make(chan struct{}), closed: make(chan struct{})}
	addr, _ := serve(t, d)
	nc, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer nc.Close()
	_, err = nc.Write([]byte("go"))
	require.NoError(t, err)
	time.Sleep(50 * time.Millisecond)
	select {
	case <-d.drained:
		t.Fatal("drained before the peer read the payload")
	default:
	}
	n, err := io.CopyN(io.Discard, nc, int64(len(d.payload)))
	require.NoError(t, err)
	require.Equal(t, int64(len(d.payload)), n)
	select {
	case <-d.drained:
	case <-time.After(5 * time.Second):
		t.Fatal("not drained after the peer read everything")
	}
}

// sequencer answers every input byte with numbered lines, one in ten
// padded past a chunk (35 MB for 20 bytes, more than the sockets hold),
// while its output waits: the output kept in chunks must reach the peer
// whole and in order.
type sequencer struct {
	next int
}

func (q *sequencer) Readable(c *Conn) {
	c.SetReadWhilePending(true)
	buf := make([]byte, 64)
	for {
		n, err := c.Read(buf)
		if err != nil {
			if err != ErrWouldBlock {
				c.Close()
			}
			return
		}
		for range n {
			for range 1000 {
				line := strconv.Itoa(q.next)
				if q.next%10 == 0 {
					line += ":" + strings.Repeat("p", outChunk+q.next%1000)
				}
				c.Write([]byte(line + "\n"))
				q.next++
			}
		}
	}
}

func (q *sequencer) Closed(*Conn) {}

func TestChunkedOutputInOrder(t *testing.T) {
	q := &sequencer{}
	addr, _ := serve(t, q)
	nc, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer nc.Close()
	const rounds = 20
	for range rounds {
		_, err := nc.Write([]byte("x"))
		require.NoError(t, err)
		time.Sleep(2 * time.Millisecond)
	}
	nc.SetReadDeadline(time.Now().Add(20 * time.Second))
	sc := bufio.NewScanner(nc)
	sc.Buffer(nil, 4*outChunk)
	for want := 0; want < rounds*1000; want++ {
		require.True(t, sc.Scan(), "line %d: %v", want, sc.Err())
		num, pad, _ := strings.Cut(sc.Text(), ":")
		require.Equal(t, strconv.Itoa(want), num)
		if want%10 == 0 {
			require.True(t, pad == strings.Repeat("p", outChunk+want%1000), "line %d: padding of %d bytes", want, len(pad))
		}
	}
}

// deferrer leaves its reply for AfterHandlers and submits a task that
// writes after it: the task's output must follow the deferred reply.
type deferrer struct {
	l       *Loop
	waiting []*Conn
	seen    chan [2]bool // Handling() in the handler, and in the task
}

func (d *deferrer) Readable(c *Conn) {
	buf := make([]byte, 64)
	if _, err := c.Read(buf); err != nil {
		if err != ErrWouldBlock {
			c.Close()
		}
		return
	}
	inHandler := d.l.Handling()
	d.waiting = append(d.waiting, c)
	d.l.Submit(func() {
		c.Write([]byte("task\n"))
		d.seen <- [2]bool{inHandler, d.l.Handling()}
	})
}

func (d *deferrer) Closed(*Conn) {}

func (d *deferrer) afterHandlers() {
	for _, c := range d.waiting {
		c.Write([]byte("reply\n"))
	}
	d.waiting = d.waiting[:0]
}

func TestAfterHandlersRunsBeforeTasks(t *testing.T) {
	l, err := New()
	require.NoError(t, err)
	d := &deferrer{l: l, seen: make(chan [2]bool, 1)}
	l.AfterHandlers = d.afterHandlers
	done := make(chan struct{})
	go func() { defer close(done); l.Run() }()
	defer func() { l.Stop(); <-done }()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	nc, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer nc.Close()
	sc, err := ln.Accept()
	require.NoError(t, err)
	fd, err := TakeFD(sc)
	require.NoError(t, err)
	l.Submit(func() { l.Add(fd, d) })

	_, err = nc.Write([]byte("go\n"))
	require.NoError(t, err)
	rd := bufio.NewReader(nc)
	nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	first, err := rd.ReadString('\n')
	require.NoError(t, err)
	second, err := rd.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, []string{"reply\n", "task\n"}, []string{first, second})
	require.Equal(t, [2]bool{true, false}, <-d.seen)
}

// A submitter that finds a queue not empty does not wake the loop: the
// turn that takes the queued task must take its own too. Here the loop's
// poll consumes the wake-up for T, then runs the early task E1, during
// which another goroutine submits E2 (an accepted connection while
// another is being attached). When Run took the early tasks and the
// others in two steps, E2 stayed queued with no wake-up pending and the
// loop slept: new connections were never served.
func TestSubmitEarlyWhileEarlyTasksRun(t *testing.T) {
	l, err := New()
	require.NoError(t, err)
	go l.Run()
	defer l.Stop()

	block := make(chan struct{})
	// Hold the loop in a task, so that T and E1 are taken by one turn.
	l.Submit(func() { <-block })
	time.Sleep(20 * time.Millisecond)

	ran := make(chan struct{})
	l.Submit(func() {})    // T: the queues are empty, so it wakes the loop
	l.SubmitEarly(func() { // E1: tasks holds T, no wake-up of its own
		done := make(chan struct{})
		go func() {
			l.SubmitEarly(func() { close(ran) }) // E2
			close(done)
		}()
		<-done
	})
	close(block)
	select {
	case <-ran:
	case <-time.After(10 * time.Second):
		t.Fatal("E2, submitted while the loop ran E1, never ran: the loop slept with a task queued")
	}
}
