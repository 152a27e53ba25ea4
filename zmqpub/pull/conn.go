package pull

import (
	"encoding/binary"
	"net"
	"sync"
	"time"

	"github.com/zredis/zredis/zmqpub"
)

// connection serializes the writes to one connection: the handshake, the
// PONGs sent by the reading goroutine and the PINGs of the heartbeat.
type connection struct {
	conn  net.Conn
	opt   Options
	mu    sync.Mutex
	curve *zmqpub.CurveSession // after a CURVE handshake; sealing under mu
}

// Write writes b whole, under the connection's write lock.
func (c *connection) Write(b []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.conn.Write(b)
}

// writeCommand writes a command, sealed when the connection speaks
// CURVE: under the write lock, so that nonces reach the wire in order.
func (c *connection) writeCommand(name string, data []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var frame []byte
	if c.curve != nil {
		frame = c.curve.AppendCommand(nil, name, data)
	} else {
		frame = zmqpub.AppendCommand(nil, name, data)
	}
	_, err := c.conn.Write(frame)
	return err
}

// handleCommand answers a command from the server and reports whether the
// connection should stay open (false after ERROR or a malformed command).
func (c *connection) handleCommand(body []byte) bool {
	name, data, err := zmqpub.ParseCommand(body)
	if err != nil {
		return false
	}
	switch name {
	case "PING":
		return c.writeCommand("PONG", zmqpub.PongContext(data)) == nil
	case "ERROR":
		return false
	default:
		// PONG only proves the server alive, which any byte read does;
		// unknown commands of later ZMTP versions are ignored.
		return true
	}
}

// pingLoop sends a PING every heartbeat interval until stop is closed. The
// TTL tells the server how long to wait for the next one before dropping
// us, in tenths of a second.
func (c *connection) pingLoop(stop <-chan struct{}) {
	ttl := min(missedHeartbeats*c.opt.Heartbeat/(100*time.Millisecond), 0xFFFF)
	ping := binary.BigEndian.AppendUint16(nil, uint16(ttl))
	ticker := time.NewTicker(c.opt.Heartbeat)
	defer ticker.Stop()
	for {
		select {
		case <-stop:
			return
		case <-ticker.C:
			if err := c.writeCommand("PING", ping); err != nil {
				return
			}
		}
	}
}

// livenessReader drops a silent connection: every Read must return within
// timeout of its start, so a connection on which nothing arrives for that
// long fails with a timeout.
type livenessReader struct {
	conn    net.Conn
	timeout time.Duration
}

func (r *livenessReader) Read(p []byte) (int, error) {
	if err := r.conn.SetReadDeadline(time.Now().Add(r.timeout)); err != nil {
		return 0, err
	}
	return r.conn.Read(p)
}
