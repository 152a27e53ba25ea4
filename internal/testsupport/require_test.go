package testsupport

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// recorder is a testing.TB that records how Require ended a test
// instead of ending it.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper()                           {}
func (r *recorder) Skip(args ...any)                  { r.skipped = strings.TrimSpace(sprint(args)) }
func (r *recorder) Fatalf(format string, args ...any) { r.failed = sprintf(format, args) }

func TestRequireSkipsOrFails(t *testing.T) {
	missing := errors.New("not found")
	t.Run("skip", func(t *testing.T) {
		t.Setenv(RequireAllEnv, "")
		r := &recorder{TB: t}
		Require(r, "a tool", missing)
		if want := "needs a tool: not found (make deps installs it)"; r.skipped != want || r.failed != "" {
			t.Fatalf("skipped %q failed %q, want a skip %q", r.skipped, r.failed, want)
		}
	})
	t.Run("zero is unset", func(t *testing.T) {
		t.Setenv(RequireAllEnv, "0")
		r := &recorder{TB: t}
		Require(r, "a tool", missing)
		if r.skipped == "" || r.failed != "" {
			t.Fatalf("skipped %q failed %q, want a skip", r.skipped, r.failed)
		}
	})
	t.Run("fail", func(t *testing.T) {
		t.Setenv(RequireAllEnv, "1")
		r := &recorder{TB: t}
		Require(r, "a tool", missing)
		want := "needs a tool: not found (make deps installs it); " + RequireAllEnv + "=1 asks for every test to run"
		if r.failed != want || r.skipped != "" {
			t.Fatalf("skipped %q failed %q, want a failure %q", r.skipped, r.failed, want)
		}
	})
	t.Run("present", func(t *testing.T) {
		t.Setenv(RequireAllEnv, "1")
		r := &recorder{TB: t}
		Require(r, "a tool", nil)
		if r.failed != "" || r.skipped != "" {
			t.Fatalf("skipped %q failed %q for a requirement that holds", r.skipped, r.failed)
		}
	})
}

func TestRequireToolMissing(t *testing.T) {
	t.Setenv(RequireAllEnv, "1")
	r := &recorder{TB: t}
	if p := RequireTool(r, "zredis-no-such-tool"); p != "" || !strings.HasPrefix(r.failed, "needs zredis-no-such-tool: ") {
		t.Fatalf("path %q, failed %q", p, r.failed)
	}
}

func sprint(args []any) string                 { return fmt.Sprintln(args...) }
func sprintf(format string, args []any) string { return fmt.Sprintf(format, args...) }
