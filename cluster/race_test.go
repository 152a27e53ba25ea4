package cluster

import (
	"net"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zredis/zredis/cluster/bus"
	"github.com/zredis/zredis/internal/testsupport"
)

// CONFIG SET cluster-node-timeout (SetOptions) while a link writes: the
// link's write deadline must not read the option off the State's lock
// (go test -race).
func TestLinkWriteDeadlineVsSetOptions(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "nodes.conf")
	busPort := testsupport.FreePort(t)
	st, err := New(Options{ConfigFile: conf, BindIP: "127.0.0.1", Port: 7000, BusPort: busPort, NodeTimeout: time.Second})
	require.NoError(t, err)
	require.NoError(t, st.Start())
	defer st.Stop()
	c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(busPort))
	require.NoError(t, err)
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))

	var stranger bus.Name
	copy(stranger[:], "0123456789abcdef0123456789abcdef01234567")
	ping := (&bus.Message{Header: bus.Header{Type: bus.Ping, Sender: stranger, Port: 7001, CPort: 17001, Flags: bus.FlagMaster}}).Append(nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 50; i++ {
			st.SetOptions(func(o *Options) { o.NodeTimeout = time.Duration(1000+i) * time.Millisecond })
		}
	}()
	var buf []byte
	for i := 0; i < 50; i++ {
		_, err := c.Write(ping)
		require.NoError(t, err)
		buf, err = readMessage(c, buf)
		require.NoError(t, err, "a PONG for each PING")
	}
	<-done
}
