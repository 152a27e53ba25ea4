package tests

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A big hash whose last write began a growth keeps both slot arrays
// while it is only read with activerehashing off; switched on, the cron
// finishes the growth within a few runs, and MEMORY USAGE drops by the
// old array. The fields are written one command each: the growth from
// 1,024 home slots, which goes a step at a time, begins at the 769th.
func TestActiveRehashingFinishesMemberTables(t *testing.T) {
	p := StartZredis(t, "--activerehashing", "no")
	c := Dial(t, p.Addr)
	const fields = 769
	for i := 0; i < fields; i++ {
		f := fmt.Sprintf("f%04d", i)
		require.Equal(t, ":1\r\n", c.Do("HSET", "h", f, "v"+f))
	}
	begun := keyUsage(t, c, "h")
	time.Sleep(300 * time.Millisecond) // three runs of the cron
	require.Equal(t, begun, keyUsage(t, c, "h"), "a resize moved without writes or activerehashing")

	require.Equal(t, "+OK\r\n", c.Do("CONFIG", "SET", "activerehashing", "yes"))
	require.Eventually(t, func() bool { return keyUsage(t, c, "h") < begun }, 5*time.Second, 50*time.Millisecond)
	require.Equal(t, fmt.Sprintf(":%d\r\n", fields), c.Do("HLEN", "h"))
	for i := 0; i < fields; i += 97 {
		f := fmt.Sprintf("f%04d", i)
		require.Equal(t, fmt.Sprintf("$6\r\nv%s\r\n", f), c.Do("HGET", "h", f))
	}
}
