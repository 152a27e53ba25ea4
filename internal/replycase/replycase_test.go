package replycase

import (
	"bufio"
	"encoding/json"
	"strings"
	"testing"
)

func TestReadAndJSON(t *testing.T) {
	raw := "*7\r\n+OK\r\n-ERR bad\r\n:-2\r\n$3\r\nfoo\r\n$-1\r\n*-1\r\n*2\r\n$2\r\n\xff\x00\r\n*0\r\n"
	r, err := Read(bufio.NewReader(strings.NewReader(raw)))
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"t":"array","v":[{"t":"simple","v":"OK"},{"t":"error","v":"ERR bad"},{"t":"int","v":-2},` +
		`{"t":"bulk","v":"foo"},{"t":"null"},{"t":"nullarray"},{"t":"array","v":[{"t":"bulk","b64":"/wA="},{"t":"array","v":[]}]}]}`
	if string(data) != want {
		t.Fatalf("JSON\n got %s\nwant %s", data, want)
	}
	var back Reply
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if again, _ := json.Marshal(back); string(again) != want {
		t.Fatalf("round trip: %s", again)
	}
	if back.Elems[6].Elems[0].Str != "\xff\x00" {
		t.Fatalf("binary bulk read back as %q", back.Elems[6].Elems[0].Str)
	}
}

func TestStepJSON(t *testing.T) {
	var steps []Step
	in := `[["HSET","h","f","v"],{"args":["HTTL","h","FIELDS","1","f"],"approx":2},{"sleep_ms":10}]`
	if err := json.Unmarshal([]byte(in), &steps); err != nil {
		t.Fatal(err)
	}
	if len(steps) != 3 || steps[1].Approx != 2 || steps[2].SleepMS != 10 || len(steps[0].Args) != 4 {
		t.Fatalf("%+v", steps)
	}
	out, _ := json.Marshal(steps)
	if string(out) != in {
		t.Fatalf("got %s", out)
	}
	for _, bad := range []string{`{"args":["X"],"aprox":2}`, `{}`, `{"args":["X"],"extract":"("}`} {
		var s Step
		if err := json.Unmarshal([]byte(bad), &s); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}

func arr(elems ...Reply) Reply { return Reply{Type: Array, Elems: elems} }
func in(n int64) Reply         { return Reply{Type: Integer, Int: n} }
func bulk(s string) Reply      { return Reply{Type: Bulk, Str: s} }

func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		name      string
		st        Step
		want, got Reply
		same      bool
	}{
		{"equal", Step{}, arr(in(1), bulk("a")), arr(in(1), bulk("a")), true},
		{"int differs", Step{}, in(1), in(2), false},
		{"type differs", Step{}, bulk("1"), in(1), false},
		{"null is not an empty bulk", Step{}, Reply{Type: Null}, bulk(""), false},
		{"approx within", Step{Approx: 2}, arr(in(100), in(-1)), arr(in(99), in(-1)), true},
		{"approx beyond", Step{Approx: 2}, arr(in(100)), arr(in(97)), false},
		{"approx keeps negatives exact", Step{Approx: 2}, arr(in(-1)), arr(in(0)), false},
		{"approx does not accept a negative for a ttl", Step{Approx: 2000}, arr(in(1000)), arr(in(-2)), false},
		{"unordered pairs", Step{Unordered: true}, arr(bulk("a"), bulk("1"), bulk("b"), bulk("2")), arr(bulk("b"), bulk("2"), bulk("a"), bulk("1")), true},
		{"unordered pairs keep pairs", Step{Unordered: true}, arr(bulk("a"), bulk("1"), bulk("b"), bulk("2")), arr(bulk("a"), bulk("2"), bulk("b"), bulk("1")), false},
		{"unordered elements", Step{UnorderedElems: true}, arr(bulk("a"), bulk("b")), arr(bulk("b"), bulk("a")), true},
		{"unordered elements count", Step{UnorderedElems: true}, arr(bulk("a"), bulk("a")), arr(bulk("a")), false},
		{"type only", Step{TypeOnly: true}, bulk("x"), bulk("y"), true},
		{"type only differs", Step{TypeOnly: true}, bulk("x"), Reply{Type: Error, Str: "ERR"}, false},
		{"extract", Step{Extract: `db0:[^\r\n]*`}, bulk("# K\r\ndb0:keys=1\r\n"), bulk("# K\r\ndb0:keys=1\r\nother\r\n"), true},
		{"extract differs", Step{Extract: `db0:[^\r\n]*`}, bulk("db0:keys=1\r\n"), bulk("db0:keys=2\r\n"), false},
	} {
		if got := Match(tc.st, tc.want, tc.got) == ""; got != tc.same {
			t.Errorf("%s: Match = %q", tc.name, Match(tc.st, tc.want, tc.got))
		}
	}
}

// The case files and their replies in testdata/hfe load and answer each
// other step by step.
func TestTestdataAligned(t *testing.T) {
	for _, f := range []struct{ cases, replies string }{
		{"../../testdata/hfe/cases.json", "../../testdata/hfe/replies-7.4.json"},
		{"../../testdata/hfe/cases-8.0.json", "../../testdata/hfe/expected-8.0.json"},
	} {
		cases, err := LoadCases(f.cases)
		if err != nil {
			t.Fatal(err)
		}
		rec, err := LoadRecording(f.replies)
		if err != nil {
			t.Fatal(err)
		}
		if err := Aligned(cases, rec); err != nil {
			t.Errorf("%s and %s: %v", f.cases, f.replies, err)
		}
		// Written by hand: every reply says where it comes from, and its
		// short name is one of the file's sources.
		if strings.Contains(f.replies, "expected") {
			for _, c := range rec.Results {
				for j, r := range c.Results {
					if r.Reply == nil {
						continue
					}
					name, _, _ := strings.Cut(r.Source, ":")
					name, _, _ = strings.Cut(name, " ")
					name = strings.TrimSuffix(name, ";")
					if _, ok := rec.Source[name]; !ok {
						t.Errorf("%s case %q step %d: source %q names no entry of \"source\"", f.replies, c.Name, j+1, r.Source)
					}
				}
			}
		}
	}
}
