package tests

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zredis/zredis/zmqpub"
	"github.com/zredis/zredis/zmqpub/pull"
)

// Stream keys are sent as type 5 once expiry-zmq-types includes stream:
// their live entries in ID order, each with its own fields (an entry
// XDEL removed left out, consumer groups not sent). The message is
// checked as the Go PULL socket (zmqpub/pull), a libzmq one (pyzmq) and
// zredis-expiry-listen receive it.
func TestExpiryStreamOfStreamKeys(t *testing.T) {
	ep := zmqEndpoint(t)
	z := StartZredis(t, "--expiry-zmq-endpoints", ep)
	ctl := Dial(t, z.Addr)

	sock := pull.Dial([]string{ep}, pull.Options{})
	t.Cleanup(func() { sock.Close() })
	msgs := make(chan zmqpub.Decoded, 16)
	go func() {
		for {
			frames, err := sock.Recv()
			if err != nil {
				close(msgs)
				return
			}
			d, err := zmqpub.Decode(frames)
			if err != nil {
				t.Errorf("undecodable message: %v", err)
				continue
			}
			msgs <- d
		}
	}()
	recv := func() zmqpub.Decoded {
		t.Helper()
		select {
		case d := <-msgs:
			return d
		case <-time.After(30 * time.Second):
			t.Fatal("no message in 30s")
		}
		return zmqpub.Decoded{}
	}
	waitInfo(t, ctl, "expiry_zmq_listeners", "1", 30*time.Second)

	// By default a stream expires without a message.
	requireReply(t, ctl, "$3\r\n1-1\r\n", "XADD", "quiet", "1-1", "f", "v")
	requireReply(t, ctl, ":1\r\n", "PEXPIRE", "quiet", "20")
	waitInfo(t, ctl, "expired_keys", "1", 30*time.Second)
	select {
	case d := <-msgs:
		t.Fatalf("a stream was sent without opting in: %q", d.Key)
	case <-time.After(300 * time.Millisecond):
	}

	requireReply(t, ctl, "+OK\r\n", "CONFIG", "SET", "expiry-zmq-types", "string hash stream")
	require.Contains(t, ctl.Do("INFO", "expiry"), "expiry_zmq_types:string,hash,stream\r\n")

	// Through the Go PULL socket: a stream of entries with different
	// fields, and one that XDEL emptied (still a key, with no entries).
	want := fillStream(t, ctl, "events")
	requireReply(t, ctl, "$3\r\n1-1\r\n", "XADD", "drained", "1-1", "f", "v")
	requireReply(t, ctl, ":1\r\n", "XDEL", "drained", "1-1")
	requireReply(t, ctl, ":1\r\n", "PEXPIRE", "drained", "20")
	requireReply(t, ctl, ":1\r\n", "PEXPIRE", "events", "20")
	got := map[string]zmqpub.Decoded{}
	for i := 0; i < 2; i++ {
		d := recv()
		got[string(d.Key)] = d
	}
	assert.Equal(t, zmqpub.Decoded{Type: zmqpub.TypeStream, Key: []byte("events"), Entries: want}, got["events"])
	assert.Equal(t, zmqpub.Decoded{Type: zmqpub.TypeStream, Key: []byte("drained"), Entries: []zmqpub.StreamEntry{}}, got["drained"])
	sock.Close()
	waitInfo(t, ctl, "expiry_zmq_listeners", "0", 30*time.Second)

	// Through libzmq, in database 5.
	py := startListener(t, []string{ep})
	waitInfo(t, ctl, "expiry_zmq_listeners", "1", 30*time.Second)
	requireReply(t, ctl, "+OK\r\n", "SELECT", "5")
	want = fillStream(t, ctl, "py")
	requireReply(t, ctl, ":1\r\n", "PEXPIRE", "py", "20")
	assert.Equal(t, zmqpub.Decoded{DB: 5, Type: zmqpub.TypeStream, Key: []byte("py"), Entries: want}, py.recv(t, 1, 30*time.Second)[0])
	py.kill()
	waitInfo(t, ctl, "expiry_zmq_listeners", "0", 30*time.Second)

	// zredis-expiry-listen prints it as XRANGE replies.
	listen := exec.Command(listenBin, "--endpoint", ep, "--count", "1")
	var out bytes.Buffer
	listen.Stdout = &out
	require.NoError(t, listen.Start())
	t.Cleanup(func() { listen.Process.Kill(); listen.Wait() })
	waitInfo(t, ctl, "expiry_zmq_listeners", "1", 30*time.Second)
	requireReply(t, ctl, "$3\r\n1-1\r\n", "XADD", "j", "1-1", "f", "1", "f", "x\xff")
	requireReply(t, ctl, "$3\r\n2-0\r\n", "XADD", "j", "2-0", "g", "")
	requireReply(t, ctl, ":1\r\n", "PEXPIRE", "j", "20")
	waitExit(t, listen)
	assert.Equal(t, `{"db":5,"type":"stream","key":"j","value":[["1-1",["f","1","f",{"base64":"eP8="}]],["2-0",["g",""]]]}`+"\n", out.String())

	info := infoExpiry(t, ctl)
	assert.Equal(t, "4", info["expiry_messages_sent"], "INFO expiry: %v", info)
	assert.Equal(t, "5", info["expired_keys"])
}

// fillStream builds stream key with entries of different fields, one of
// them removed by XDEL and one with a generated ID, plus a consumer group
// with a pending entry, and returns the entries its message must carry.
func fillStream(t *testing.T, c *Conn, key string) []zmqpub.StreamEntry {
	t.Helper()
	requireReply(t, c, "$15\r\n1700000000000-0\r\n", "XADD", key, "1700000000000-0", "type", "mail", "to", "a@example.org")
	requireReply(t, c, "$15\r\n1700000000000-1\r\n", "XADD", key, "1700000000000-1", "type", "mail", "to", "gone@example.org")
	requireReply(t, c, "$15\r\n1700000000000-2\r\n", "XADD", key, "1700000000000-2", "type", "mail", "to", "b@example.org", "note", "")
	requireReply(t, c, "$15\r\n1700000000005-0\r\n", "XADD", key, "1700000000005-0", "n", "-12", "bin", "\x00\xff", "n", "007")
	auto := c.Do("XADD", key, "*", "auto", "1")
	id, ok := strings.CutSuffix(auto[strings.Index(auto, "\r\n")+2:], "\r\n")
	require.True(t, ok && strings.HasPrefix(auto, "$") && strings.Contains(id, "-"), "XADD *: %q", auto)
	requireReply(t, c, ":1\r\n", "XDEL", key, "1700000000000-1")
	requireReply(t, c, "+OK\r\n", "XGROUP", "CREATE", key, "g", "0")
	require.Contains(t, c.Do("XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", key, ">"), "1700000000000-0")
	return []zmqpub.StreamEntry{
		{ID: []byte("1700000000000-0"), Fields: fields("type", "mail", "to", "a@example.org")},
		{ID: []byte("1700000000000-2"), Fields: fields("type", "mail", "to", "b@example.org", "note", "")},
		{ID: []byte("1700000000005-0"), Fields: fields("n", "-12", "bin", "\x00\xff", "n", "007")},
		{ID: []byte(id), Fields: fields("auto", "1")},
	}
}

func requireReply(t *testing.T, c *Conn, want string, args ...string) {
	t.Helper()
	require.Equal(t, want, c.Do(args...), "%q", args)
}

func fields(ss ...string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

// The Python example listener (examples/curve_listener.py) decodes every
// shared vector (testdata/expiry-vectors.json), the streams' and the
// hash-fields' included, and the message ids (frame 4) of those with one.
func TestExpiryVectorsDecodeInPython(t *testing.T) {
	requirePythonZMQ(t)
	out, err := exec.Command(pythonBin, "testdata/decode_vectors.py", "../testdata/expiry-vectors.json", "../examples").CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "\nids 3\n")
	assert.Contains(t, string(out), "\ntypes hash hash-fields list set stream string zset\n")
}
