// Command zredis-expiry-listen receives zredis's expiry messages and prints
// each one as a line: JSON by default, or text for a human reading along.
//
// It connects a 0MQ PULL socket to every --endpoint the server's
// expiry-zmq-endpoints binds, reconnecting by itself while the server is
// down, and prints every message as it arrives:
//
//	zredis-expiry-listen --endpoint tcp://127.0.0.1:5555
//	{"db":0,"type":"hash","key":"meta:1","value":{"sender":"a@example.org"}}
//
// With CURVE on the server (expiry-zmq-curve-secret-key), give the
// server's public key and the listener's secret key, whose public key the
// server must allow (expiry-zmq-curve-allowed-keys):
//
//	zredis-expiry-listen --curve-keygen > listener.key   # once
//	ZREDIS_CURVE_SECRET_KEY=... zredis-expiry-listen --endpoint tcp://127.0.0.1:5555 \
//	    --curve-server-key 'rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7'
//
// The JSON shape is zmqpub.AppendJSON's. A message that does not decode is
// reported on stderr and skipped.
//
// A server with expiry-zmq-message-id yes adds a fourth frame, the message
// id, printed as "id". The same id comes again when the same expiry is
// reported again (the key expiring once more after a crash, an AOF replay,
// a promoted replica): the listener remembers the last --dedup ids and
// drops such a message, neither printing nor acknowledging it, and says at
// exit how many it dropped. Messages without an id are never dropped.
//
// SIGINT and SIGTERM end it cleanly (exit status 0); messages received and
// not yet printed are lost, as with any PULL socket that closes.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/zredis/zredis/zmqpub"
	"github.com/zredis/zredis/zmqpub/pull"
	"github.com/zredis/zredis/zmqpub/z85"
)

const name = "zredis-expiry-listen"

const usage = `Usage: zredis-expiry-listen --endpoint ENDPOINT [--endpoint ENDPOINT ...] [options]

Receives zredis expiry messages on a 0MQ PULL socket and prints one line per
message on stdout. Malformed messages are reported on stderr and skipped.
A message whose id (frame 4, sent with expiry-zmq-message-id yes) was seen
already reports an expiry printed before: it is dropped, and how many were
is written on stderr at exit.

Options:
  --endpoint ENDPOINT  tcp://host:port or ipc:///path the server binds
                       (expiry-zmq-endpoints); repeat for several; required
  --format json|text   json (default): {"db":0,"type":"string","key":"k","value":"v"};
                       text: db=0 type=string key="k" value="v", bytes
                       outside printable ASCII as \xHH, long values and
                       collections shortened; a message id is printed
                       after the key ("id":"..." or id=...)
  --count N            exit after printing N messages (default 0: run until
                       SIGINT or SIGTERM)
  --hwm N              messages received and not yet printed before the
                       socket stops reading (default 1000)
  --dedup N            remember the ids of the last N messages that had one
                       and drop a message whose id is among them: not
                       printed, not acknowledged (default 100000; 0: off)
  --heartbeat D        send a ZMTP PING every D (e.g. 1s) and reconnect when
                       the server is silent for 3 of them (default 0: off)
  --ack HOST:PORT      after printing a hash, delete it on the server at
                       HOST:PORT (SELECT db, DEL key): the acknowledgement
                       the hash expire cycles wait for
                       (expiry-zmq-hash-max-expire-cycles); a failure is
                       reported on stderr and the next cycle sends it again.
                       A hash's expired fields (type hash-fields) are never
                       acknowledged: their hash may hold other fields
  --ack-password PW    AUTH with PW on the --ack connection
  --ack-db N           the database whose hashes cycle (the server's
                       expiry-zmq-hash-main-db; default 0): only hashes
                       of that database are acknowledged

CURVE (when the server sets expiry-zmq-curve-secret-key):
  --curve-server-key KEY    the server's public key (Z85, 40 characters,
                            INFO expiry_zmq_curve_public_key); turns CURVE on
  --curve-secret-key-file F read this listener's secret key (Z85) from
                            file F (the first 40 characters of its first line
                            that is not a comment, or a line "secret-key =
                            KEY" as --curve-keygen and czmq's zcert files write)
  --curve-secret-key KEY    the secret key itself (visible to other users
                            in the process list: prefer the file, or the
                            environment variable ZREDIS_CURVE_SECRET_KEY)
  --curve-keygen            print a new key pair and exit: the public key
                            goes into the server's
                            expiry-zmq-curve-allowed-keys, the secret key to
                            this listener
  --help               print this help
`

// config is the parsed command line.
type config struct {
	endpoints []string
	format    string
	count     int
	hwm       int
	heartbeat time.Duration
	dedup     int    // --dedup: ids remembered; 0: off
	ack       string // --ack: the server to delete handled hashes on
	ackPass   string
	ackDB     int
	keygen    bool              // --curve-keygen
	serverKey *[32]byte         // --curve-server-key
	curveKeys *zmqpub.CurveKeys // from the secret key, with serverKey
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the whole command; it returns the exit status. It stops when
// ctx is done (status 0), after --count messages (0), or when stdout
// fails (1).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, err := parseArgs(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		io.WriteString(stdout, usage)
		return 0
	case err != nil:
		fmt.Fprintf(stderr, "%s: %v (see --help)\n", name, err)
		return 2
	}
	if cfg.keygen {
		keys, err := zmqpub.GenerateCurveKeys()
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", name, err)
			return 1
		}
		fmt.Fprintf(stdout, "# zredis-expiry-listen CURVE key pair: the public key goes into the server's\n"+
			"# expiry-zmq-curve-allowed-keys, this file to --curve-secret-key-file.\n"+
			"public-key = %s\nsecret-key = %s\n", z85.EncodeKey(keys.Public), z85.EncodeKey(keys.Secret))
		return 0
	}
	appendLine := zmqpub.AppendJSON
	if cfg.format == "text" {
		appendLine = appendText
	}

	opts := pull.Options{HWM: cfg.hwm, Heartbeat: cfg.heartbeat}
	if cfg.serverKey != nil {
		opts.CurveServerKey, opts.CurveKeys = cfg.serverKey, cfg.curveKeys
		opts.Logf = rateLimitedLog(stderr)
	}
	sock := pull.Dial(cfg.endpoints, opts)
	// The closer goroutine ends Recv when a signal arrives; run waits for it
	// so that the socket's goroutines are gone when run returns.
	finished := make(chan struct{})
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		select {
		case <-ctx.Done():
		case <-finished:
		}
		sock.Close()
	}()
	defer func() {
		close(finished)
		<-closed
	}()

	var acks *acker
	if cfg.ack != "" {
		acks = &acker{addr: cfg.ack, password: cfg.ackPass, timeout: 5 * time.Second}
		defer acks.close()
	}
	var seen *seenIDs
	if cfg.dedup > 0 {
		seen = newSeenIDs(cfg.dedup)
	}
	dropped := 0
	// One line at exit: after a failover a line per duplicate could
	// bury everything else on stderr.
	defer func() {
		if dropped > 0 {
			fmt.Fprintf(stderr, "%s: dropped %d duplicate messages\n", name, dropped)
		}
	}()
	var line []byte
	for printed := 0; cfg.count == 0 || printed < cfg.count; {
		frames, err := sock.Recv()
		if err != nil {
			if ctx.Err() != nil {
				return 0
			}
			fmt.Fprintf(stderr, "%s: %v\n", name, err)
			return 1
		}
		d, err := zmqpub.Decode(frames)
		if err != nil {
			fmt.Fprintf(stderr, "%s: skipped a message: %v\n", name, err)
			continue
		}
		if seen != nil && d.ID != nil && !seen.add(d.ID) {
			// Printed (and acknowledged) when it first came: acknowledging
			// again could delete a hash written since under that name.
			dropped++
			continue
		}
		// One Write per message: a reader on a pipe sees whole lines.
		line = appendLine(line[:0], d)
		if _, err := stdout.Write(line); err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", name, err)
			return 1
		}
		printed++
		if acks != nil && d.Type == zmqpub.TypeHash && d.DB == cfg.ackDB {
			// Only the main database's hashes are kept for the cycles:
			// any other key is gone already, and a key of that name may
			// be a new one. A hash's expired fields (hash-fields) are
			// never acknowledged: their hash may hold other fields,
			// which DEL would remove.
			if err := acks.ack(d.DB, d.Key); err != nil {
				fmt.Fprintf(stderr, "%s: could not acknowledge %q in db %d: %v\n", name, d.Key, d.DB, err)
			}
		}
		if cap(line) > maxKeptLine {
			line = nil
		}
	}
	return 0
}

// maxKeptLine bounds the line buffer kept between messages, so that one
// 10 MB value does not pin 10 MB for the rest of the run.
const maxKeptLine = 1 << 20

// endpointList is a repeatable --endpoint.
type endpointList []string

func (l *endpointList) String() string { return strings.Join(*l, " ") }

func (l *endpointList) Set(ep string) error {
	if _, _, err := zmqpub.SplitEndpoint(ep); err != nil {
		return err
	}
	*l = append(*l, ep)
	return nil
}

// rateLimitedLog reports a failed handshake on w at most once a second
// (a refused listener reconnects every 100 ms).
func rateLimitedLog(w io.Writer) func(format string, args ...any) {
	var mu sync.Mutex
	var last time.Time
	return func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if now := time.Now(); now.Sub(last) >= time.Second {
			last = now
			fmt.Fprintf(w, "%s: %s\n", name, fmt.Sprintf(format, args...))
		}
	}
}

// secretKeyEnv names the environment variable holding the listener's
// CURVE secret key.
const secretKeyEnv = "ZREDIS_CURVE_SECRET_KEY"

// readSecretKeyFile returns the Z85 secret key in a file: a line
// "secret-key = KEY" (as --curve-keygen prints
// it, and czmq's zcert secret files), or else the first line that is
// neither empty nor a comment.
func readSecretKeyFile(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	first := ""
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok && strings.TrimSpace(k) == "secret-key" {
			return strings.Trim(strings.TrimSpace(v), `"`), nil
		}
		if first == "" && !strings.Contains(line, "=") {
			first = line
		}
	}
	if first == "" {
		return "", fmt.Errorf("%s holds no secret key", path)
	}
	return first, nil
}

// parseCurve reads the CURVE options into cfg.
func parseCurve(cfg *config, serverKey, secretKey, secretKeyFile string) error {
	if secretKey == "" && secretKeyFile == "" {
		secretKey = os.Getenv(secretKeyEnv)
	}
	if serverKey == "" {
		if secretKey != "" || secretKeyFile != "" {
			return errors.New("a CURVE secret key needs --curve-server-key")
		}
		return nil
	}
	k, err := z85.DecodeKey(serverKey)
	if err != nil {
		return fmt.Errorf("--curve-server-key: %v", err)
	}
	cfg.serverKey = &k
	source := "--curve-secret-key"
	switch {
	case secretKey != "" && secretKeyFile != "":
		return errors.New("give --curve-secret-key or --curve-secret-key-file, not both")
	case secretKeyFile != "":
		source = "--curve-secret-key-file " + secretKeyFile
		if secretKey, err = readSecretKeyFile(secretKeyFile); err != nil {
			return fmt.Errorf("--curve-secret-key-file: %v", err)
		}
	case secretKey == "":
		return fmt.Errorf("--curve-server-key needs this listener's secret key: --curve-secret-key-file, --curve-secret-key or %s", secretKeyEnv)
	case os.Getenv(secretKeyEnv) == secretKey:
		source = secretKeyEnv
	}
	sk, err := z85.DecodeKey(secretKey)
	if err != nil {
		return fmt.Errorf("%s: %v", source, err)
	}
	keys := zmqpub.NewCurveKeys(sk)
	cfg.curveKeys = &keys
	return nil
}

// parseArgs reads the command line. It returns flag.ErrHelp for --help and
// an error saying what is wrong for anything else it refuses.
func parseArgs(args []string) (config, error) {
	var cfg config
	var endpoints endpointList
	var serverKey, secretKey, secretKeyFile string
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.Var(&endpoints, "endpoint", "")
	fs.StringVar(&cfg.format, "format", "json", "")
	fs.IntVar(&cfg.count, "count", 0, "")
	fs.IntVar(&cfg.hwm, "hwm", 0, "")
	fs.DurationVar(&cfg.heartbeat, "heartbeat", 0, "")
	fs.IntVar(&cfg.dedup, "dedup", 100000, "")
	fs.StringVar(&cfg.ack, "ack", "", "")
	fs.StringVar(&cfg.ackPass, "ack-password", "", "")
	fs.IntVar(&cfg.ackDB, "ack-db", 0, "")
	fs.StringVar(&serverKey, "curve-server-key", "", "")
	fs.StringVar(&secretKey, "curve-secret-key", "", "")
	fs.StringVar(&secretKeyFile, "curve-secret-key-file", "", "")
	fs.BoolVar(&cfg.keygen, "curve-keygen", false, "")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	cfg.endpoints = endpoints
	if cfg.keygen {
		if fs.NArg() > 0 || len(args) != 1 {
			return cfg, errors.New("--curve-keygen takes no other option")
		}
		return cfg, nil
	}
	if err := parseCurve(&cfg, serverKey, secretKey, secretKeyFile); err != nil {
		return cfg, err
	}
	switch {
	case fs.NArg() > 0:
		return cfg, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case len(cfg.endpoints) == 0:
		return cfg, errors.New("at least one --endpoint is required")
	case cfg.format != "json" && cfg.format != "text":
		return cfg, fmt.Errorf("--format must be json or text, not %q", cfg.format)
	case cfg.count < 0:
		return cfg, errors.New("--count must not be negative")
	case cfg.hwm < 0:
		return cfg, errors.New("--hwm must not be negative")
	case cfg.heartbeat < 0:
		return cfg, errors.New("--heartbeat must not be negative")
	case cfg.dedup < 0:
		return cfg, errors.New("--dedup must not be negative")
	case cfg.ackPass != "" && cfg.ack == "":
		return cfg, errors.New("--ack-password needs --ack")
	case cfg.ackDB < 0 || cfg.ackDB > zmqpub.MaxDB:
		return cfg, errors.New("--ack-db must be a database number")
	}
	if cfg.ack != "" {
		if _, _, err := net.SplitHostPort(cfg.ack); err != nil {
			return cfg, fmt.Errorf("--ack must be HOST:PORT: %v", err)
		}
	}
	return cfg, nil
}
