package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"
)

// rconn is a minimal RESP2 client for preparing and measuring the
// servers: the benchmarked traffic itself comes from redis-benchmark.
type rconn struct {
	c   net.Conn
	r   *bufio.Reader
	buf []byte // commands queued by the caller, written by flush
}

// replyTimeout bounds the wait for one batch of replies.
const replyTimeout = 2 * time.Minute

func dialServer(s *server) (*rconn, error) {
	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", s.port), 5*time.Second)
	if err != nil {
		return nil, err
	}
	return &rconn{c: c, r: bufio.NewReaderSize(c, 1<<16)}, nil
}

func (rc *rconn) Close() error { return rc.c.Close() }

// appendArray appends a RESP array header of n elements.
func appendArray(b []byte, n int) []byte {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, '\r', '\n')
}

// appendBulk appends s as a RESP bulk string.
func appendBulk(b []byte, s string) []byte {
	b = append(b, '$')
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, '\r', '\n')
	b = append(b, s...)
	return append(b, '\r', '\n')
}

// appendBulkNum appends the bulk string prefix+decimal(i) without
// allocating.
func appendBulkNum(b []byte, prefix string, i int) []byte {
	var digits [20]byte
	d := strconv.AppendInt(digits[:0], int64(i), 10)
	b = append(b, '$')
	b = strconv.AppendInt(b, int64(len(prefix)+len(d)), 10)
	b = append(b, '\r', '\n')
	b = append(b, prefix...)
	b = append(b, d...)
	return append(b, '\r', '\n')
}

// appendCmd appends one command.
func appendCmd(b []byte, args ...string) []byte {
	b = appendArray(b, len(args))
	for _, a := range args {
		b = appendBulk(b, a)
	}
	return b
}

// do sends one command and returns its reply: the text of a simple or
// bulk string or integer, or an error for an error reply. Aggregate
// replies are read and returned as "".
func (rc *rconn) do(args ...string) (string, error) {
	rc.buf = appendCmd(rc.buf[:0], args...)
	if err := rc.flush(); err != nil {
		return "", err
	}
	return rc.readReply()
}

// flush writes the queued commands.
func (rc *rconn) flush() error {
	rc.c.SetDeadline(time.Now().Add(replyTimeout))
	_, err := rc.c.Write(rc.buf)
	rc.buf = rc.buf[:0]
	return err
}

// replyError is an error reply from the server.
type replyError string

func (e replyError) Error() string { return string(e) }

// readReply reads one reply (see do).
func (rc *rconn) readReply() (string, error) {
	line, err := rc.r.ReadSlice('\n')
	if err != nil {
		return "", err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return "", fmt.Errorf("bad reply line %q", line)
	}
	body := line[1 : len(line)-2]
	switch line[0] {
	case '+', ':':
		return string(body), nil
	case '-':
		return "", replyError(body)
	case '$':
		n, err := strconv.Atoi(string(body))
		if err != nil {
			return "", fmt.Errorf("bad bulk length %q", body)
		}
		if n < 0 {
			return "", nil
		}
		p := make([]byte, n+2)
		if _, err := io.ReadFull(rc.r, p); err != nil {
			return "", err
		}
		return string(p[:n]), nil
	case '*':
		n, err := strconv.Atoi(string(body))
		if err != nil {
			return "", fmt.Errorf("bad array length %q", body)
		}
		var first error
		for i := 0; i < n; i++ {
			if _, err := rc.readReply(); err != nil {
				var re replyError
				if !errors.As(err, &re) {
					return "", err
				}
				if first == nil {
					first = err
				}
			}
		}
		return "", first
	}
	return "", fmt.Errorf("unexpected reply %q", line)
}

// loadBatch is how many commands the loader writes before reading their
// replies.
const loadBatch = 10000

// load sends total commands, the i-th appended to the buffer by gen,
// pipelined in batches of loadBatch, and reads every reply; it fails on
// the first error reply.
func (rc *rconn) load(total int, gen func(b []byte, i int) []byte) error {
	for start := 0; start < total; start += loadBatch {
		end := min(start+loadBatch, total)
		for i := start; i < end; i++ {
			rc.buf = gen(rc.buf, i)
		}
		if err := rc.flush(); err != nil {
			return err
		}
		for i := start; i < end; i++ {
			if _, err := rc.readReply(); err != nil {
				return fmt.Errorf("command %d: %w", i, err)
			}
		}
	}
	return nil
}
