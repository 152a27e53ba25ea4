package main

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"
)

// acker acknowledges a handled hash the way the hash expire cycles wait
// for: it deletes the key over RESP (SELECT db, DEL key), so that the
// server sends it no more. It keeps one connection, made on first use and
// again after a failure; a failed acknowledgement is reported and the
// next cycle sends the hash again, so nothing is lost.
type acker struct {
	addr, password string
	timeout        time.Duration

	conn net.Conn
	rd   *bufio.Reader
	db   int // the database the connection has selected; -1: unknown
	buf  []byte
}

// ack deletes key in database db.
func (a *acker) ack(db int, key []byte) error {
	if a.conn == nil {
		if err := a.connect(); err != nil {
			return err
		}
	}
	a.buf = a.buf[:0]
	replies := 1
	if db != a.db {
		a.buf = appendCommand(a.buf, []byte("SELECT"), strconv.AppendInt(nil, int64(db), 10))
		replies++
	}
	a.buf = appendCommand(a.buf, []byte("DEL"), key)
	if err := a.exchange(replies); err != nil {
		a.close()
		return err
	}
	a.db = db
	return nil
}

func (a *acker) connect() error {
	c, err := net.DialTimeout("tcp", a.addr, a.timeout)
	if err != nil {
		return err
	}
	a.conn, a.rd, a.db = c, bufio.NewReader(c), -1
	if a.password != "" {
		a.buf = appendCommand(a.buf[:0], []byte("AUTH"), []byte(a.password))
		if err := a.exchange(1); err != nil {
			a.close()
			return err
		}
	}
	return nil
}

// exchange writes a.buf and reads n one-line replies, failing on an error
// reply.
func (a *acker) exchange(n int) error {
	a.conn.SetDeadline(time.Now().Add(a.timeout))
	if _, err := a.conn.Write(a.buf); err != nil {
		return err
	}
	for range n {
		line, err := a.rd.ReadString('\n')
		if err != nil {
			return err
		}
		if line == "" || line[0] == '-' {
			return errors.New("server replied " + line)
		}
	}
	return nil
}

func (a *acker) close() {
	if a.conn != nil {
		a.conn.Close()
		a.conn, a.rd = nil, nil
	}
}

// appendCommand appends args as one RESP request.
func appendCommand(b []byte, args ...[]byte) []byte {
	b = fmt.Appendf(b, "*%d\r\n", len(args))
	for _, a := range args {
		b = fmt.Appendf(b, "$%d\r\n", len(a))
		b = append(b, a...)
		b = append(b, '\r', '\n')
	}
	return b
}
