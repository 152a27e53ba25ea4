package replication

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/keyspace"
)

// startSync takes the snapshot that rs (replicas waiting for an RDB,
// all with the same rdbReq) synchronise from, tells them its offset
// (+FULLRESYNC, in c's reply when the PSYNC command itself starts it,
// else through their loops), and starts the goroutine that sends it. An
// RDB without keys needs no snapshot. Under the lock, between execution
// units.
func (m *Master) startSync(rs []*replica, diskless bool, c *engine.Ctx) {
	var snap *keyspace.Snapshot
	if rs[0].req&reqExcludeData == 0 {
		snap = m.ks.Snapshot()
	}
	var functions []string
	if rs[0].req&reqExcludeFunctions == 0 {
		functions = m.host.FunctionCodes()
	}
	off := m.stream.Offset()
	// The RDB says where the stream goes on (repl-stream-db): a
	// replica's stream is its master's, which selects no database again.
	aux := m.host.SaveInfo()
	// A master's replicas' database is unknown: its next command selects
	// one.
	m.stream.ResetSelect()
	for _, r := range rs {
		r.state = replWaitBgsave
		r.diskless = diskless
		r.buffering = !r.rdbOnly
		r.pending = nil
		r.ackedEarly = false
		if r.preSync {
			continue
		}
		line := []byte("+FULLRESYNC " + m.stream.ID + " " + strconv.FormatInt(off, 10) + "\r\n")
		if c != nil && c.Client == r.c.Client() {
			c.W.Raw(line)
		} else {
			r.c.WriteLater(line)
		}
	}
	target := "disk"
	if diskless {
		target = "replicas sockets"
	}
	m.log.Noticef("Starting BGSAVE for SYNC with target: %s", target)
	m.syncs.Add(1)
	go func() {
		defer m.syncs.Done()
		if snap != nil {
			defer snap.Release()
		}
		if diskless {
			m.sendDiskless(rs, snap, functions, aux)
		} else {
			m.sendDisk(rs[0], snap, functions, aux)
		}
	}()
}

// errNoReplicas ends the encoding of a diskless payload whose replicas
// all went away.
var errNoReplicas = errors.New("no replica left to send the RDB to")

// sendDisk writes the snapshot to a temporary file in dir, then sends it
// to r with a `$<length>` header (snap nil: an RDB without keys). Without
// the lock.
func (m *Master) sendDisk(r *replica, snap *keyspace.Snapshot, functions []string, aux [][2]string) {
	dir := m.cfg.String("dir")
	path := filepath.Join(dir, fmt.Sprintf("temp-repl-%d-%d.rdb", os.Getpid(), time.Now().UnixNano()))
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o600)
	if err == nil {
		defer os.Remove(path)
		defer f.Close()
		bw := bufio.NewWriterSize(f, 1<<20)
		if err = m.host.WriteRDB(bw, snap, functions, aux); err == nil {
			err = bw.Flush()
		}
	}
	var size int64
	if err == nil {
		size, err = f.Seek(0, io.SeekCurrent)
	}
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	ok := true
	m.ks.Exec(func() {
		if err != nil {
			m.log.Warningf("Background RDB for replica %s failed: %v", r.name(), err)
			if !r.gone() {
				r.c.Drop()
			}
			ok = false
			return
		}
		m.log.Noticef("Background saving terminated with success")
		if r.gone() {
			ok = false
			return
		}
		r.state = replSendBulk
	})
	if !ok {
		return
	}
	if !sendAndWait(r.c, []byte("$"+strconv.FormatInt(size, 10)+"\r\n")) {
		return
	}
	buf := make([]byte, payloadChunk)
	for {
		n, rerr := f.Read(buf)
		if n > 0 && !sendAndWait(r.c, buf[:n]) {
			return
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			m.ks.Exec(func() {
				m.log.Warningf("Reading the RDB sent to replica %s: %v", r.name(), rerr)
				r.c.Drop()
			})
			return
		}
	}
	m.ks.Exec(func() { m.syncDone(r) })
}

// sendAndWait sends b to c and waits until the socket took it; false
// when the connection is gone.
func sendAndWait(c Conn, b []byte) bool {
	select {
	case <-c.Send(b):
	case <-c.Done():
		return false
	}
	select {
	case <-c.Done():
		return false
	default:
		return !c.OverLimit()
	}
}

// sendDiskless encodes the snapshot straight to the replicas' sockets,
// between `$EOF:<mark>` and the mark (snap nil: an RDB without keys).
// Without the lock.
func (m *Master) sendDiskless(rs []*replica, snap *keyspace.Snapshot, functions []string, aux [][2]string) {
	mark := NewID()
	out := &fanout{rs: rs}
	bw := bufio.NewWriterSize(out, payloadChunk)
	bw.WriteString("$EOF:" + mark + "\r\n")
	err := m.host.WriteRDB(bw, snap, functions, aux)
	if err == nil {
		bw.WriteString(mark)
		err = bw.Flush()
	}
	m.ks.Exec(func() {
		if err != nil && !errors.Is(err, errNoReplicas) {
			m.log.Warningf("Diskless RDB transfer failed: %v", err)
		}
		if err == nil {
			m.log.Noticef("Diskless rdb transfer, done reading from pipe, %d replicas still up.", out.alive())
		}
		for _, r := range rs {
			if err != nil {
				if !r.gone() {
					r.c.Drop()
				}
				continue
			}
			m.syncDone(r)
		}
	})
}

// fanout writes a diskless payload to every replica of a sync that is
// still connected, waiting for the slowest.
type fanout struct {
	rs []*replica
}

func (f *fanout) Write(p []byte) (int, error) {
	// The loops take their own copy: the encoder reuses p once this
	// returns, and a replica that went away is not waited for.
	p = append([]byte(nil), p...)
	waits := make([]<-chan struct{}, len(f.rs))
	sent := 0
	for i, r := range f.rs {
		if f.isGone(r) {
			continue
		}
		waits[i] = r.c.Send(p)
		sent++
	}
	if sent == 0 {
		return 0, errNoReplicas
	}
	for i, w := range waits {
		if w != nil {
			select {
			case <-w:
			case <-f.rs[i].c.Done():
			}
		}
	}
	return len(p), nil
}

func (f *fanout) isGone(r *replica) bool {
	select {
	case <-r.c.Done():
		return true
	default:
		return r.c.OverLimit()
	}
}

func (f *fanout) alive() int {
	n := 0
	for _, r := range f.rs {
		if !f.isGone(r) {
			n++
		}
	}
	return n
}

// syncDone puts a replica whose RDB was sent online (replicaPutOnline):
// an rdb-only one is closed instead once its output is written. After a
// disk-based sync its buffered stream follows at once; after a diskless
// one, at its first ACK (at once if that ACK came already). Under the
// lock.
func (m *Master) syncDone(r *replica) {
	if r.gone() {
		return
	}
	if r.rdbOnly {
		r.state = replRDBTransmitted
		m.log.Noticef("RDB transfer completed, rdb only replica (%s) should be disconnected asap", r.name())
		r.c.CloseAfterFlush()
		return
	}
	r.state, r.ackTime = replOnline, time.Now().Unix()
	m.log.Noticef("Synchronization with replica %s succeeded", r.name())
	if r.diskless && !r.ackedEarly {
		r.startOnAck = true
	} else {
		m.startStream(r)
	}
	m.refreshGood()
	m.serveWaiters()
}
