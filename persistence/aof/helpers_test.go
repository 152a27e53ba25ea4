package aof

import (
	"github.com/zredis/zredis/resp"

	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zredis/zredis/internal/testsupport"
)

// command is one argv, as the tests send and load them.
type command []string

func argvOf(c command) [][]byte {
	out := make([][]byte, len(c))
	for i, s := range c {
		out[i] = []byte(s)
	}
	return out
}

func encode(cmds ...command) []byte {
	var b []byte
	for _, c := range cmds {
		b = resp.AppendCommand(b, argvOf(c)...)
	}
	return b
}

// recorder is an Exec callback that keeps every command it is given.
type recorder struct{ cmds []command }

func (r *recorder) exec(argv [][]byte) error {
	c := make(command, len(argv))
	for i, a := range argv {
		c[i] = string(a)
	}
	r.cmds = append(r.cmds, c)
	return nil
}

// model replays commands into a map per database: enough to compare what a
// directory holds (SET, DEL, SELECT and transactions markers).
type model struct {
	db   int
	data map[string]string // "db/key" -> value
	pxat map[string]string // "db/key" -> absolute expiry (ms), from SET ... PXAT
}

func newModel() *model { return &model{data: map[string]string{}, pxat: map[string]string{}} }

func (m *model) exec(argv [][]byte) error {
	switch strings.ToUpper(string(argv[0])) {
	case "SELECT":
		fmt.Sscan(string(argv[1]), &m.db)
	case "SET":
		k := fmt.Sprintf("%d/%s", m.db, argv[1])
		m.data[k] = string(argv[2])
		delete(m.pxat, k)
		if len(argv) == 5 && strings.EqualFold(string(argv[3]), "PXAT") {
			m.pxat[k] = string(argv[4])
		}
	case "PEXPIREAT":
		m.pxat[fmt.Sprintf("%d/%s", m.db, argv[1])] = string(argv[2])
	case "DEL":
		delete(m.data, fmt.Sprintf("%d/%s", m.db, argv[1]))
		delete(m.pxat, fmt.Sprintf("%d/%s", m.db, argv[1]))
	case "MULTI", "EXEC":
	default:
		return fmt.Errorf("%w: %s", ErrUnknownCommand, argv[0])
	}
	return nil
}

// base writes the model's content as commands, as a rewrite writes a base.
func (m *model) base() []byte {
	var b []byte
	byDB := map[int][][2]string{}
	for k, v := range m.data {
		var db int
		var key string
		i := strings.IndexByte(k, '/')
		fmt.Sscan(k[:i], &db)
		key = k[i+1:]
		byDB[db] = append(byDB[db], [2]string{key, v})
	}
	for db := 0; db < 16; db++ {
		if len(byDB[db]) == 0 {
			continue
		}
		b = resp.AppendSelect(b, db)
		for _, kv := range byDB[db] {
			b = resp.AppendCommand(b, []byte("SET"), []byte(kv[0]), []byte(kv[1]))
			if at, ok := m.pxat[fmt.Sprintf("%d/%s", db, kv[0])]; ok {
				b = resp.AppendCommand(b, []byte("PEXPIREAT"), []byte(kv[0]), []byte(at))
			}
		}
	}
	return b
}

func (m *model) clone() map[string]string {
	c := make(map[string]string, len(m.data))
	for k, v := range m.data {
		c[k] = v
	}
	return c
}

// redisServer is a real redis-server 7.0 started by a test in its own
// directory on a free loopback port.
type redisServer struct {
	dir  string
	port int
	proc *testsupport.Proc
}

// needRedis ends the test (testsupport.Require) unless redis-server 7.0
// and the tools bins (redis-cli, redis-check-aof) are installed.
func needRedis(t testing.TB, bins ...string) {
	t.Helper()
	testsupport.RequireRedis(t)
	for _, b := range bins {
		testsupport.RequireTool(t, b)
	}
}

// startRedis starts redis-server in dir with extra directives and waits
// until it answers PING. The test's cleanup stops it.
func startRedis(t testing.TB, dir string, args ...string) *redisServer {
	t.Helper()
	all := append([]string{"--dir", dir, "--save", "", "--daemonize", "no", "--logfile", ""}, args...)
	p := testsupport.Start(t, testsupport.Options{Name: "redis", Bin: testsupport.RequireRedis(t), Args: all})
	s := &redisServer{dir: dir, port: p.Port, proc: p}
	t.Cleanup(s.stop)
	return s
}

// output is what the server logged so far.
func (s *redisServer) output() string { return s.proc.Output() }

func (s *redisServer) cliErr(args ...string) (string, error) {
	all := append([]string{"-h", "127.0.0.1", "-p", fmt.Sprint(s.port)}, args...)
	out, err := exec.Command("redis-cli", all...).CombinedOutput()
	return string(out), err
}

// raw sends commands as one RESP stream (binary-safe) and returns the replies.
func (s *redisServer) raw(t testing.TB, payload []byte) string {
	t.Helper()
	c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", s.port))
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Write(append(payload, encode(command{"QUIT"})...))
	require.NoError(t, err)
	var out bytes.Buffer
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, _ = out.ReadFrom(c)
	return out.String()
}

// stop shuts the server down without saving an RDB (the AOF is fsynced by
// redis itself at shutdown) and waits for the process.
func (s *redisServer) stop() {
	if s.proc.Exited() {
		return
	}
	s.cliErr("SHUTDOWN", "NOSAVE")
	if _, ok := s.proc.Wait(10 * time.Second); !ok {
		s.proc.Kill()
	}
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

func writeFile(t testing.TB, path string, data []byte) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, data, 0o644))
}
