package rdb

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zredis/zredis/keyspace"
)

// refKey is a key as the JSON beside a reference file describes it: what
// the server that wrote the file showed after loading it.
type refKey struct {
	Type        string           `json:"type"`
	Encoding    string           `json:"encoding"`
	PExpireTime int64            `json:"pexpiretime"`
	Value       json.RawMessage  `json:"value"`
	FieldTTLs   map[string]int64 `json:"field_pexpiretime"`
}

type refFile struct {
	RDBVersion int `json:"rdb_version"`
	Expired    []struct {
		DB     int      `json:"db"`
		Key    string   `json:"key"`
		Fields []string `json:"fields"`
	} `json:"expired_in_rdb"`
	DBs map[string]map[string]refKey `json:"dbs"`
}

// TestLoadReferenceFiles loads the files real servers wrote
// (testdata/rdb: Redis 7.2.6 and 7.4.1 with every type, 7.4.1 with hash
// field TTLs) and compares every key with what the server showed after
// loading it: type, deadline, strings, lists, sets, and hashes with
// every field's TTL and their encoding. Fields already past their TTL
// in the file, which the server hid, are loaded here with their TTL.
func TestLoadReferenceFiles(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/rdb/*.rdb")
	require.NotEmpty(t, files, "testdata/rdb holds the reference files")
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			raw, err := os.ReadFile(strings.TrimSuffix(path, ".rdb") + ".json")
			require.NoError(t, err)
			var ref refFile
			require.NoError(t, json.Unmarshal(raw, &ref))
			info, got := loadAll(t, path, DefaultLoadOptions())
			assert.Equal(t, ref.RDBVersion, info.Version)

			expired := map[int]map[string][]string{}
			for _, x := range ref.Expired {
				if expired[x.DB] == nil {
					expired[x.DB] = map[string][]string{}
				}
				expired[x.DB][x.Key] = x.Fields
			}
			for dbName, keys := range ref.DBs {
				db, _ := strconv.Atoi(dbName)
				extra := 0
				for k := range expired[db] {
					if _, ok := keys[k]; !ok {
						extra++ // all its fields expired: hidden there, here
					}
				}
				assert.Len(t, got[db], len(keys)+extra, "keys of db %d", db)
				for k, want := range keys {
					e := got[db][k]
					require.NotNil(t, e, "db %d key %q", db, k)
					checkRefKey(t, k, want, expired[db][k], e)
				}
			}
			for db, keys := range expired {
				for k, fields := range keys {
					h := got[db][k].Obj().(*keyspace.Hash)
					for _, f := range fields {
						assert.NotZero(t, h.FieldTTL([]byte(f)), "%s: field %q kept with its TTL", k, f)
					}
				}
			}
		})
	}
}

func checkRefKey(t *testing.T, k string, want refKey, expiredFields []string, e *keyspace.Entry) {
	t.Helper()
	require.Equal(t, want.Type, e.Type().String(), k)
	at := e.ExpireAt()
	if at == 0 {
		at = -1
	}
	assert.Equal(t, want.PExpireTime, at, "deadline of %q", k)
	switch want.Type {
	case "string":
		var s string
		require.NoError(t, json.Unmarshal(want.Value, &s))
		assert.Equal(t, s, string(e.Str()), k)
	case "list":
		var l []string
		require.NoError(t, json.Unmarshal(want.Value, &l))
		var gotL []string
		e.Obj().(*keyspace.List).Each(0, false, func(_ int, v []byte) bool {
			gotL = append(gotL, string(v))
			return true
		})
		assert.Equal(t, l, gotL, k)
	case "set":
		var s []string
		require.NoError(t, json.Unmarshal(want.Value, &s))
		var gotS []string
		e.Obj().(*keyspace.Set).Each(func(m keyspace.Member) bool {
			gotS = append(gotS, m.String())
			return true
		})
		assert.ElementsMatch(t, s, gotS, k)
	case "hash":
		var fields map[string]string
		require.NoError(t, json.Unmarshal(want.Value, &fields))
		h := e.Obj().(*keyspace.Hash)
		assert.Equal(t, len(fields)+len(expiredFields), h.Len(), "fields of %q", k)
		for f, v := range fields {
			gotV, ok := h.Get([]byte(f))
			assert.True(t, ok, "%s: field %q", k, f)
			assert.Equal(t, v, string(gotV), "%s: field %q", k, f)
			wantAt := want.FieldTTLs[f]
			if wantAt == -1 {
				wantAt = 0
			}
			assert.Equal(t, wantAt, h.FieldTTL([]byte(f)), "%s: TTL of %q", k, f)
		}
		enc := want.Encoding
		if enc == "listpackex" {
			enc = "listpack"
		}
		assert.Equal(t, enc, encodingOf(e), "encoding of %q", k)
	}
}
