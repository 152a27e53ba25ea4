package commands

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zredis/zredis/engine"
)

// infoTitles lists the "# Title" lines of an INFO reply.
func infoTitles(reply string) []string {
	var out []string
	for _, l := range strings.Split(reply, "\r\n") {
		if strings.HasPrefix(l, "# ") {
			out = append(out, l[2:])
		}
	}
	return out
}

func TestInfoSectionSelection(t *testing.T) {
	def := []string{"Server", "Clients", "Memory", "Persistence", "Stats", "Replication", "CPU", "Modules", "Errorstats", "Cluster", "Keyspace"}
	all := []string{"Server", "Clients", "Memory", "Persistence", "Stats", "Replication", "CPU", "Modules", "Commandstats", "Errorstats", "Latencystats", "Cluster", "Keyspace"}
	tests := []struct {
		args []string
		want []string
	}{
		{nil, def},
		{[]string{"default"}, def},
		{[]string{"DEFAULT", "commandstats"}, append(append([]string{}, def[:8]...), "Commandstats", "Errorstats", "Cluster", "Keyspace")},
		{[]string{"expiry"}, []string{"Expiry"}},
		{[]string{"all", "expiry"}, append(append([]string{}, all...), "Expiry")},
		{[]string{"all"}, all},
		{[]string{"everything"}, all},
		{[]string{"keyspace", "SERVER", "server"}, []string{"Server", "Keyspace"}},
		{[]string{"server", "foo"}, []string{"Server"}},
		{[]string{"module_list"}, []string{"Modules"}},
		{[]string{"foo"}, nil},
	}
	e := newTestEnv(t)
	for _, tc := range tests {
		out := e.run(append([]string{"INFO"}, tc.args...)...)
		assert.Equal(t, tc.want, infoTitles(out), "INFO %q", tc.args)
	}
	assert.Equal(t, replyEmpty, e.run("INFO", "foo", "bar"))
	assert.Equal(t, replyBulk("# Cluster\r\ncluster_enabled:0\r\n\r\n# Keyspace\r\n"), e.run("INFO", "cluster", "keyspace"))
	assert.Equal(t, replyBulk("# Modules\r\n"), e.run("INFO", "modules"))
}

func TestInfoKeyspace(t *testing.T) {
	e := newTestEnv(t)
	e.run("SET", "a", "1")
	e.run("SET", "b", "1", "PX", "10000")
	e.run("SET", "c", "1", "PX", "20000")
	e.run("SELECT", "3")
	e.run("SET", "x", "1")
	e.run("SELECT", "0")
	assert.Equal(t, replyBulk("# Keyspace\r\ndb0:keys=3,expires=2,avg_ttl=15000,subexpiry=0\r\ndb3:keys=1,expires=0,avg_ttl=0,subexpiry=0\r\n"), e.run("INFO", "keyspace"))
}

func TestInfoStatsFields(t *testing.T) {
	e := newTestEnv(t)
	e.run("GET", "nokey")
	e.run("SET", "k", "v")
	e.run("GET", "k")
	e.run("INCR", "k")
	e.Srv.stats.NetIn.Store(123)
	out := e.run("INFO", "stats")
	for _, f := range []string{"total_connections_received", "total_commands_processed", "instantaneous_ops_per_sec",
		"total_net_input_bytes", "total_net_output_bytes", "rejected_connections", "expired_keys", "evicted_keys",
		"keyspace_hits", "keyspace_misses", "total_error_replies", "unexpected_error_replies", "pubsub_channels",
		"pubsub_patterns", "instantaneous_input_kbps", "instantaneous_output_kbps", "total_reads_processed"} {
		assert.Regexp(t, regexp.MustCompile(`\r\n`+f+`:[0-9.]+\r\n`), out, f)
	}
	assert.Contains(t, out, "\r\ntotal_commands_processed:4\r\n")
	assert.Contains(t, out, "\r\nkeyspace_hits:1\r\nkeyspace_misses:1\r\n")
	assert.Contains(t, out, "\r\ntotal_error_replies:1\r\n")
	assert.Contains(t, out, "\r\ntotal_net_input_bytes:123\r\n")
}

func TestInfoCommandAndErrorStats(t *testing.T) {
	e := newTestEnv(t)
	// Command statistics live in the process-wide table.
	e.run("CONFIG", "RESETSTAT")
	e.run("SET", "k", "v")
	e.run("GET", "k")
	e.run("GET")
	e.run("INCR", "k")
	e.run("CONFIG", "GET", "port")
	e.run("NOSUCH")
	out := e.run("INFO", "commandstats", "errorstats")
	assert.Regexp(t, `\r\ncmdstat_get:calls=1,usec=\d+,usec_per_call=\d+\.\d\d,rejected_calls=1,failed_calls=0\r\n`, out)
	assert.Regexp(t, `\r\ncmdstat_incr:calls=1,usec=\d+,usec_per_call=\d+\.\d\d,rejected_calls=0,failed_calls=1\r\n`, out)
	assert.Regexp(t, `\r\ncmdstat_config\|get:calls=1,`, out)
	assert.NotContains(t, out, "cmdstat_config:")
	assert.Contains(t, out, "# Errorstats\r\nerrorstat_ERR:count=3\r\n")

	require.Equal(t, replyOK, e.run("CONFIG", "RESETSTAT"))
	out = e.run("INFO", "commandstats", "errorstats")
	out = regexp.MustCompile(`usec=\d+,usec_per_call=\d+\.\d\d`).ReplaceAllString(out, "usec=0,usec_per_call=0.00")
	assert.Equal(t, "# Commandstats\r\ncmdstat_config|resetstat:calls=1,usec=0,usec_per_call=0.00,rejected_calls=0,failed_calls=0\r\n\r\n# Errorstats\r\n\r\n",
		out[strings.Index(out, "\r\n")+2:])
}

func TestInfoErrorCodesBounded(t *testing.T) {
	e := newTestEnv(t)
	c := e.Client.Ctx()
	c.Srv = e.Srv
	c.W = e.Client.W
	for i := 0; i < engine.MaxErrorCodes+20; i++ {
		c.Error("E" + strings.Repeat("x", i) + " boom")
	}
	assert.Len(t, e.Srv.stats.ErrorCounts, engine.MaxErrorCodes)
	assert.Equal(t, int64(engine.MaxErrorCodes+20), e.Srv.stats.TotalErrorReplies)
}

func TestInfoLatencystats(t *testing.T) {
	e := newTestEnv(t)
	recordCalls(e)
	e.Srv.stats.LatencyTracking = true
	e.run("PING")
	out := e.run("INFO", "latencystats")
	assert.Regexp(t, `^\$\d+\r\n# Latencystats\r\nlatency_percentiles_usec_ping:p50=\d+\.\d{3},p99=\d+\.\d{3},p99\.9=\d+\.\d{3}\r\n\r\n$`, out)
}
