// Command genmeta regenerates commands/metadata/redis-7.0.json from a
// running redis-server 7.0: it asks the server, over RESP3, for COMMAND
// INFO, COMMAND DOCS and ACL CAT, and stores for every command and
// subcommand its table fields, tips, key specifications and docs, keeping
// the exact reply types.
//
// Usage, from the repository root:
//
//	go run ./scripts/genmeta                       # server on 127.0.0.1:6379
//	go run ./scripts/genmeta -addr 127.0.0.1:7000
//	go run ./scripts/genmeta -start                # starts redis-server from PATH
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/zredis/zredis/commands/metadata"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:6379", "address of the redis-server to query")
	start := flag.Bool("start", false, "start redis-server (from PATH) on a free loopback port instead of using -addr")
	out := flag.String("out", "commands/metadata/redis-7.0.json", "file to write")
	anyVersion := flag.Bool("any-version", false, "accept a server whose version is not 7.0.x")
	flag.Parse()

	if *start {
		a, stop, err := startRedis()
		if err != nil {
			fatal(err)
		}
		defer stop()
		*addr = a
	}
	data, n, err := generate(*addr, *anyVersion)
	if err != nil {
		fatal(err)
	}
	if err := os.WriteFile(*out, data, 0o644); err != nil {
		fatal(err)
	}
	fmt.Printf("wrote %s: %d commands and subcommands, %d bytes\n", *out, n, len(data))
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "genmeta:", err)
	os.Exit(1)
}

// generate queries the server at addr and returns the encoded file and
// the number of entries.
func generate(addr string, anyVersion bool) ([]byte, int, error) {
	c, err := dial(addr)
	if err != nil {
		return nil, 0, err
	}
	defer c.nc.Close()

	hello, err := c.do("HELLO", "3")
	if err != nil {
		return nil, 0, fmt.Errorf("HELLO 3: %v", err)
	}
	version := hello.GetStr("version")
	if !strings.HasPrefix(version, "7.0.") && !anyVersion {
		return nil, 0, fmt.Errorf("server at %s is redis %q, not 7.0.x (use -any-version to force)", addr, version)
	}
	info, err := c.do("COMMAND", "INFO")
	if err != nil {
		return nil, 0, fmt.Errorf("COMMAND INFO: %v", err)
	}
	docs, err := c.do("COMMAND", "DOCS")
	if err != nil {
		return nil, 0, fmt.Errorf("COMMAND DOCS: %v", err)
	}
	cats, err := c.do("ACL", "CAT")
	if err != nil {
		return nil, 0, fmt.Errorf("ACL CAT: %v", err)
	}

	f := &metadata.File{Version: version, Commands: map[string]*metadata.Entry{}}
	for _, c := range cats.Elems {
		f.Categories = append(f.Categories, c.Str)
	}
	if err := addInfo(f, info.Elems); err != nil {
		return nil, 0, err
	}
	if err := addDocs(f, docs); err != nil {
		return nil, 0, err
	}
	for name, e := range f.Commands {
		if e.Docs.Kind == 0 {
			return nil, 0, fmt.Errorf("%s: in COMMAND INFO but not in COMMAND DOCS", name)
		}
		if e.KeySpecs.Kind == 0 {
			return nil, 0, fmt.Errorf("%s: in COMMAND DOCS but not in COMMAND INFO", name)
		}
	}
	data, err := encode(f)
	if err != nil {
		return nil, 0, err
	}
	// The file must read back as what was written.
	if _, err := metadata.Decode(data); err != nil {
		return nil, 0, fmt.Errorf("generated file does not decode: %v", err)
	}
	return data, len(f.Commands), nil
}

// addInfo records COMMAND INFO replies, recursing into subcommands.
func addInfo(f *metadata.File, infos []metadata.Node) error {
	for i := range infos {
		in := &infos[i]
		if in.Kind != metadata.Array || len(in.Elems) != 10 {
			return fmt.Errorf("COMMAND INFO: unexpected entry %+v", in)
		}
		el := in.Elems
		e := entry(f, el[0].Str)
		e.Arity = int(el[1].Int)
		e.Flags = strs(el[2].Elems)
		e.FirstKey, e.LastKey, e.KeyStep = int(el[3].Int), int(el[4].Int), int(el[5].Int)
		e.ACL = strs(el[6].Elems)
		e.Tips = strs(el[7].Elems)
		e.KeySpecs = el[8]
		if err := addInfo(f, el[9].Elems); err != nil {
			return err
		}
	}
	return nil
}

// addDocs records a COMMAND DOCS map, each command's docs without their
// "subcommands" pair, whose entries are recorded under their own names.
func addDocs(f *metadata.File, docs *metadata.Node) error {
	if docs.Kind != metadata.Map {
		return fmt.Errorf("COMMAND DOCS: reply is not a map")
	}
	for i := 0; i+1 < len(docs.Elems); i += 2 {
		name, d := docs.Elems[i].Str, docs.Elems[i+1]
		if d.Kind != metadata.Map {
			return fmt.Errorf("COMMAND DOCS %s: not a map", name)
		}
		kept := metadata.Node{Kind: metadata.Map}
		for j := 0; j+1 < len(d.Elems); j += 2 {
			if d.Elems[j].Str == "subcommands" {
				sub := d.Elems[j+1]
				if err := addDocs(f, &sub); err != nil {
					return err
				}
				continue
			}
			kept.Elems = append(kept.Elems, d.Elems[j], d.Elems[j+1])
		}
		entry(f, name).Docs = kept
	}
	return nil
}

func entry(f *metadata.File, name string) *metadata.Entry {
	e := f.Commands[name]
	if e == nil {
		e = &metadata.Entry{Name: name}
		f.Commands[name] = e
	}
	return e
}

func strs(ns []metadata.Node) []string {
	out := make([]string, 0, len(ns))
	for _, n := range ns {
		out = append(out, n.Str)
	}
	return out
}

// encode writes the file with one command per line, sorted by name, so
// that a regeneration diffs by command.
func encode(f *metadata.File) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("{\n")
	fmt.Fprintf(&b, "%q: %q,\n", "version", f.Version)
	cats, err := json.Marshal(f.Categories)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(&b, "%q: %s,\n", "acl_categories", cats)
	b.WriteString("\"commands\": {\n")
	names := make([]string, 0, len(f.Commands))
	for n := range f.Commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for i, n := range names {
		key, _ := json.Marshal(n)
		b.Write(key)
		b.WriteString(": ")
		// No HTML escaping: summaries hold '<', '>' and '&' and must stay readable.
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(f.Commands[n]); err != nil {
			return nil, fmt.Errorf("%s: %v", n, err)
		}
		b.Truncate(b.Len() - 1) // Encode's newline
		if i < len(names)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("}\n}\n")
	return b.Bytes(), nil
}

// ---- a minimal RESP3 client -------------------------------------------------

type conn struct {
	nc net.Conn
	rd *bufio.Reader
}

func dial(addr string) (*conn, error) {
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	return &conn{nc: nc, rd: bufio.NewReader(nc)}, nil
}

// do sends a command and parses the reply; an error reply is an error.
func (c *conn) do(args ...string) (*metadata.Node, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	c.nc.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := c.nc.Write(b.Bytes()); err != nil {
		return nil, err
	}
	n, err := readNode(c.rd)
	if err != nil {
		return nil, err
	}
	return &n, nil
}

func readNode(rd *bufio.Reader) (metadata.Node, error) {
	line, err := rd.ReadString('\n')
	if err != nil {
		return metadata.Node{}, err
	}
	if len(line) < 3 || !strings.HasSuffix(line, "\r\n") {
		return metadata.Node{}, fmt.Errorf("malformed reply line %q", line)
	}
	typ, body := line[0], line[1:len(line)-2]
	switch typ {
	case '+':
		return metadata.Node{Kind: metadata.Status, Str: body}, nil
	case '-':
		return metadata.Node{}, errors.New(body)
	case ':':
		i, err := strconv.ParseInt(body, 10, 64)
		return metadata.Node{Kind: metadata.Int, Int: i}, err
	case '_':
		return metadata.Node{Kind: metadata.Null}, nil
	case '$', '=':
		n, err := strconv.Atoi(body)
		if err != nil {
			return metadata.Node{}, err
		}
		if n < 0 {
			return metadata.Node{Kind: metadata.Null}, nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(rd, buf); err != nil {
			return metadata.Node{}, err
		}
		s := string(buf[:n])
		if typ == '=' && len(s) >= 4 {
			s = s[4:] // verbatim: drop the "txt:" format prefix
		}
		return metadata.Node{Kind: metadata.Bulk, Str: s}, nil
	case '*', '~', '%':
		n, err := strconv.Atoi(body)
		if err != nil {
			return metadata.Node{}, err
		}
		if n < 0 {
			return metadata.Node{Kind: metadata.Null}, nil
		}
		if typ == '%' {
			n *= 2
		}
		node := metadata.Node{Kind: metadata.Kind(typ), Elems: make([]metadata.Node, 0, n)}
		for i := 0; i < n; i++ {
			e, err := readNode(rd)
			if err != nil {
				return metadata.Node{}, err
			}
			node.Elems = append(node.Elems, e)
		}
		return node, nil
	}
	return metadata.Node{}, fmt.Errorf("unsupported reply type %q", typ)
}

// startRedis starts redis-server from PATH on a free loopback port, with
// no persistence, and returns its address and a function that stops it.
func startRedis() (string, func(), error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return "", nil, fmt.Errorf("redis-server is not installed: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	dir, err := os.MkdirTemp("", "genmeta")
	if err != nil {
		return "", nil, err
	}
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", dir)
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	stop := func() {
		cmd.Process.Kill()
		cmd.Wait()
		os.RemoveAll(dir)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		c, err := dial(addr)
		if err != nil {
			continue
		}
		_, err = c.do("PING")
		c.nc.Close()
		if err == nil {
			return addr, stop, nil
		}
	}
	stop()
	return "", nil, fmt.Errorf("redis-server at %s did not start (%s)", addr, filepath.Base(bin))
}
