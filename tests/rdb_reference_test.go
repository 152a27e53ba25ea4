package tests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/zredis/zredis/internal/rdbref"
)

// RDB files written by real redis-servers (testdata/rdb/*.rdb, made by
// scripts/recordrdb: Redis 7.2.6 and 7.4.1 with every type and encoding,
// and 7.4.1 with hash field TTLs, among them fields already expired in
// the file) loaded into zredis: every key of every database must read as
// the JSON next to the file says the reference server showed after
// loading it — type, value, PEXPIRETIME and, for hashes, HPEXPIRETIME of
// every field.

func TestRDBReference(t *testing.T) {
	files, err := filepath.Glob("../testdata/rdb/*.rdb")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no RDB file in ../testdata/rdb")
	}
	for _, rdb := range files {
		name := filepath.Base(rdb)
		t.Run(strings.TrimSuffix(name, ".rdb"), func(t *testing.T) {
			want, err := rdbref.Load(strings.TrimSuffix(rdb, ".rdb") + ".json")
			if err != nil {
				t.Fatal(err)
			}
			if want.RDB != name {
				t.Fatalf("%s describes %s", strings.TrimSuffix(name, ".rdb")+".json", want.RDB)
			}
			data, err := os.ReadFile(rdb)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
			z := StartZredis(t, "--dir", dir, "--dbfilename", name, "--save", "")
			// What was expired in the file may stay until expiry reaches
			// it: compare until the datasets agree, for a few seconds.
			var diffs []string
			for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(200 * time.Millisecond) {
				got, err := rdbref.Describe(z.Addr, rdbref.Options{})
				if err != nil {
					t.Fatalf("reading zredis's dataset: %v", err)
				}
				diffs = compareRDBReference(want, got)
				if len(diffs) == 0 || time.Now().After(deadline) {
					break
				}
			}
			for _, d := range diffs {
				t.Error(d)
			}
		})
	}
}

// compareRDBReference lists how got differs from the description, key by key.
func compareRDBReference(want *rdbref.File, got map[string]map[string]*rdbref.Key) []string {
	var out []string
	expired := map[string]rdbref.Expired{}
	for _, e := range want.ExpiredInRDB {
		expired[fmt.Sprintf("%d/%s", e.DB, e.Key)] = e
	}
	dbs := map[string]bool{}
	for db := range want.DBs {
		dbs[db] = true
	}
	for db := range got {
		dbs[db] = true
	}
	for _, db := range sortedStrings(dbs) {
		w, g := want.DBs[db], got[db]
		keys := map[string]bool{}
		for k := range w {
			keys[k] = true
		}
		for k := range g {
			keys[k] = true
		}
		for _, k := range sortedStrings(keys) {
			wk, gk := w[k], g[k]
			e, wasExpired := expired[db+"/"+k]
			switch {
			case gk == nil:
				out = append(out, fmt.Sprintf("db %s key %q: missing (want %s)", db, k, wk.Type))
			case wk == nil && wasExpired && e.KeyGone:
				out = append(out, fmt.Sprintf("db %s key %q: every field of this hash was expired in the RDB file, yet the key is there: %s", db, k, clip(rdbref.Canonical(gk))))
			case wk == nil:
				out = append(out, fmt.Sprintf("db %s key %q: not in the file, yet there: %s", db, k, clip(rdbref.Canonical(gk))))
			default:
				normalScores(wk)
				for _, d := range jsonDiff(rdbref.Canonical(wk), rdbref.Canonical(gk)) {
					out = append(out, fmt.Sprintf("db %s key %q: %s", db, k, d))
				}
				if wasExpired {
					for _, f := range e.Fields {
						if _, there := gk.FieldPExpireTime[f]; there {
							out = append(out, fmt.Sprintf("db %s key %q: field %q was expired in the RDB file, yet it is there", db, k, f))
						}
					}
				}
			}
		}
	}
	return out
}

// jsonDiff lists the paths where two JSON documents differ (at most 10).
func jsonDiff(want, got string) []string {
	var w, g any
	dec := json.NewDecoder(strings.NewReader(want))
	dec.UseNumber()
	dec.Decode(&w)
	dec = json.NewDecoder(strings.NewReader(got))
	dec.UseNumber()
	dec.Decode(&g)
	var out []string
	var walk func(path string, w, g any)
	walk = func(path string, w, g any) {
		if len(out) >= 10 {
			return
		}
		switch wv := w.(type) {
		case map[string]any:
			gv, ok := g.(map[string]any)
			if !ok {
				break
			}
			keys := map[string]bool{}
			for k := range wv {
				keys[k] = true
			}
			for k := range gv {
				keys[k] = true
			}
			for _, k := range sortedStrings(keys) {
				_, inW := wv[k]
				_, inG := gv[k]
				switch {
				case !inW:
					out = append(out, fmt.Sprintf("%s.%s: not expected, got %s", path, k, clip(enc(gv[k]))))
				case !inG:
					out = append(out, fmt.Sprintf("%s.%s: missing, want %s", path, k, clip(enc(wv[k]))))
				default:
					walk(path+"."+k, wv[k], gv[k])
				}
			}
			return
		case []any:
			gv, ok := g.([]any)
			if !ok {
				break
			}
			if len(wv) != len(gv) {
				out = append(out, fmt.Sprintf("%s: %d elements, want %d", path, len(gv), len(wv)))
			}
			for i := 0; i < len(wv) && i < len(gv); i++ {
				walk(fmt.Sprintf("%s[%d]", path, i), wv[i], gv[i])
			}
			return
		}
		if enc(w) != enc(g) {
			out = append(out, fmt.Sprintf("%s: got %s, want %s", path, clip(enc(g)), clip(enc(w))))
		}
	}
	walk("", w, g)
	return out
}

func enc(v any) string {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	e.Encode(v)
	return strings.TrimSpace(b.String())
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + fmt.Sprintf("...(%d bytes)", len(s))
	}
	return s
}

func sortedStrings(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// normalScores rewrites a recorded zset's scores as rdbref.NormalScore
// does for the live side.
func normalScores(k *rdbref.Key) {
	pairs, ok := k.Value.([]any)
	if k.Type != "zset" || !ok {
		return
	}
	for _, p := range pairs {
		if pair, ok := p.([]any); ok && len(pair) == 2 {
			if s, ok := pair[1].(string); ok {
				pair[1] = rdbref.NormalScore(s)
			}
		}
	}
}
