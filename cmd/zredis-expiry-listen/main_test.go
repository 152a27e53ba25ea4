package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zredis/zredis/internal/testsupport"
	"github.com/zredis/zredis/zmqpub"
	"github.com/zredis/zredis/zmqpub/z85"
)

// listenerBin is the command built once by TestMain.
var listenerBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "zredis-expiry-listen-test")
	if err != nil {
		panic(err)
	}
	code := func() int {
		defer os.RemoveAll(dir)
		goTool, err := exec.LookPath("go")
		if err != nil {
			goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
		}
		listenerBin = filepath.Join(dir, "zredis-expiry-listen")
		build := exec.Command(goTool, "build", "-o", listenerBin, ".")
		build.Stderr = os.Stderr
		if err := build.Run(); err != nil {
			os.Stderr.WriteString("building zredis-expiry-listen: " + err.Error() + "\n")
			return 1
		}
		return m.Run()
	}()
	os.Exit(code)
}

// pushScript is a libzmq PUSH socket: it binds a random loopback port,
// prints its endpoint, sends the messages of the JSON file argv[1] (each a
// list of hex frames), then, with "wait", waits for stdin to close, and
// closes with an infinite linger so that every message reaches the peer.
const pushScript = `
import json, os, sys, zmq
ctx = zmq.Context()
sock = ctx.socket(zmq.PUSH)
sock.setsockopt(zmq.LINGER, -1)
if os.environ.get("CURVE_SECRET"):
    sock.curve_server = True
    sock.curve_secretkey = os.environ["CURVE_SECRET"].encode()
port = sock.bind_to_random_port("tcp://127.0.0.1")
print("tcp://127.0.0.1:%d" % port, flush=True)
for msg in json.load(open(sys.argv[1])):
    sock.send_multipart([bytes.fromhex(f) for f in msg])
if len(sys.argv) > 2 and sys.argv[2] == "wait":
    sys.stdin.read()
sock.close()
ctx.term()
`

// pusher is a running pushScript.
type pusher struct {
	cmd      *exec.Cmd
	stdin    io.WriteCloser
	endpoint string
}

// startPusher starts pushScript with msgs; the test's cleanup stops it.
func startPusher(t *testing.T, ctx context.Context, msgs [][][]byte, wait bool) *pusher {
	t.Helper()
	testsupport.RequirePython(t, "zmq")
	hexMsgs := make([][]string, len(msgs))
	for i, m := range msgs {
		for _, f := range m {
			hexMsgs[i] = append(hexMsgs[i], hex.EncodeToString(f))
		}
	}
	raw, err := json.Marshal(hexMsgs)
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "messages.json")
	require.NoError(t, os.WriteFile(file, raw, 0o600))

	args := []string{"-c", pushScript, file}
	if wait {
		args = append(args, "wait")
	}
	p := &pusher{cmd: exec.CommandContext(ctx, "/usr/bin/python3", args...)}
	p.cmd.Stderr = os.Stderr
	p.stdin, err = p.cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := p.cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, p.cmd.Start())
	t.Cleanup(func() {
		p.stdin.Close()
		p.cmd.Process.Kill()
		p.cmd.Wait()
	})
	p.endpoint, err = bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	p.endpoint = strings.TrimSpace(p.endpoint)
	return p
}

// vectorMessages are the messages of the shared vector file, the generated
// ones built by their rule, with their message id when they have one.
func vectorMessages(t *testing.T) [][][]byte {
	t.Helper()
	raw, err := os.ReadFile("../../testdata/expiry-vectors.json")
	require.NoError(t, err)
	var doc struct {
		Vectors []struct {
			Name      string     `json:"name"`
			FramesHex [3]*string `json:"frames_hex"`
			ValueGen  *struct {
				Len int `json:"len"`
			} `json:"value_gen"`
			FieldsGen *struct {
				Count int `json:"count"`
			} `json:"fields_gen"`
			MessageID *string `json:"message_id"`
		} `json:"vectors"`
	}
	require.NoError(t, json.Unmarshal(raw, &doc))
	var msgs [][][]byte
	for _, v := range doc.Vectors {
		var frames [][]byte
		for _, h := range v.FramesHex[:2] {
			f, err := hex.DecodeString(*h)
			require.NoError(t, err)
			frames = append(frames, f)
		}
		switch {
		case v.FramesHex[2] != nil:
			f, err := hex.DecodeString(*v.FramesHex[2])
			require.NoError(t, err)
			frames = append(frames, f)
		case v.ValueGen != nil:
			value := make([]byte, v.ValueGen.Len)
			for i := range value {
				value[i] = byte(i % 251)
			}
			frames = append(frames, zmqpub.Encode(0, zmqpub.TypeString, nil, [][]byte{value})[2])
		case v.FieldsGen != nil:
			var parts [][]byte
			for i := 0; i < v.FieldsGen.Count; i++ {
				parts = append(parts, []byte("field:"+strconv.Itoa(i)), []byte("value:"+strconv.Itoa(i)))
			}
			frames = append(frames, zmqpub.Encode(0, zmqpub.TypeHash, nil, parts)[2])
		}
		if v.MessageID != nil {
			frames = append(frames, []byte(*v.MessageID))
		}
		msgs = append(msgs, frames)
	}
	require.NotEmpty(t, msgs)
	return msgs
}

// TestListenPrintsVectorsAsJSON sends every vector from a libzmq PUSH
// socket, with malformed messages in between, and expects exactly the
// vectors' JSON lines on stdout, a line per malformed message on stderr,
// and an exit after --count messages.
func TestListenPrintsVectorsAsJSON(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	good := vectorMessages(t)
	malformed := [][][]byte{
		{[]byte{0, 0, 0, 0}, []byte{1, 0, 0, 0, 'k'}},
		{[]byte{0, 0, 9, 0}, []byte{1, 0, 0, 0, 'k'}, []byte{0, 0, 0, 0}},
		{[]byte{0, 0, 2, 0}, []byte{1, 0, 0, 0, 'k'}, []byte{0xff, 0xff, 0xff, 0xff, 1, 0, 0, 0, 'a', 0}},
	}
	msgs := append([][][]byte{malformed[0]}, good[:3]...)
	msgs = append(msgs, malformed[1])
	msgs = append(msgs, good[3:]...)
	msgs = append(msgs, malformed[2])
	// The last message shows that the malformed one before it was skipped,
	// not counted.
	msgs = append(msgs, good[0])
	wantMsgs := append(append([][][]byte{}, good...), good[0])

	var want []byte
	for _, m := range wantMsgs {
		d, err := zmqpub.Decode(m)
		require.NoError(t, err)
		want = zmqpub.AppendJSON(want, d)
	}

	p := startPusher(t, ctx, msgs, false)
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, listenerBin, "--endpoint", p.endpoint, "--count", strconv.Itoa(len(wantMsgs)), "--heartbeat", "1s")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "stderr: %s", stderr.String())
	require.NoError(t, p.cmd.Wait())

	require.True(t, bytes.Equal(want, stdout.Bytes()), "stdout differs from AppendJSON of the vectors")
	lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
	require.Len(t, lines, len(wantMsgs))
	for _, line := range lines {
		require.True(t, json.Valid([]byte(line)), "line is JSON: %.200s", line)
	}
	assert.JSONEq(t, `{"db":0,"type":"string","key":"key","value":""}`, lines[0])
	assert.JSONEq(t, `{"db":0,"type":"string","key":{"base64":"AGv/AA=="},"value":{"base64":"AP8B/gCA"}}`, lines[2])
	assert.Contains(t, stdout.String(), `{"db":1,"type":"stream","key":"log","value":[["5-1",["f","1","f","2"]]]}`+"\n",
		"a stream vector, a repeated field kept")
	assert.Contains(t, stdout.String(), `{"db":0,"type":"hash-fields","key":"mail:42","value":{"rcpt:2":"deferred"}}`+"\n",
		"a hash's expired fields, as a hash's object")
	assert.Contains(t, stdout.String(), `{"db":4,"type":"hash-fields","key":{"base64":"aAD/"},"value":{"base64:/wA=":{"base64":"AP+A"},"clé":{"base64":"wyg="}}}`+"\n",
		"a hash's expired fields, binary")
	assert.Contains(t, stdout.String(), `{"db":7,"type":"hash","key":"meta:1","id":"1764633600123-198c09295911914d","value":{"f1":"v1"}}`+"\n",
		"a message id, after the key")

	errLines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
	require.Len(t, errLines, len(malformed), "stderr: %s", stderr.String())
	assert.Contains(t, errLines[0], "skipped a message: malformed expiry message: 2 frames, want 3")
	assert.Contains(t, errLines[1], "unknown value type 9")
	assert.Contains(t, errLines[2], "claims 4294967295 items")
}

func TestListenTextFormat(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	encode := func(db int, typ zmqpub.Type, key string, parts ...string) [][]byte {
		var ps [][]byte
		for _, p := range parts {
			ps = append(ps, []byte(p))
		}
		f := zmqpub.Encode(db, typ, []byte(key), ps)
		return f[:]
	}
	msgs := [][][]byte{
		encode(0, zmqpub.TypeString, "k", "hello\n"),
		encode(15, zmqpub.TypeHash, "h", "f1", "v1", "f2", ""),
		encode(0, zmqpub.TypeZSet, "z", "a", "-inf", "b", "1.5"),
		encode(1, zmqpub.TypeSet, "s\xff", "m"),
		encode(0, zmqpub.TypeHashFields, "mail:42", "rcpt:2", "deferred", "note", ""),
	}
	stream := zmqpub.EncodeStream(2, []byte("st"), []zmqpub.StreamEntry{
		{ID: []byte("1-0"), Fields: [][]byte{[]byte("f"), []byte("v")}},
		{ID: []byte("1-2"), Fields: [][]byte{[]byte("f"), []byte("w"), []byte("g"), {}}},
	})
	msgs = append(msgs, stream[:])
	p := startPusher(t, ctx, msgs, false)
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, listenerBin, "--endpoint", p.endpoint, "--count", "6", "--format", "text")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "stderr: %s", stderr.String())
	assert.Equal(t, `db=0 type=string key="k" value="hello\n"
db=15 type=hash key="h" value=2 {"f1"="v1" "f2"=""}
db=0 type=zset key="z" value=2 {"a"="-inf" "b"="1.5"}
db=1 type=set key="s\xff" value=1 {"m"}
db=0 type=hash-fields key="mail:42" value=2 {"rcpt:2"="deferred" "note"=""}
db=2 type=stream key="st" value=2 {"1-0"={"f"="v"} "1-2"={"f"="w" "g"=""}}
`, stdout.String())
	assert.Empty(t, stderr.String())
}

// TestListenExitsCleanlyOnSignal runs the listener without --count, waits
// for its first line and stops it with SIGINT or SIGTERM: it must exit
// with status 0.
func TestListenExitsCleanlyOnSignal(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			frames := zmqpub.Encode(0, zmqpub.TypeString, []byte("k"), [][]byte{[]byte("v")})
			p := startPusher(t, ctx, [][][]byte{frames[:]}, true)

			var stderr bytes.Buffer
			cmd := exec.CommandContext(ctx, listenerBin, "--endpoint", p.endpoint)
			cmd.Stderr = &stderr
			stdout, err := cmd.StdoutPipe()
			require.NoError(t, err)
			require.NoError(t, cmd.Start())
			line, err := bufio.NewReader(stdout).ReadString('\n')
			require.NoError(t, err)
			assert.Equal(t, `{"db":0,"type":"string","key":"k","value":"v"}`+"\n", line)

			require.NoError(t, cmd.Process.Signal(sig))
			require.NoError(t, cmd.Wait(), "stderr: %s", stderr.String())
			assert.Empty(t, stderr.String())
		})
	}
}

func TestListenCommandLine(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		status   int
		stdout   string
		stderr   string
		noStdout bool
	}{
		{name: "help", args: []string{"--help"}, status: 0, stdout: "Usage: zredis-expiry-listen --endpoint"},
		{name: "no endpoint", args: nil, status: 2, stderr: "at least one --endpoint is required"},
		{name: "bad endpoint", args: []string{"--endpoint", "localhost:5555"}, status: 2, stderr: `endpoint "localhost:5555"`},
		{name: "bad format", args: []string{"--endpoint", "tcp://127.0.0.1:1", "--format", "xml"}, status: 2, stderr: `--format must be json or text, not "xml"`},
		{name: "negative count", args: []string{"--endpoint", "tcp://127.0.0.1:1", "--count", "-1"}, status: 2, stderr: "--count must not be negative"},
		{name: "negative dedup", args: []string{"--endpoint", "tcp://127.0.0.1:1", "--dedup", "-1"}, status: 2, stderr: "--dedup must not be negative"},
		{name: "bad heartbeat", args: []string{"--endpoint", "tcp://127.0.0.1:1", "--heartbeat", "soon"}, status: 2, stderr: "heartbeat"},
		{name: "stray argument", args: []string{"--endpoint", "tcp://127.0.0.1:1", "extra"}, status: 2, stderr: `unexpected argument "extra"`},
		{name: "bad server key", args: []string{"--endpoint", "tcp://127.0.0.1:1", "--curve-server-key", "abc"}, status: 2, stderr: "--curve-server-key: a CURVE key is 40 Z85 characters, not 3"},
		{name: "server key without secret", args: []string{"--endpoint", "tcp://127.0.0.1:1", "--curve-server-key", testServerPublic}, status: 2, stderr: "--curve-server-key needs this listener's secret key"},
		{name: "secret without server key", args: []string{"--endpoint", "tcp://127.0.0.1:1", "--curve-secret-key", testClientSecret}, status: 2, stderr: "a CURVE secret key needs --curve-server-key"},
		{name: "bad secret key", args: []string{"--endpoint", "tcp://127.0.0.1:1", "--curve-server-key", testServerPublic, "--curve-secret-key", "JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh~"}, status: 2, stderr: "--curve-secret-key: a CURVE key is 40 Z85 characters: the character at offset 39"},
		{name: "missing key file", args: []string{"--endpoint", "tcp://127.0.0.1:1", "--curve-server-key", testServerPublic, "--curve-secret-key-file", "/nonexistent/key"}, status: 2, stderr: "--curve-secret-key-file: open /nonexistent/key"},
		{name: "keygen with others", args: []string{"--curve-keygen", "--endpoint", "tcp://127.0.0.1:1"}, status: 2, stderr: "--curve-keygen takes no other option"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			cmd := exec.Command(listenerBin, tc.args...)
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			if tc.status == 0 {
				require.NoError(t, err)
			} else {
				var exitErr *exec.ExitError
				require.ErrorAs(t, err, &exitErr)
				assert.Equal(t, tc.status, exitErr.ExitCode())
			}
			assert.Contains(t, stdout.String(), tc.stdout)
			assert.Contains(t, stderr.String(), tc.stderr)
		})
	}
}

// libzmq's test keys (tests/testutil_security.hpp).
const (
	testServerPublic = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7"
	testServerSecret = "JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6"
	testClientPublic = "Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID"
	testClientSecret = "D:)Q[IlAW!ahhC2ac:9*A}h:p?([4%wOTJ%JR%cs"
)

// --curve-keygen prints a pair whose public key derives from its secret
// key; the printed file is what --curve-secret-key-file reads.
func TestCurveKeygenAndKeyFile(t *testing.T) {
	out, err := exec.Command(listenerBin, "--curve-keygen").Output()
	require.NoError(t, err)
	var pub, sec string
	for _, line := range strings.Split(string(out), "\n") {
		if k, v, ok := strings.Cut(line, " = "); ok {
			switch k {
			case "public-key":
				pub = v
			case "secret-key":
				sec = v
			}
		}
	}
	secret, err := z85.DecodeKey(sec)
	require.NoError(t, err)
	assert.Equal(t, pub, z85.EncodeKey(zmqpub.NewCurveKeys(secret).Public))

	file := filepath.Join(t.TempDir(), "listener.key")
	require.NoError(t, os.WriteFile(file, out, 0o600))
	got, err := readSecretKeyFile(file)
	require.NoError(t, err)
	assert.Equal(t, sec, got)
	// czmq's zcert secret file, and a bare key.
	require.NoError(t, os.WriteFile(file, []byte("#   ZeroMQ CURVE **Secret** Certificate\nmetadata\ncurve\n    public-key = \""+testClientPublic+"\"\n    secret-key = \""+testClientSecret+"\"\n"), 0o600))
	got, err = readSecretKeyFile(file)
	require.NoError(t, err)
	assert.Equal(t, testClientSecret, got)
	require.NoError(t, os.WriteFile(file, []byte(testClientSecret+"\n"), 0o600))
	got, err = readSecretKeyFile(file)
	require.NoError(t, err)
	assert.Equal(t, testClientSecret, got)
}

// The listener with CURVE flags against a libzmq CURVE PUSH socket, its
// secret key from the environment.
func TestListenCurveFromLibzmq(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	frames := zmqpub.Encode(0, zmqpub.TypeString, []byte("k"), [][]byte{[]byte("v")})
	msgs := [][][]byte{frames[:]}
	t.Setenv("CURVE_SECRET", testServerSecret)
	p := startPusher(t, ctx, msgs, true)
	cmd := exec.CommandContext(ctx, listenerBin, "--endpoint", p.endpoint, "--count", "1", "--curve-server-key", testServerPublic)
	cmd.Env = append(os.Environ(), "ZREDIS_CURVE_SECRET_KEY="+testClientSecret)
	out, err := cmd.Output()
	require.NoError(t, err)
	assert.Equal(t, `{"db":0,"type":"string","key":"k","value":"v"}`+"\n", string(out))
}

func TestAppendText(t *testing.T) {
	long := strings.Repeat("x", textMaxBytes+5)
	var members [][]byte
	for i := 0; i < textMaxItems+3; i++ {
		members = append(members, []byte{'a' + byte(i)})
	}
	// 18 entries, the first of 17 pairs: 16 entries and 16 pairs shown.
	var longStream []zmqpub.StreamEntry
	var shown []string
	for i := 0; i < textMaxItems+2; i++ {
		e := zmqpub.StreamEntry{ID: []byte("1-" + strconv.Itoa(i)), Fields: [][]byte{[]byte("f"), []byte("v")}}
		pairs := `"f"="v"`
		if i == 0 {
			e.Fields, pairs = nil, ""
			for j := 0; j < textMaxItems+1; j++ {
				e.Fields = append(e.Fields, []byte{'a' + byte(j)}, []byte("1"))
				if j < textMaxItems {
					pairs += fmt.Sprintf(`%q="1" `, string(rune('a'+j)))
				}
			}
			pairs += "...(+1)"
		}
		longStream = append(longStream, e)
		if i < textMaxItems {
			shown = append(shown, `"`+string(e.ID)+`"={`+pairs+`}`)
		}
	}
	longEntries := strings.Join(shown, " ")
	tests := []struct {
		name string
		d    zmqpub.Decoded
		want string
	}{
		{
			"quoting",
			zmqpub.Decoded{Type: zmqpub.TypeString, Key: []byte("k\"\\"), Parts: [][]byte{[]byte("\n\t\r\x00\x7f é")}},
			`db=0 type=string key="k\"\\" value="\n\t\x0d\x00\x7f \xc3\xa9"`,
		},
		{
			"long string",
			zmqpub.Decoded{DB: 2, Type: zmqpub.TypeString, Key: []byte("k"), Parts: [][]byte{[]byte(long)}},
			`db=2 type=string key="k" value="` + long[:textMaxBytes] + `"...(+5 bytes)`,
		},
		{
			"long list",
			zmqpub.Decoded{Type: zmqpub.TypeList, Key: []byte("l"), Parts: members},
			`db=0 type=list key="l" value=19 {"a" "b" "c" "d" "e" "f" "g" "h" "i" "j" "k" "l" "m" "n" "o" "p" ...(+3)}`,
		},
		{
			"empty set",
			zmqpub.Decoded{Type: zmqpub.TypeSet, Key: []byte("s")},
			`db=0 type=set key="s" value=0 {}`,
		},
		{
			"hash",
			zmqpub.Decoded{Type: zmqpub.TypeHash, Key: []byte("h"), Parts: [][]byte{[]byte("f"), []byte("v"), {0xff}, {}}},
			`db=0 type=hash key="h" value=2 {"f"="v" "\xff"=""}`,
		},
		{
			"hash-fields",
			zmqpub.Decoded{DB: 1, Type: zmqpub.TypeHashFields, Key: []byte("mail:42"), Parts: [][]byte{[]byte("rcpt:2"), []byte("deferred"), {0xff}, {}}},
			`db=1 type=hash-fields key="mail:42" value=2 {"rcpt:2"="deferred" "\xff"=""}`,
		},
		{
			"stream",
			zmqpub.Decoded{DB: 3, Type: zmqpub.TypeStream, Key: []byte("s"), Entries: []zmqpub.StreamEntry{
				{ID: []byte("1700000000000-0"), Fields: [][]byte{[]byte("f"), []byte("v\n")}},
				{ID: []byte("1700000000000-2"), Fields: [][]byte{[]byte("f"), {0xff}, []byte("f"), {}}},
			}},
			`db=3 type=stream key="s" value=2 {"1700000000000-0"={"f"="v\n"} "1700000000000-2"={"f"="\xff" "f"=""}}`,
		},
		{
			"message id",
			zmqpub.Decoded{Type: zmqpub.TypeString, Key: []byte("lock:q1"), Parts: [][]byte{[]byte("1")}, ID: []byte("1764633600123-c16520f3790e34f7")},
			`db=0 type=string key="lock:q1" id=1764633600123-c16520f3790e34f7 value="1"`,
		},
		{
			"empty stream",
			zmqpub.Decoded{Type: zmqpub.TypeStream, Key: []byte("s"), Entries: []zmqpub.StreamEntry{}},
			`db=0 type=stream key="s" value=0 {}`,
		},
		{
			"long stream and long entry",
			zmqpub.Decoded{Type: zmqpub.TypeStream, Key: []byte("s"), Entries: longStream},
			`db=0 type=stream key="s" value=18 {` + longEntries + ` ...(+2)}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want+"\n", string(appendText(nil, tc.d)))
		})
	}
}

// fakeRESP is a server that records the commands --ack sends it and
// answers each with a reply that is not an error.
type fakeRESP struct {
	addr string
	mu   sync.Mutex
	cmds [][]string
}

func startFakeRESP(t *testing.T) *fakeRESP {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	f := &fakeRESP{addr: ln.Addr().String()}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				f.serve(c)
			}()
		}
	}()
	return f
}

// serve reads RESP arrays of bulk strings until the connection ends.
func (f *fakeRESP) serve(c net.Conn) {
	rd := bufio.NewReader(c)
	line := func() (string, bool) {
		l, err := rd.ReadString('\n')
		return strings.TrimSuffix(l, "\r\n"), err == nil
	}
	for {
		head, ok := line()
		if !ok || !strings.HasPrefix(head, "*") {
			return
		}
		n, _ := strconv.Atoi(head[1:])
		cmd := make([]string, 0, n)
		for range n {
			if _, ok := line(); !ok { // $len
				return
			}
			arg, ok := line()
			if !ok {
				return
			}
			cmd = append(cmd, arg)
		}
		f.mu.Lock()
		f.cmds = append(f.cmds, cmd)
		f.mu.Unlock()
		reply := "+OK\r\n"
		if strings.EqualFold(cmd[0], "DEL") {
			reply = ":1\r\n"
		}
		if _, err := c.Write([]byte(reply)); err != nil {
			return
		}
	}
}

func (f *fakeRESP) commands() [][]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][]string(nil), f.cmds...)
}

// --ack deletes a printed hash, never the hash of expired fields
// (hash-fields): that hash may hold other fields.
func TestListenAckSkipsHashFields(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	server := startFakeRESP(t)
	encode := func(typ zmqpub.Type, key string, parts ...string) [][]byte {
		var ps [][]byte
		for _, p := range parts {
			ps = append(ps, []byte(p))
		}
		f := zmqpub.Encode(0, typ, []byte(key), ps)
		return f[:]
	}
	msgs := [][][]byte{
		encode(zmqpub.TypeHashFields, "mail:42", "rcpt:2", "deferred"),
		encode(zmqpub.TypeHash, "mail:43", "from", "a@example.org"),
		encode(zmqpub.TypeHashFields, "mail:44", "lock", "w7"),
	}
	p := startPusher(t, ctx, msgs, false)
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, listenerBin, "--endpoint", p.endpoint, "--count", "3", "--ack", server.addr)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "stderr: %s", stderr.String())
	assert.Equal(t, `{"db":0,"type":"hash-fields","key":"mail:42","value":{"rcpt:2":"deferred"}}
{"db":0,"type":"hash","key":"mail:43","value":{"from":"a@example.org"}}
{"db":0,"type":"hash-fields","key":"mail:44","value":{"lock":"w7"}}
`, stdout.String())
	assert.Empty(t, stderr.String())
	assert.Equal(t, [][]string{{"SELECT", "0"}, {"DEL", "mail:43"}}, server.commands(), "only the hash is acknowledged")
}

// withID is a message of the given frames with its message id for an event
// at Unix ms at: frame 4, as expiry-zmq-message-id yes sends it.
func withID(frames [3][]byte, at int64) [][]byte {
	return append(frames[:], zmqpub.AppendMessageID(nil, at, frames[0], frames[1]))
}

// A message whose id was seen reports an expiry printed already: it is
// dropped, not acknowledged, and counted once at exit. Each case ends
// with a message without an id, so that --count stops the listener after
// every message before it was handled.
func TestListenDropsDuplicates(t *testing.T) {
	str := func(key, value string) [3][]byte {
		return zmqpub.Encode(0, zmqpub.TypeString, []byte(key), [][]byte{[]byte(value)})
	}
	last := str("last", "x")
	a, b, c := withID(str("a", "1"), 1764633600123), withID(str("b", "2"), 1764633600123), withID(str("a", "1"), 1764633600124)
	line := func(key, value string, at int64) string {
		f := str(key, value)
		return `{"db":0,"type":"string","key":"` + key + `","id":"` + string(zmqpub.AppendMessageID(nil, at, f[0], f[1])) + `","value":"` + value + `"}` + "\n"
	}
	lineA, lineB, lineC := line("a", "1", 1764633600123), line("b", "2", 1764633600123), line("a", "1", 1764633600124)
	lineLast := `{"db":0,"type":"string","key":"last","value":"x"}` + "\n"
	tests := []struct {
		name    string
		args    []string
		msgs    [][][]byte
		want    string
		dropped int
	}{
		{"a duplicate is dropped, another id passes", nil,
			[][][]byte{a, b, a, c, a, b, last[:]}, lineA + lineB + lineC + lineLast, 3},
		{"messages without an id are never dropped", nil,
			[][][]byte{last[:], last[:]}, lineLast + lineLast, 0},
		{"--dedup 0 keeps both", []string{"--dedup", "0"},
			[][][]byte{a, a, last[:]}, lineA + lineA + lineLast, 0},
		// a and b fill the window; c pushes a out, a comes back in.
		{"the window forgets the oldest id", []string{"--dedup", "2"},
			[][][]byte{a, b, a, c, a, c, last[:]}, lineA + lineB + lineC + lineA + lineLast, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			p := startPusher(t, ctx, tc.msgs, false)
			args := append([]string{"--endpoint", p.endpoint, "--count", strconv.Itoa(strings.Count(tc.want, "\n"))}, tc.args...)
			var stdout, stderr bytes.Buffer
			cmd := exec.CommandContext(ctx, listenerBin, args...)
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			require.NoError(t, cmd.Run(), "stderr: %s", stderr.String())
			assert.Equal(t, tc.want, stdout.String())
			if tc.dropped == 0 {
				assert.Empty(t, stderr.String())
			} else {
				assert.Equal(t, fmt.Sprintf("zredis-expiry-listen: dropped %d duplicate messages\n", tc.dropped), stderr.String())
			}
		})
	}
}

// A duplicate hash is not acknowledged again: the first was, and a hash
// of that name now may be a new one.
func TestListenAckSkipsDuplicates(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	server := startFakeRESP(t)
	hash := withID(zmqpub.Encode(0, zmqpub.TypeHash, []byte("mail:43"), [][]byte{[]byte("from"), []byte("a@example.org")}), 1764633600123)
	last := zmqpub.Encode(0, zmqpub.TypeString, []byte("last"), [][]byte{[]byte("x")})
	p := startPusher(t, ctx, [][][]byte{hash, hash, last[:]}, false)
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, listenerBin, "--endpoint", p.endpoint, "--count", "2", "--ack", server.addr)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "stderr: %s", stderr.String())
	assert.Equal(t, 2, strings.Count(stdout.String(), "\n"), "the hash once, then the last message")
	assert.Equal(t, "zredis-expiry-listen: dropped 1 duplicate messages\n", stderr.String())
	assert.Equal(t, [][]string{{"SELECT", "0"}, {"DEL", "mail:43"}}, server.commands(), "acknowledged once")
}

func TestSeenIDs(t *testing.T) {
	s := newSeenIDs(3)
	for _, id := range []string{"1-a", "2-b", "3-c"} {
		assert.True(t, s.add([]byte(id)), id)
	}
	assert.False(t, s.add([]byte("1-a")), "a repeat")
	assert.True(t, s.add([]byte("4-d")), "a fourth id pushes the first out")
	assert.True(t, s.add([]byte("1-a")), "the first, forgotten")
	assert.False(t, s.add([]byte("3-c")))
	assert.True(t, s.add([]byte("2-b")), "pushed out by 1-a")
	assert.Len(t, s.set, 3, "the set is bounded with the window")
}
