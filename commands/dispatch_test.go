package commands

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/zredis/zredis/engine"
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
	boom := &engine.Command{Name: "boom", Arity: 1, Run: func(c *engine.Ctx) {
		c.W.Array(2) // a reply begun, then a bug
		var m map[string]int
		m["x"]++
	}}
	cmdWithTestCommand(t, boom)
	assert.Equal(t, "-ERR internal error running 'boom' command, see the server log\r\n", e.run("boom"))
	assert.Equal(t, []string{"boom"}, logged)
	assert.Equal(t, int64(1), e.D.CommandStats(boom).FailedCalls)
	assert.Equal(t, "+OK\r\n", e.run("SET", "k", "v"))
}
