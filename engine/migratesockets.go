package engine

import (
	"bufio"
	"math/rand/v2"
	"net"
	"sync"
	"time"
)

// MigrateSockets is MIGRATE's cache of connections to target servers
// (Redis's server.migrate_cached_sockets): the connection to host:port,
// named as the command named them, stays open for the next MIGRATE
// there until it has been unused for more than MigrateSocketTTL seconds
// (the cron's CloseIdle), MigrateSocketsMax of them at most, so that
// moving a slot's keys in many calls (redis-cli --cluster reshard) does
// not connect for each, and a SELECT is sent only when the database
// changes. Its zero value is ready; its methods may be called from any
// goroutine.
type MigrateSockets struct {
	mu sync.Mutex
	m  map[string]*MigrateSocket
}

// MigrateSocket is a cached connection, used by one MIGRATE at a time
// (they run under the keyspace lock).
type MigrateSocket struct {
	Conn net.Conn
	// Reader reads the target's replies: kept with the connection, so
	// that no byte read ahead is lost between two commands.
	Reader *bufio.Reader
	// LastDB is the database the last successful MIGRATE selected; -1
	// (a new connection, or the target replied with an error) sends
	// SELECT again.
	LastDB  int64
	lastUse int64 // Unix seconds
}

const (
	// MigrateSocketsMax is MIGRATE_SOCKET_CACHE_ITEMS: a new connection
	// past it closes one at random.
	MigrateSocketsMax = 64
	// MigrateSocketTTL is MIGRATE_SOCKET_CACHE_TTL, in seconds.
	MigrateSocketTTL = 10
)

// Get returns the cached connection named name, marking it used at now
// (Unix seconds), or nil.
func (ms *MigrateSockets) Get(name string, now int64) *MigrateSocket {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	s := ms.m[name]
	if s != nil {
		s.lastUse = now
	}
	return s
}

// Add caches s under name, used at now; with MigrateSocketsMax cached
// already, one of them, at random, is closed first.
func (ms *MigrateSockets) Add(name string, s *MigrateSocket, now int64) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if ms.m == nil {
		ms.m = make(map[string]*MigrateSocket)
	}
	if old := ms.m[name]; old != nil {
		closeMigrateSocket(old)
	} else if len(ms.m) >= MigrateSocketsMax {
		skip := rand.IntN(len(ms.m))
		for n, victim := range ms.m {
			if skip == 0 {
				closeMigrateSocket(victim)
				delete(ms.m, n)
				break
			}
			skip--
		}
	}
	s.lastUse = now
	ms.m[name] = s
}

// Close closes and forgets the connection named name, if cached
// (migrateCloseSocket): after a socket error, so that the next MIGRATE
// connects again.
func (ms *MigrateSockets) Close(name string) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if s := ms.m[name]; s != nil {
		closeMigrateSocket(s)
		delete(ms.m, name)
	}
}

// CloseIdle closes the connections unused for more than
// MigrateSocketTTL seconds at now (migrateCloseTimedoutSockets, which
// serverCron runs once a second).
func (ms *MigrateSockets) CloseIdle(now int64) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	for n, s := range ms.m {
		if now-s.lastUse > MigrateSocketTTL {
			closeMigrateSocket(s)
			delete(ms.m, n)
		}
	}
}

// CloseAll closes every cached connection, when the server stops.
func (ms *MigrateSockets) CloseAll() {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	for n, s := range ms.m {
		closeMigrateSocket(s)
		delete(ms.m, n)
	}
}

// Len is how many connections are cached: INFO's migrate_cached_sockets.
func (ms *MigrateSockets) Len() int {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	return len(ms.m)
}

// closeMigrateSocket closes s without waiting: a TLS connection's
// closing alert is not waited for by a target that does not read.
func closeMigrateSocket(s *MigrateSocket) {
	s.Conn.SetDeadline(time.Now())
	s.Conn.Close()
}
