package cluster

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/zredis/zredis/cluster/bus"
	"github.com/zredis/zredis/internal/testsupport"
)

// logRecorder keeps a node's log lines for a test.
type logRecorder struct {
	mu    sync.Mutex
	lines []string
}

func (r *logRecorder) logf(level byte, format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, string(level)+" "+fmt.Sprintf(format, args...))
}

func (r *logRecorder) has(s string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, l := range r.lines {
		if strings.Contains(l, s) {
			return true
		}
	}
	return false
}

// nodesLine is the line of a CLUSTER NODES reply about name, "" if none.
func nodesLine(nodes string, name bus.Name) []string {
	for _, l := range strings.Split(nodes, "\n") {
		if strings.HasPrefix(l, string(name[:])) {
			return strings.Fields(l)
		}
	}
	return nil
}

// A node of this package in a cluster with two redis-server 7.0 nodes:
// it is met, completes its handshakes, learns the other node from the
// gossip, and the three agree on who serves which slots and that the
// cluster is ok; when a redis-server node is killed, this node and the
// other agree that it failed (PFAIL, then FAIL by the majority of the
// masters); its nodes.conf, read again, names the same node and slots.
func TestStateJoinsRedisCluster(t *testing.T) {
	ctx := context.Background()
	timeout := 1000
	procs, clients, names := startRedisNodes(t, 2, timeout)

	dir := t.TempDir()
	conf := filepath.Join(dir, "nodes.conf")
	log := &logRecorder{}
	port, busPort := testsupport.FreePort(t), testsupport.FreePort(t)
	st, err := New(Options{ConfigFile: conf, BindIP: "127.0.0.1", Port: port, BusPort: busPort,
		NodeTimeout: time.Duration(timeout) * time.Millisecond, RequireFullCoverage: true,
		AnnounceHostname: "zredis-node", Logf: log.logf})
	require.NoError(t, err)
	require.NoError(t, st.Start())
	stopped := false
	defer func() {
		if !stopped {
			st.Stop()
		}
	}()
	me := st.Myself()
	require.True(t, log.has("No cluster configuration found, I'm "+string(me[:])))
	saved, err := os.ReadFile(conf)
	require.NoError(t, err)
	require.Contains(t, string(saved), string(me[:])+" :"+strconv.Itoa(port)+"@"+strconv.Itoa(busPort)+",zredis-node myself,master - 0 0 0 connected")

	require.NoError(t, clients[0].Do(ctx, "CLUSTER", "ADDSLOTSRANGE", 0, 5000).Err())
	require.NoError(t, clients[1].Do(ctx, "CLUSTER", "ADDSLOTSRANGE", 5001, 10000).Err())
	st.AddSlots(rangeOf(10001, 16383)...)
	// Equal config epochs: the collisions give each master its own.
	require.NoError(t, clients[0].Do(ctx, "CLUSTER", "MEET", "127.0.0.1", port, busPort).Err())
	cport1, err := clients[1].ConfigGet(ctx, "cluster-port").Result()
	require.NoError(t, err)
	require.NoError(t, clients[0].Do(ctx, "CLUSTER", "MEET", "127.0.0.1", procs[1].Port, cport1["cluster-port"]).Err())

	require.Eventually(t, func() bool {
		for _, c := range clients {
			info, err := c.Do(ctx, "CLUSTER", "INFO").Text()
			if err != nil || !strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, "cluster_known_nodes:3") {
				return false
			}
			nodes, err := c.Do(ctx, "CLUSTER", "NODES").Text()
			f := nodesLine(nodes, me)
			if err != nil || len(f) < 9 || f[1] != fmt.Sprintf("127.0.0.1:%d@%d,zredis-node", port, busPort) ||
				f[2] != "master" || f[7] != "connected" || f[8] != "10001-16383" {
				return false
			}
		}
		if !st.StateOK() {
			return false
		}
		nodes := string(st.ClusterNodes())
		a, b := nodesLine(nodes, names[0]), nodesLine(nodes, names[1])
		return len(a) == 9 && a[7] == "connected" && a[8] == "0-5000" &&
			len(b) == 9 && b[7] == "connected" && b[8] == "5001-10000"
	}, 20*time.Second, 100*time.Millisecond, "the three nodes do not agree:\n%s", st.ClusterNodes())

	// Three masters, three config epochs.
	require.Eventually(t, func() bool {
		epochs := map[string]bool{}
		for _, l := range strings.Split(strings.TrimSpace(string(st.ClusterNodes())), "\n") {
			epochs[strings.Fields(l)[6]] = true
		}
		return len(epochs) == 3
	}, 10*time.Second, 100*time.Millisecond, "config epochs still collide:\n%s", st.ClusterNodes())

	procs[1].Kill()
	require.Eventually(t, func() bool {
		nodes, err := clients[0].Do(ctx, "CLUSTER", "NODES").Text()
		f := nodesLine(nodes, names[1])
		our := nodesLine(string(st.ClusterNodes()), names[1])
		return err == nil && len(f) > 2 && strings.Contains(f[2], "fail") && !strings.Contains(f[2], "fail?") &&
			len(our) > 2 && strings.Contains(our[2], "fail") && !strings.Contains(our[2], "fail?")
	}, 20*time.Second, 100*time.Millisecond, "the killed node is not marked failed:\n%s", st.ClusterNodes())
	require.Eventually(t, func() bool { return !st.StateOK() }, 5*time.Second, 50*time.Millisecond)
	info, err := clients[0].Do(ctx, "CLUSTER", "INFO").Text()
	require.NoError(t, err)
	require.Contains(t, info, "cluster_state:fail")

	st.Stop()
	stopped = true
	again, err := New(Options{ConfigFile: conf, BindIP: "127.0.0.1", Port: port, BusPort: busPort})
	require.NoError(t, err)
	require.Equal(t, me, again.Myself())
	f := nodesLine(string(again.ClusterNodes()), me)
	require.Equal(t, "10001-16383", f[8])
	require.Len(t, strings.Split(strings.TrimSpace(string(again.ClusterNodes())), "\n"), 3)
}

// startRedisNodes starts n redis-server 7.0 nodes in cluster mode, each
// with its own bus port and the node timeout, not met yet.
func startRedisNodes(t *testing.T, n, timeout int) ([]*testsupport.Proc, []*redis.Client, []bus.Name) {
	ctx := context.Background()
	var procs []*testsupport.Proc
	var clients []*redis.Client
	var names []bus.Name
	for range n {
		cport := testsupport.FreePort(t)
		p := testsupport.StartRedis(t, "--cluster-enabled", "yes", "--cluster-port", strconv.Itoa(cport),
			"--cluster-node-timeout", strconv.Itoa(timeout))
		c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(p.Port), Protocol: 2})
		t.Cleanup(func() { c.Close() })
		id, err := c.Do(ctx, "CLUSTER", "MYID").Text()
		require.NoError(t, err)
		procs, clients, names = append(procs, p), append(clients, c), append(names, nameOf(id))
	}
	return procs, clients, names
}

func rangeOf(from, to int) []int {
	var r []int
	for i := from; i <= to; i++ {
		r = append(r, i)
	}
	return r
}

// Hostile bus input: a bad signature closes the link with Redis's log
// line; a message of the wrong length for its type, or of a type Redis
// does not know, is dropped with its log line and the link kept; a PING
// from a node nobody met gets a PONG and is not added; nodes.conf stays
// readable and the node keeps working.
func TestStateBadBusInput(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "nodes.conf")
	log := &logRecorder{}
	busPort := testsupport.FreePort(t)
	st, err := New(Options{ConfigFile: conf, BindIP: "127.0.0.1", Port: 7000, BusPort: busPort, Logf: log.logf})
	require.NoError(t, err)
	require.NoError(t, st.Start())
	defer st.Stop()
	dial := func() net.Conn {
		c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(busPort))
		require.NoError(t, err)
		c.SetDeadline(time.Now().Add(10 * time.Second))
		t.Cleanup(func() { c.Close() })
		return c
	}

	c := dial()
	_, err = c.Write([]byte("GET / HTTP/1.1\r\n\r\n"))
	require.NoError(t, err)
	_, err = c.Read(make([]byte, 1))
	require.Error(t, err, "the link is closed")
	require.Eventually(t, func() bool { return log.has("# Bad message length or signature received from Cluster bus.") },
		5*time.Second, 10*time.Millisecond)

	var stranger bus.Name
	copy(stranger[:], "0123456789abcdef0123456789abcdef01234567")
	c = dial()
	fail := (&bus.Message{Header: bus.Header{Type: bus.Fail, Sender: stranger}}).Append(nil)
	short := fail[:bus.HeaderLen]
	binary.BigEndian.PutUint32(short[4:], bus.HeaderLen) // totlen
	unknown := (&bus.Message{Header: bus.Header{Type: 99, Sender: stranger}}).Append(nil)
	ping := (&bus.Message{Header: bus.Header{Type: bus.Ping, Sender: stranger, Port: 7001, CPort: 17001, Flags: bus.FlagMaster}}).Append(nil)
	for _, m := range [][]byte{short, unknown, ping} {
		_, err = c.Write(m)
		require.NoError(t, err)
	}
	reply, err := readMessage(c, nil)
	require.NoError(t, err)
	pong, err := bus.Parse(reply)
	require.NoError(t, err)
	require.Equal(t, bus.Pong, pong.Type)
	require.Equal(t, st.Myself(), pong.Sender)
	require.True(t, log.has(fmt.Sprintf("# Received invalid fail packet of length %d but expected length %d", bus.HeaderLen, bus.HeaderLen+bus.NameLen)))
	require.True(t, log.has("# Received unknown packet type: 99"))

	// A frame that announces a gigabyte and sends a little: held is what
	// arrived.
	huge := append([]byte(nil), ping[:8]...)
	huge[4], huge[5], huge[6], huge[7] = 0x40, 0, 0, 0
	_, err = c.Write(append(huge, make([]byte, 1000)...))
	require.NoError(t, err)

	require.Len(t, strings.Split(strings.TrimSpace(string(st.ClusterNodes())), "\n"), 1, "a stranger's PING adds no node")
	st.Stop()
	data, err := os.ReadFile(conf)
	require.NoError(t, err)
	cfg, err := ParseNodesConf(data, 0)
	require.NoError(t, err)
	require.Equal(t, st.Myself(), cfg.Myself.Name)
}

// A failover the State votes in: masters A and B (redis-server) and the
// State, A with a redis-server replica. Killed, A is marked failing by B
// and the State; its replica needs two of the three masters' votes, so
// it is elected only if the State votes, and then serves A's slots in
// every node's view.
func TestStateVotesInFailover(t *testing.T) {
	ctx := context.Background()
	timeout := 1000
	procs, clients, names := startRedisNodes(t, 3, timeout)
	log := &logRecorder{}
	port, busPort := testsupport.FreePort(t), testsupport.FreePort(t)
	st, err := New(Options{BindIP: "127.0.0.1", Port: port, BusPort: busPort,
		NodeTimeout: time.Duration(timeout) * time.Millisecond, RequireFullCoverage: true, Logf: log.logf})
	require.NoError(t, err)
	require.NoError(t, st.Start())
	defer st.Stop()

	require.NoError(t, clients[0].Do(ctx, "CLUSTER", "ADDSLOTSRANGE", 0, 5000).Err())
	require.NoError(t, clients[1].Do(ctx, "CLUSTER", "ADDSLOTSRANGE", 5001, 10000).Err())
	st.AddSlots(rangeOf(10001, 16383)...)
	require.NoError(t, clients[0].Do(ctx, "CLUSTER", "MEET", "127.0.0.1", port, busPort).Err())
	for _, i := range []int{1, 2} {
		cport, err := clients[i].ConfigGet(ctx, "cluster-port").Result()
		require.NoError(t, err)
		require.NoError(t, clients[0].Do(ctx, "CLUSTER", "MEET", "127.0.0.1", procs[i].Port, cport["cluster-port"]).Err())
	}
	require.Eventually(t, func() bool {
		return clients[2].Do(ctx, "CLUSTER", "REPLICATE", string(names[0][:])).Err() == nil
	}, 10*time.Second, 100*time.Millisecond)
	require.Eventually(t, func() bool {
		r := nodesLine(string(st.ClusterNodes()), names[2])
		if len(r) < 4 || r[2] != "slave" || r[3] != string(names[0][:]) || !st.StateOK() {
			return false
		}
		info, err := clients[2].Info(ctx, "replication").Result()
		return err == nil && strings.Contains(info, "master_link_status:up")
	}, 20*time.Second, 100*time.Millisecond, "the replica is not set up:\n%s", st.ClusterNodes())

	procs[0].Kill()
	require.Eventually(t, func() bool {
		r := nodesLine(string(st.ClusterNodes()), names[2])
		nodes, err := clients[1].Do(ctx, "CLUSTER", "NODES").Text()
		b := nodesLine(nodes, names[2])
		return len(r) == 9 && r[2] == "master" && r[8] == "0-5000" &&
			err == nil && len(b) == 9 && b[2] == "master" && b[8] == "0-5000"
	}, 30*time.Second, 100*time.Millisecond, "the replica was not promoted:\n%s", st.ClusterNodes())
	require.True(t, log.has("Failover auth granted to "+string(names[2][:])))
	require.Eventually(t, st.StateOK, 10*time.Second, 100*time.Millisecond)
}

// fakeRepl is a server's replication as a test sees it: the role the
// State gave it, checked to be called under the "keyspace" lock (mu,
// which Exec takes).
type fakeRepl struct {
	mu     sync.Mutex // the keyspace lock
	locked bool
	t      *testing.T

	role   string // "master" or "host:port"
	unsets int
}

func (f *fakeRepl) exec(fn func()) {
	f.mu.Lock()
	f.locked = true
	defer func() { f.locked = false; f.mu.Unlock() }()
	fn()
}

func (f *fakeRepl) check() {
	if !f.locked {
		f.t.Errorf("replication hook called without the keyspace lock")
	}
}

func (f *fakeRepl) SetMaster(host string, port int) {
	f.check()
	f.role = host + ":" + strconv.Itoa(port)
}
func (f *fakeRepl) UnsetMaster()         { f.check(); f.role = "master"; f.unsets++ }
func (f *fakeRepl) MasterDataAge() int64 { f.check(); return 0 }
func (f *fakeRepl) HoldWrites(bool)      { f.check() }

// roleOf is the role the State last gave f.
func (f *fakeRepl) roleOf() string {
	var r string
	f.exec(func() { r = f.role })
	return r
}

// The State as a replica in a cluster of three redis-server masters
// (CLUSTER REPLICATE through the State, the server told to replicate
// the master's address); when its master is killed, it runs the
// election, wins the two other masters' votes and serves the slots,
// with the server told to turn master, in every node's view.
func TestStateReplicaElected(t *testing.T) {
	ctx := context.Background()
	timeout := 1000
	procs, clients, names := startRedisNodes(t, 3, timeout)
	log := &logRecorder{}
	repl := &fakeRepl{t: t, role: "master"}
	port, busPort := testsupport.FreePort(t), testsupport.FreePort(t)
	st, err := New(Options{BindIP: "127.0.0.1", Port: port, BusPort: busPort,
		NodeTimeout: time.Duration(timeout) * time.Millisecond, RequireFullCoverage: true, Logf: log.logf,
		ReplicaValidityFactor: 10, ReplPingPeriod: 10 * time.Second, AllowReplicaMigration: true,
		Offset: func() int64 { return 100 }, Exec: repl.exec, Replication: repl})
	require.NoError(t, err)
	require.NoError(t, st.Start())
	defer st.Stop()
	st.ServeRoles()

	require.NoError(t, clients[0].Do(ctx, "CLUSTER", "ADDSLOTSRANGE", 0, 5000).Err())
	require.NoError(t, clients[1].Do(ctx, "CLUSTER", "ADDSLOTSRANGE", 5001, 10000).Err())
	require.NoError(t, clients[2].Do(ctx, "CLUSTER", "ADDSLOTSRANGE", 10001, 16383).Err())
	require.NoError(t, clients[0].Do(ctx, "CLUSTER", "MEET", "127.0.0.1", port, busPort).Err())
	for _, i := range []int{1, 2} {
		cport, err := clients[i].ConfigGet(ctx, "cluster-port").Result()
		require.NoError(t, err)
		require.NoError(t, clients[0].Do(ctx, "CLUSTER", "MEET", "127.0.0.1", procs[i].Port, cport["cluster-port"]).Err())
	}
	require.Eventually(t, func() bool {
		nodes := string(st.ClusterNodes())
		return strings.Count(nodes, "\n") == 4 && nodesLine(nodes, names[0]) != nil && st.StateOK()
	}, 20*time.Second, 100*time.Millisecond, "the State does not join:\n%s", st.ClusterNodes())

	// CLUSTER REPLICATE's refusals, then the master.
	repl.exec(func() {
		require.Equal(t, "Unknown node nosuch", st.Replicate([]byte("nosuch"), 0))
		me := st.Myself()
		require.Equal(t, "Can't replicate myself", st.Replicate(me[:], 0))
		require.Equal(t, "To set a master the node must be empty and without assigned slots.", st.Replicate(names[0][:], 1))
		require.Equal(t, "You should send CLUSTER FAILOVER to a replica", st.Failover(false, false))
		require.Equal(t, "", st.Replicate(names[0][:], 0))
	})
	require.Equal(t, "127.0.0.1:"+strconv.Itoa(procs[0].Port), repl.roleOf())
	me := st.Myself()
	require.Eventually(t, func() bool {
		nodes, err := clients[1].Do(ctx, "CLUSTER", "NODES").Text()
		r := nodesLine(nodes, me)
		return err == nil && len(r) >= 4 && r[2] == "slave" && r[3] == string(names[0][:])
	}, 20*time.Second, 100*time.Millisecond, "the others do not see the State as a replica")

	procs[0].Kill()
	require.Eventually(t, func() bool {
		r := nodesLine(string(st.ClusterNodes()), me)
		nodes, err := clients[1].Do(ctx, "CLUSTER", "NODES").Text()
		b := nodesLine(nodes, me)
		return len(r) == 9 && strings.Contains(r[2], "master") && r[8] == "0-5000" &&
			err == nil && len(b) == 9 && b[2] == "master" && b[8] == "0-5000"
	}, 30*time.Second, 100*time.Millisecond, "the State was not elected:\n%s", st.ClusterNodes())
	require.Equal(t, "master", repl.roleOf())
	require.True(t, log.has("Failover election won: I'm the new master."))
	require.Eventually(t, st.StateOK, 10*time.Second, 100*time.Millisecond)
}

// With tls-cluster on and TLS not configured, the bus makes no link at
// all, never a plaintext one: an inbound connection is closed at once,
// and a node met is not dialled.
func TestStateTLSBusWithoutConfiguration(t *testing.T) {
	log := &logRecorder{}
	busPort := testsupport.FreePort(t)
	noConf := func() *tls.Config { return nil }
	st, err := New(Options{BindIP: "127.0.0.1", Port: 7000, BusPort: busPort, TLS: true, TLSPort: 7001,
		TLSServer: noConf, TLSClient: noConf, Logf: log.logf})
	require.NoError(t, err)
	require.NoError(t, st.Start())
	defer st.Stop()

	c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(busPort))
	require.NoError(t, err)
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	_, err = c.Read(make([]byte, 1))
	require.Error(t, err, "the connection is closed")
	require.True(t, log.has("tls-cluster is on and TLS is not configured"))

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	dialled := make(chan struct{}, 1)
	go func() {
		if conn, err := ln.Accept(); err == nil {
			conn.Close()
			dialled <- struct{}{}
		}
	}()
	port := int64(ln.Addr().(*net.TCPAddr).Port)
	require.True(t, st.Meet("127.0.0.1", 7100, port))
	select {
	case <-dialled:
		t.Fatal("a node was dialled in plaintext")
	case <-time.After(1500 * time.Millisecond):
	}
}
