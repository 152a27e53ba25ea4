package commands

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"errors"
	"math"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/persistence/rdb"
	"github.com/zredis/zredis/resp"
)

// MIGRATE host port key|"" db timeout [COPY] [REPLACE] [AUTH password]
// [AUTH2 username password] [KEYS key ...] (Redis cluster.c
// migrateCommand): the keys are sent to another server as RESTORE
// commands (RESTORE-ASKING in cluster mode; DUMP payloads with their
// TTLs), after AUTH and SELECT, and,
// unless COPY, deleted here once the target accepted each; what is
// propagated is the DEL of those keys.
//
// As in Redis, the command holds the server for its network round trip
// (bounded by timeout): it is atomic, which a migration between two
// clients' writes relies on. The connection stays open for the next
// MIGRATE to the same host and port (engine.MigrateSockets), which sends
// SELECT only when the database changes.
func init() {
	register(&engine.Command{Name: "migrate", Arity: -6, Flags: engine.Write | engine.MovableKeys, ACL: "@keyspace @write @slow @dangerous", FirstKey: 3, LastKey: 3, KeyStep: 1, Group: "generic", Run: migrateCommand, Keys: migrateKeys, KeyFlags: migrateKeyFlags})
}

// migrateKeys is migrateGetKeys: the key argument, or the keys after
// KEYS when the key argument is empty.
func migrateKeys(args [][]byte) []int {
	first, num := 3, 1
	skip := map[string]int{"copy": 0, "replace": 0, "auth": 1, "auth2": 2}
outer:
	for i := 6; i < len(args); i++ {
		if engine.EqualFold(args[i], "keys") {
			if len(args[3]) > 0 {
				break
			}
			first, num = i+1, len(args)-i-1
			break
		}
		for name, n := range skip {
			if engine.EqualFold(args[i], name) {
				i += n
				continue outer
			}
		}
	}
	keys := make([]int, num)
	for i := range keys {
		keys[i] = first + i
	}
	return keys
}

var migrateKeyFlagsAll = []string{"RW", "access", "delete"}

func migrateKeyFlags(_ [][]byte, _ int) []string { return migrateKeyFlagsAll }

const errMigrateKeys = "ERR When using MIGRATE KEYS option, the key argument must be set to the empty string"

func migrateCommand(c *engine.Ctx) {
	args := c.Args
	var copyKeys, replace bool
	var user, pass []byte
	firstKey, numKeys := 3, 1
	for j := 6; j < len(args); j++ {
		more := len(args) - 1 - j
		switch a := args[j]; {
		case engine.EqualFold(a, "copy"):
			copyKeys = true
		case engine.EqualFold(a, "replace"):
			replace = true
		case engine.EqualFold(a, "auth"):
			if more < 1 {
				c.Error(engine.ErrSyntax)
				return
			}
			j++
			pass = bytes.Clone(args[j])
			c.Redact(j)
		case engine.EqualFold(a, "auth2"):
			if more < 2 {
				c.Error(engine.ErrSyntax)
				return
			}
			user = bytes.Clone(args[j+1])
			pass = bytes.Clone(args[j+2])
			c.Redact(j + 1)
			c.Redact(j + 2)
			j += 2
		case engine.EqualFold(a, "keys"):
			if len(args[3]) != 0 {
				c.Error(errMigrateKeys)
				return
			}
			firstKey, numKeys = j+1, len(args)-j-1
			j = len(args)
		default:
			c.Error(engine.ErrSyntax)
			return
		}
	}
	timeout, ok := c.IntArg(5)
	if !ok {
		return
	}
	dbid, ok := c.IntArg(4)
	if !ok {
		return
	}
	if timeout <= 0 {
		timeout = 1000
	}
	timeout = min(timeout, math.MaxInt64/int64(time.Millisecond)) // a huge one means no limit
	type item struct {
		key     []byte
		payload []byte
		ttl     int64
	}
	var items []item
	for _, k := range args[firstKey : firstKey+numKeys] {
		if e := c.DB.Lookup(k); e != nil {
			items = append(items, item{key: k, payload: rdb.Dump(e), ttl: e.ExpireAt()})
		}
	}
	if len(items) == 0 {
		c.W.Simple("NOKEY")
		return
	}
	// Keys whose deadline passed while they were serialised are left out.
	now := time.Now().UnixMilli()
	kept := items[:0]
	for _, it := range items {
		if it.ttl != 0 {
			if it.ttl -= now; it.ttl < 0 {
				continue
			}
			it.ttl = max(it.ttl, 1)
		}
		kept = append(kept, it)
	}
	items = kept
	// The RESTOREs; AUTH and SELECT go before them on each attempt.
	var body []byte
	// A cluster node sends RESTORE-ASKING, which the target serves as if
	// asked with ASKING: the slot is then one it imports, whose keys it
	// would otherwise redirect back here with -MOVED.
	restore := []byte("RESTORE")
	if c.D.Cluster != nil {
		restore = []byte("RESTORE-ASKING")
	}
	for _, it := range items {
		argv := [][]byte{restore, it.key, strconv.AppendInt(nil, it.ttl, 10), it.payload}
		if replace {
			argv = append(argv, []byte("REPLACE"))
		}
		body = resp.AppendCommand(body, argv...)
	}
	wait := time.Duration(timeout) * time.Millisecond
	addr := net.JoinHostPort(string(args[1]), strconv.Itoa(atoiPrefix(args[2])))
	name := string(args[1]) + ":" + string(args[2]) // the cache's, as Redis names it
	var tlsConf *tls.Config
	useTLS := false
	if c.D.MigrateTLS != nil {
		tlsConf, useTLS = c.D.MigrateTLS()
	}
	if useTLS && tlsConf == nil {
		c.Error("IOERR error or timeout connecting to the client")
		return
	}
	cache := &c.D.Migrate
	for attempt := 0; ; attempt++ {
		var replies []string
		var err error
		var timedOut, selectDB bool
		header := 0 // the AUTH and SELECT replies
		sock := cache.Get(name, time.Now().Unix())
		if sock == nil {
			var conn net.Conn
			conn, err = migrateDial(addr, tlsConf, wait)
			if err == errMigrateConnect {
				c.Error("IOERR error or timeout connecting to the client")
				return
			}
			if err == nil {
				sock = &engine.MigrateSocket{Conn: conn, Reader: bufio.NewReaderSize(conn, 1024), LastDB: -1}
				cache.Add(name, sock, time.Now().Unix())
			}
		}
		if sock != nil {
			var out []byte
			if pass != nil {
				if user != nil {
					out = resp.AppendCommand(out, []byte("AUTH"), user, pass)
				} else {
					out = resp.AppendCommand(out, []byte("AUTH"), pass)
				}
				header++
			}
			if selectDB = sock.LastDB != dbid; selectDB {
				out = resp.AppendCommand(out, []byte("SELECT"), strconv.AppendInt(nil, dbid, 10))
				header++
			}
			replies, err, timedOut = migrateExchange(sock, append(out, body...), header+len(items), wait)
		}
		if err != nil {
			// The connection may be stale, or out of step: the next
			// MIGRATE (or the retry below) connects again.
			cache.Close(name)
		}
		// A connection that failed before a key's reply is tried once
		// more, as Redis retries a stale cached one (not after a timeout).
		retry := attempt == 0 && !timedOut
		if err != nil && len(replies) <= header {
			if retry {
				continue
			}
			if err == errMigrateWrite {
				c.Error("IOERR error or timeout writing to target instance")
			} else {
				c.Error("IOERR error or timeout reading to target instance")
			}
			return
		}
		isErr := func(r string) bool { return len(r) > 0 && r[0] == '-' }
		authErr := pass != nil && isErr(replies[0])
		selectErr := selectDB && isErr(replies[header-1])
		var targetErr string
		var deleted [][]byte
		for j, r := range replies[header:] {
			if authErr || selectErr || isErr(r) {
				if targetErr == "" {
					switch {
					case authErr:
						targetErr = replies[0][1:]
					case selectErr:
						targetErr = replies[header-1][1:]
					default:
						targetErr = r[1:]
					}
				}
				continue
			}
			if !copyKeys {
				k := items[j].key
				if c.DB.Delete(k) {
					c.Notify(config.NotifyGeneric, "del", k)
				}
				deleted = append(deleted, k)
			}
		}
		if len(deleted) > 0 {
			c.Dirty(len(deleted))
			c.Propagate(append([][]byte{[]byte("DEL")}, deleted...)...)
		}
		switch {
		case targetErr != "":
			sock.LastDB = -1 // SELECT again next time
			c.Error("ERR Target instance replied with error: " + targetErr)
		case err != nil:
			c.Error("IOERR error or timeout reading to target instance")
		default:
			sock.LastDB = dbid
			c.W.OK()
		}
		return
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// atoiPrefix is C's atoi: the leading digits, 0 without any.
func atoiPrefix(b []byte) int {
	n := 0
	for _, ch := range b {
		if ch < '0' || ch > '9' || n > 1<<20 {
			break
		}
		n = n*10 + int(ch-'0')
	}
	return n
}

var (
	errMigrateConnect = errors.New("connect")
	errMigrateWrite   = errors.New("write")
)

// migrateDial connects to addr (over TLS with tlsConf, when not nil, as
// Redis's MIGRATE does with tls-cluster yes) within wait. Its errors are
// errMigrateConnect for a connect that timed out, errMigrateWrite for
// one refused: Redis's blocking connect only waits for the socket to be
// writable, so a refused connection shows as a failed write.
func migrateDial(addr string, tlsConf *tls.Config, wait time.Duration) (net.Conn, error) {
	conn, err := net.DialTimeout("tcp", addr, wait)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return nil, errMigrateConnect
		}
		return nil, errMigrateWrite
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	if tlsConf != nil {
		// The handshake is part of Redis's blocking TLS connect.
		tc := tls.Client(conn, tlsConf)
		tc.SetDeadline(time.Now().Add(wait))
		if err := tc.Handshake(); err != nil {
			conn.Close()
			return nil, errMigrateConnect
		}
		tc.SetDeadline(time.Time{})
		conn = tc
	}
	return conn, nil
}

// migrateExchange sends out on sock and reads up to n reply lines
// (connSyncReadLine: a line of at most 1023 bytes, without its CRLF),
// each within wait. It returns the lines read, the error that stopped it
// and whether that error was a timeout.
func migrateExchange(sock *engine.MigrateSocket, out []byte, n int, wait time.Duration) ([]string, error, bool) {
	conn := sock.Conn
	for len(out) > 0 {
		chunk := out[:min(len(out), 64<<10)]
		conn.SetWriteDeadline(time.Now().Add(wait))
		if _, err := conn.Write(chunk); err != nil {
			return nil, errMigrateWrite, errors.Is(err, os.ErrDeadlineExceeded)
		}
		out = out[len(chunk):]
	}
	var lines []string
	for len(lines) < n {
		conn.SetReadDeadline(time.Now().Add(wait))
		line, err := sock.Reader.ReadSlice('\n')
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return lines, err, errors.Is(err, os.ErrDeadlineExceeded)
		}
		lines = append(lines, string(bytes.TrimRight(line, "\r\n")))
	}
	return lines, nil, false
}
