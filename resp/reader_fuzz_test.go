package resp

import (
	"bytes"
	"io"
	"testing"

	"github.com/stretchr/testify/require"
)

type parseResult struct {
	cmds cmds
	err  string // "" for a clean end of input
}

func resultOf(t *testing.T, data []byte, chunk int, lim Limits, auth bool) parseResult {
	got, err := parseAll(t, data, chunk, lim, auth)
	if err == io.EOF {
		return parseResult{got, ""}
	}
	return parseResult{got, err.Error()}
}

// FuzzReadBatch feeds arbitrary input: the reader must not panic or hang, and
// must give the same result however the input is split across reads. The
// input also drives a round trip: arguments derived from it, encoded validly
// as multibulk and as inline requests, must parse back exactly.
func FuzzReadBatch(f *testing.F) {
	for _, tc := range readCases {
		if len(tc.in) < 4096 {
			f.Add([]byte(tc.in))
		}
	}
	f.Add([]byte("|SET|key|value"))
	f.Add([]byte("\x00a\x00\r\n\x00\"'\\"))

	f.Fuzz(func(t *testing.T, data []byte) {
		// Inputs near 64 KiB hit limits whose outcome depends, in Redis too,
		// on how the bytes were split across reads.
		split := len(data) < 60000
		for _, auth := range []bool{true, false} {
			whole := resultOf(t, data, 0, Limits{}, auth)
			if split {
				require.Equal(t, whole, resultOf(t, data, 3, Limits{}, auth))
				if len(data) < 2048 {
					require.Equal(t, whole, resultOf(t, data, 1, Limits{}, auth))
				}
			}
		}
		// Tight limits: only that nothing breaks.
		_, _ = parseAll(t, data, 5, Limits{MaxBulkLen: 8, MaxQueryBuf: 40}, true)

		if len(data) == 0 {
			return
		}
		args := bytes.Split(data[1:], data[:1])
		if len(args) > 64 {
			args = args[:64]
		}
		want := make([]string, len(args))
		strs := make([]string, len(args))
		for i, a := range args {
			want[i] = string(a)
			strs[i] = string(a)
		}
		enc := []byte(mb(strs...))
		enc = append(enc, inlineEncode(strs)...)
		wantRes := parseResult{cmds: cmds{want, want}}
		if len(enc) < 60000 {
			require.Equal(t, wantRes, resultOf(t, enc, 0, Limits{}, true))
			require.Equal(t, wantRes, resultOf(t, enc, 7, Limits{}, true))
		}
	})
}
