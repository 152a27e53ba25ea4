package engine

import (
	"bytes"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// Copies handed out by the arena never change, whatever is copied after
// them (chunks roll over; large commands get their own buffer), and
// appending to one cannot write into the next.
func TestArgvArena(t *testing.T) {
	var a argvArena
	var kept [][][]byte
	var want [][]string
	for i := 0; i < 5000; i++ {
		argv := [][]byte{[]byte("SET"), []byte("key:" + strconv.Itoa(i)), bytes.Repeat([]byte{byte(i)}, i%700)}
		if i%997 == 0 {
			argv = append(argv, bytes.Repeat([]byte("x"), arenaMaxCopy+1))
		}
		if i%1499 == 0 {
			for j := 0; j < arenaHdrChunk; j++ {
				argv = append(argv, []byte("m"))
			}
		}
		w := make([]string, len(argv))
		for j, x := range argv {
			w[j] = string(x)
		}
		c := a.copy(argv)
		for _, x := range argv {
			clear(x) // the source may be reused at once
		}
		c[0] = append(c[0], "!!!"...)[:3]
		kept = append(kept, c)
		want = append(want, w)
	}
	for i, c := range kept {
		require.Len(t, c, len(want[i]))
		for j, x := range c {
			require.Equal(t, want[i][j], string(x), "command %d argument %d", i, j)
		}
	}
}
