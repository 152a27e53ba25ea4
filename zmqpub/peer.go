package zmqpub

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

const (
	// maxPeerFrame bounds a frame a listener may send after the
	// handshake: a PULL socket sends only commands (PING, PONG, ERROR),
	// all far smaller.
	maxPeerFrame = 1024
	// controlQueue bounds the PONGs waiting for the writer; a peer that
	// pings faster than they can be written loses some answers.
	controlQueue = 8
	// copyLimit is the largest frame body copied next to the frame
	// headers; larger bodies are written from the message's own memory
	// with writev.
	copyLimit = 16 << 10
	// maxQueuedBytes bounds the bytes queued for one peer besides the
	// message count, so that large messages taken from the source (and
	// so out of reach of its memory bound) do not pile up in a peer's
	// queue. A peer with an empty queue always takes one message, however
	// large.
	maxQueuedBytes = 32 << 20
	// maxBatch and maxBatchBytes bound the messages the writer takes
	// from its queue for one writev.
	maxBatch      = 64
	maxBatchBytes = 256 << 10
)

// peer is one handshaken listener: a bounded queue filled by the
// dispatcher, a writer goroutine that owns every write to the connection,
// and a reader goroutine that answers PINGs and notices a close at once.
type peer struct {
	pub         *Publisher
	conn        net.Conn
	br          *bufio.Reader
	queue       chan Message // sent to by the dispatcher only, under pub.mu
	queuedBytes atomic.Int64 // sum of the Size of the messages in queue
	control     chan []byte  // the data of PINGs to answer, for the writer
	// curve is the CURVE session of a peer that handshook with CURVE, nil
	// for NULL: the reader opens every frame with it, the writer seals.
	curve *CurveSession
	// curveKey is the listener's long-term key, which CONFIG SET of the
	// allowed keys may revoke.
	curveKey   [32]byte
	done       chan struct{}
	once       sync.Once
	readerDone chan struct{}

	// writer-owned scratch space, reused across batches
	batch   []Message
	scratch []byte
	pieces  []piece
	ends    []int64 // offset in the batch's bytes where each message ends
	bufs    net.Buffers
}

// piece is a part of an outgoing message: either a range of the scratch
// buffer or a large frame body written in place.
type piece struct {
	start, end int
	body       []byte
}

func newPeer(pub *Publisher, conn net.Conn, br *bufio.Reader, curve *CurveSession) *peer {
	return &peer{
		pub:        pub,
		conn:       conn,
		br:         br,
		curve:      curve,
		queue:      make(chan Message, pub.cfg.PeerQueue),
		control:    make(chan []byte, controlQueue),
		done:       make(chan struct{}),
		readerDone: make(chan struct{}),
	}
}

// hasRoom reports whether the dispatcher may queue another message.
func (pr *peer) hasRoom() bool {
	n := len(pr.queue)
	return n == 0 || n < cap(pr.queue) && pr.queuedBytes.Load() < maxQueuedBytes
}

// shutdown stops both goroutines: it closes done and the connection, which
// unblocks a pending read or write. Safe to call many times.
func (pr *peer) shutdown() {
	pr.once.Do(func() {
		close(pr.done)
		pr.conn.Close()
	})
}

// readLoop reads the commands a PULL peer sends, answering PING with PONG
// through the writer, until an error, an EOF, an ERROR command, a message
// frame or an oversized frame; then it shuts the peer down.
func (pr *peer) readLoop() {
	defer pr.pub.wg.Done()
	defer close(pr.readerDone)
	defer pr.shutdown()
	for {
		f, err := ReadFrame(pr.br, maxPeerFrame)
		if err == nil && pr.curve != nil {
			f, err = pr.curve.Open(f)
		}
		if err != nil {
			pr.logClose(err)
			return
		}
		if !f.Command {
			pr.logClose(protocolErrorf("a PULL listener sent a message frame"))
			return
		}
		name, data, err := ParseCommand(f.Body)
		if err != nil {
			pr.logClose(err)
			return
		}
		switch name {
		case "PING":
			pr.honourTTL(data)
			select {
			case pr.control <- data:
			default:
			}
		case "ERROR":
			pr.logClose(errors.New("listener sent ERROR: " + errorReason(data)))
			return
		default:
			// PONG and commands of later ZMTP versions need no answer.
		}
	}
}

// honourTTL applies the TTL of a PING (ZMTP 3.1): a peer that announces
// one asks to be dropped when nothing arrives from it for that long; its
// next PING moves the deadline on. A TTL of 0 clears it.
func (pr *peer) honourTTL(ping []byte) {
	if len(ping) < 2 {
		return
	}
	var deadline time.Time
	if ttl := binary.BigEndian.Uint16(ping); ttl > 0 {
		deadline = time.Now().Add(time.Duration(ttl) * 100 * time.Millisecond)
	}
	pr.conn.SetReadDeadline(deadline)
}

// logClose logs why the reader stops, unless the peer was shut down by us
// or simply went away.
func (pr *peer) logClose(err error) {
	select {
	case <-pr.done:
		return
	default:
	}
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, net.ErrClosed):
	case errors.Is(err, os.ErrDeadlineExceeded):
		pr.pub.cfg.Logf("zmqpub: listener %s silent past the TTL of its PING; dropped", pr.conn.RemoteAddr())
	default:
		pr.pub.cfg.Logf("zmqpub: listener %s: %v", pr.conn.RemoteAddr(), err)
	}
}

// writeLoop owns every write to the connection: queued messages and
// control commands. When it stops (shutdown, or a failed write) it waits
// for the reader, unlists the peer and hands back, in order, the messages
// not written whole and those still queued.
func (pr *peer) writeLoop() {
	defer pr.pub.wg.Done()
	var unwritten []Message
	defer func() {
		pr.shutdown()
		<-pr.readerDone
		pr.pub.removePeer(pr)
		for len(pr.queue) > 0 {
			unwritten = append(unwritten, <-pr.queue)
		}
		pr.pub.requeue(unwritten)
		pr.pub.signalRoom() // the queue order may have shifted; let the dispatcher look again
	}()
	for {
		select {
		case <-pr.done:
			return
		default:
		}
		select {
		case <-pr.done:
			return
		case ping := <-pr.control:
			if pr.curve != nil {
				pr.scratch = pr.curve.AppendCommand(pr.scratch[:0], "PONG", PongContext(ping))
			} else {
				pr.scratch = AppendPong(pr.scratch[:0], ping)
			}
			if _, err := pr.conn.Write(pr.scratch); err != nil {
				return
			}
		case m := <-pr.queue:
			batch := pr.takeBatch(m)
			written, err := pr.writeMessages(batch)
			if written > 0 {
				pr.pub.sent.Add(int64(written))
				if pr.pub.cfg.OnSent != nil {
					now := time.Now()
					for i := range batch[:written] {
						pr.pub.cfg.OnSent(&batch[i], now)
					}
				}
			}
			if err != nil {
				unwritten = append(unwritten, batch[written:]...)
				return
			}
			clear(batch) // drop references to the frames
		}
	}
}

// takeBatch returns first and the messages queued behind it, up to
// maxBatch messages or about maxBatchBytes, to be written in one system
// call; it tells the dispatcher about the room made.
func (pr *peer) takeBatch(first Message) []Message {
	batch := append(pr.batch[:0], first)
	size := first.Size()
collect:
	for len(batch) < maxBatch && size < maxBatchBytes {
		select {
		case m := <-pr.queue:
			batch = append(batch, m)
			size += m.Size()
		default:
			break collect
		}
	}
	pr.batch = batch
	pr.queuedBytes.Add(-int64(size))
	pr.pub.signalRoom()
	return batch
}

// writeMessages writes every message's frames (MORE on all but the last)
// with one writev: frame headers and small bodies are copied into one
// scratch buffer, bodies above copyLimit are written from their own
// memory. It returns how many leading messages reached the socket whole;
// a message cut by a failed write is not among them (a ZMTP receiver
// drops a partial message).
func (pr *peer) writeMessages(ms []Message) (written int, err error) {
	if pr.curve != nil {
		return pr.writeSealed(ms)
	}
	pr.scratch = pr.scratch[:0]
	pr.pieces = pr.pieces[:0]
	pr.ends = pr.ends[:0]
	start, wireSize := 0, int64(0)
	for k := range ms {
		m := &ms[k]
		for i, n := 0, m.wireFrames(); i < n; i++ {
			body := m.wireFrame(i)
			var flags byte
			if i < n-1 {
				flags = flagMore
			}
			headerStart := len(pr.scratch)
			pr.scratch = AppendFrameHeader(pr.scratch, flags, len(body))
			wireSize += int64(len(pr.scratch)-headerStart) + int64(len(body))
			if len(body) <= copyLimit {
				pr.scratch = append(pr.scratch, body...)
				continue
			}
			pr.pieces = append(pr.pieces, piece{start: start, end: len(pr.scratch)}, piece{body: body})
			start = len(pr.scratch)
		}
		pr.ends = append(pr.ends, wireSize)
	}
	if start < len(pr.scratch) {
		pr.pieces = append(pr.pieces, piece{start: start, end: len(pr.scratch)})
	}
	pr.bufs = pr.bufs[:0]
	for _, pc := range pr.pieces {
		if pc.body != nil {
			pr.bufs = append(pr.bufs, pc.body)
		} else {
			pr.bufs = append(pr.bufs, pr.scratch[pc.start:pc.end])
		}
	}
	// WriteTo consumes its receiver; write through a copy of the slice
	// header so that pr.bufs keeps its backing array for the next batch.
	bufs := pr.bufs
	n, err := bufs.WriteTo(pr.conn)
	clear(pr.bufs) // drop references to the messages' frames
	if cap(pr.scratch) > 2*maxBatchBytes {
		pr.scratch = nil // a batch of many mid-sized frames; do not keep it
	}
	if err == nil {
		return len(ms), nil
	}
	for written < len(ms) && pr.ends[written] <= n {
		written++
	}
	return written, err
}

// writeSealed is writeMessages for a CURVE peer: every frame is sealed in
// a MESSAGE of its own, into the scratch buffer, and the batch written
// with one write.
func (pr *peer) writeSealed(ms []Message) (written int, err error) {
	pr.scratch = pr.scratch[:0]
	pr.ends = pr.ends[:0]
	for k := range ms {
		m := &ms[k]
		for i, n := 0, m.wireFrames(); i < n; i++ {
			pr.scratch = pr.curve.AppendMessageFrame(pr.scratch, i < n-1, m.wireFrame(i))
		}
		pr.ends = append(pr.ends, int64(len(pr.scratch)))
	}
	n, err := pr.conn.Write(pr.scratch)
	if cap(pr.scratch) > 2*maxBatchBytes {
		pr.scratch = nil
	}
	if err == nil {
		return len(ms), nil
	}
	for written < len(ms) && pr.ends[written] <= int64(n) {
		written++
	}
	return written, err
}
