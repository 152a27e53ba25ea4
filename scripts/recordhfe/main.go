// Command recordhfe records the replies of a running redis-server 7.4 to
// the cases of testdata/hfe/cases.json (hash field expiry: HEXPIRE,
// HPEXPIRE, HEXPIREAT, HPEXPIREAT, HTTL, HPTTL, HEXPIRETIME,
// HPEXPIRETIME, HPERSIST and their interplay with the other commands) and
// writes them to testdata/hfe/replies-7.4.json, which the end-to-end test
// tests/hfe_diff_test.go compares zredis with. The case format and the
// comparison rules are internal/replycase's.
//
// Before each case it opens a new RESP2 connection and sends FLUSHALL:
// the server must be one that may be emptied, started for this. Its
// active expiry must be on (the default).
//
// Usage, from the repository root:
//
//	go run ./scripts/recordhfe -addr 127.0.0.1:7000
//	go run ./scripts/recordhfe -addr 127.0.0.1:7000 -check   # compare, write nothing
//
// -check runs the cases and compares with the existing file under the
// cases' own tolerances (approx, unordered, ...): a way to see that a
// re-recording would change nothing but clock-dependent values.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/zredis/zredis/internal/replycase"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:6379", "address of the redis-server 7.4 to record")
	casesPath := flag.String("cases", "testdata/hfe/cases.json", "case file")
	out := flag.String("out", "testdata/hfe/replies-7.4.json", "file to write")
	anyVersion := flag.Bool("any-version", false, "accept a server whose version is not 7.4.x")
	check := flag.Bool("check", false, "compare with -out instead of writing it")
	flag.Parse()

	cases, err := replycase.LoadCases(*casesPath)
	if err != nil {
		fatal(err)
	}
	version, err := serverVersion(*addr)
	if err != nil {
		fatal(err)
	}
	if !strings.HasPrefix(version, "7.4.") && !*anyVersion {
		fatal(fmt.Errorf("server at %s is redis %q, not 7.4.x (use -any-version to force)", *addr, version))
	}
	rec := &replycase.Recording{
		Server: "redis " + version,
		Cases:  *casesPath,
		Note:   "recorded by go run ./scripts/recordhfe; every case on a new RESP2 connection after FLUSHALL",
	}
	steps := 0
	for _, c := range cases {
		res, err := replycase.Run(*addr, c)
		if err != nil {
			fatal(fmt.Errorf("case %q: %v", c.Name, err))
		}
		rec.Results = append(rec.Results, replycase.CaseResult{Name: c.Name, Results: res})
		steps += len(res)
	}
	if *check {
		old, err := replycase.LoadRecording(*out)
		if err != nil {
			fatal(err)
		}
		if n := compare(cases, old, rec); n > 0 {
			fatal(fmt.Errorf("%d replies differ from %s", n, *out))
		}
		fmt.Printf("%s: %d cases, %d steps, all as recorded (within the cases' tolerances)\n", *out, len(cases), steps)
		return
	}
	if err := os.WriteFile(*out, rec.Encode(), 0o644); err != nil {
		fatal(err)
	}
	fmt.Printf("wrote %s: %d cases, %d steps, from redis %s\n", *out, len(cases), steps, version)
}

// compare reports, and counts, the steps whose new reply does not match
// the old recording.
func compare(cases []replycase.Case, old, now *replycase.Recording) int {
	if err := replycase.Aligned(cases, old); err != nil {
		fmt.Printf("the recording does not answer the cases: %v\n", err)
		return 1
	}
	bad := 0
	for i, c := range cases {
		was, got := old.Results[i].Results, now.Results[i].Results
		for j, st := range c.Cmds {
			w, g := was[j], got[j]
			if w.Reply == nil || g.Reply == nil {
				continue
			}
			if why := replycase.Match(st, *w.Reply, *g.Reply); why != "" {
				fmt.Printf("case %q step %d %q: %s\n  recorded: %v\n  now:      %v\n", c.Name, j+1, st.Args, why, w.Reply, g.Reply)
				bad++
			}
		}
	}
	return bad
}

// serverVersion reads redis_version from INFO server.
func serverVersion(addr string) (string, error) {
	c, err := replycase.Dial(addr)
	if err != nil {
		return "", err
	}
	defer c.Close()
	r, err := c.Do("INFO", "server")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(r.Str, "\r\n") {
		if v, ok := strings.CutPrefix(line, "redis_version:"); ok {
			return v, nil
		}
	}
	return "", fmt.Errorf("INFO server of %s has no redis_version", addr)
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "recordhfe:", err)
	os.Exit(1)
}
