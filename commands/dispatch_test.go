package commands

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A handler that panics is a bug, not a crash: the reply it had begun is
// replaced with an error, the stack goes to OnPanic, the call is counted
// as failed, and the next command runs.
func TestPanicInHandlerIsRecovered(t *testing.T) {
	e := newTestEnv(t)
	var logged []string
	e.D.OnPanic = func(cmd string, r any, stack []byte) {
		logged = append(logged, cmd)
		assert.NotEmpty(t, stack)
	}
	boom := &Command{Name: "boom", Arity: 1, Run: func(c *Ctx) {
		c.W.Array(2) // a reply begun, then a bug
		var m map[string]int
		m["x"]++
	}}
	c := &e.Client.ctx
	*c = Ctx{Args: [][]byte{[]byte("boom")}, Client: e.Client, W: e.Client.W, KS: e.KS, Srv: e.Srv, Cmd: boom, DB: e.KS.DB(0)}
	e.KS.Lock()
	e.D.call(c, 0)
	e.KS.Unlock()
	assert.Equal(t, "-ERR internal error running 'boom' command, see the server log\r\n", string(e.Client.W.Bytes()))
	e.Client.W.Reset()
	assert.Equal(t, []string{"boom"}, logged)
	assert.Equal(t, int64(1), boom.stats.FailedCalls)
	assert.Equal(t, "+OK\r\n", e.run("SET", "k", "v"))
}
