package testsupport

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestStartRedisStopsAndRemovesItsDir(t *testing.T) {
	var dir string
	t.Run("start", func(t *testing.T) {
		p := StartRedis(t, "--save", "")
		dir = p.Dir
		c, err := net.Dial("tcp", p.Addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.Write([]byte("CONFIG GET appendonly\r\n"))
		buf := make([]byte, 128)
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, _ := c.Read(buf)
		if !strings.Contains(string(buf[:n]), "no") {
			t.Fatalf("appendonly: %q", buf[:n])
		}
	})
	if dir == "" {
		t.Skip("redis-server did not run")
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("%s left behind (%v)", dir, err)
	}
}

func TestGivenDirIsKept(t *testing.T) {
	dir := t.TempDir()
	t.Run("start", func(t *testing.T) {
		p := StartRedis(t, "--dir", dir)
		if p.Dir != dir {
			t.Fatalf("Dir %q, want %q", p.Dir, dir)
		}
		p.Stop()
		if !p.Exited() {
			t.Fatal("still running after Stop")
		}
	})
	if _, err := os.Stat(dir); err != nil {
		t.Fatal(err)
	}
}

func TestNoWaitAndExitCode(t *testing.T) {
	script := filepath.Join(t.TempDir(), "s")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho \"$FOO $*\"\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := Start(t, Options{Name: "sh", Bin: script, Args: []string{"a"}, Env: []string{"FOO=bar"}, Port: 4242, NoWait: true})
	code, ok := p.Wait(10 * time.Second)
	if !ok || code != 3 {
		t.Fatalf("exit %d %v", code, ok)
	}
	want := "bar a --dir " + p.Dir + " --port 4242 --bind 127.0.0.1\n"
	if got := p.Output(); got != want {
		t.Fatalf("output %q, want %q", got, want)
	}
}

func TestReadyFailureIsReported(t *testing.T) {
	_, err := Launch(t, Options{Name: "false", Bin: "/bin/false"})
	if err == nil || !strings.Contains(err.Error(), "false did not start: exited") {
		t.Fatalf("err %v", err)
	}
}
