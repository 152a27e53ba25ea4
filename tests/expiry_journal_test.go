package tests

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zredis/zredis/zmqpub"
)

// The expiry journal against kill -9: with the AOF on, a message is
// durable no later than its key's DEL, so a crash while keys expire
// loses none. Every key ends up expired exactly once in the data (before
// the crash with its DEL in the AOF, or after the restart), and each has
// its message: from the journal, or from its second expiry when its DEL
// had not reached the AOF. A key sent twice is sent with the same message
// id, so a listener drops the copy.
func TestExpiryJournalKill9(t *testing.T) {
	requirePythonZMQ(t)
	cases := []struct {
		policy    string
		listening bool // a listener keeps up; otherwise none until after the restart
		rounds    int
	}{
		{"always", false, 10},
		{"always", true, 10},
		{"everysec", false, 10},
		{"everysec", true, 10},
	}
	for _, tc := range cases {
		name := tc.policy + "/lagging"
		if tc.listening {
			name = tc.policy + "/keeping-up"
		}
		t.Run(name, func(t *testing.T) {
			total := journalTotals{}
			for round := range tc.rounds {
				r := journalKillRound(t, tc.policy, tc.listening)
				t.Logf("round %d: %d keys expired before the kill, %d replayed from the journal, %d sent twice (same id)",
					round, r.beforeKill, r.replayed, r.duplicates)
				total.add(r)
			}
			t.Logf("%d rounds: 0 lost, %d sent twice, %d replayed", tc.rounds, total.duplicates, total.replayed)
		})
	}
}

type journalTotals struct{ beforeKill, replayed, duplicates int }

func (a *journalTotals) add(b journalTotals) {
	a.beforeKill += b.beforeKill
	a.replayed += b.replayed
	a.duplicates += b.duplicates
}

// journalKillRound expires keys with the outbox and the spool in use,
// kills the server in the middle, restarts it on the same directory and
// checks what the listener received.
func journalKillRound(t *testing.T, policy string, listening bool) journalTotals {
	t.Helper()
	const n = 2000
	dir := t.TempDir()
	ep := zmqEndpoint(t)
	args := []string{"--dir", dir, "--save", "", "--appendonly", "yes", "--appendfsync", policy,
		"--expiry-zmq-endpoints", ep, "--expiry-zmq-message-id", "yes", "--expiry-zmq-hwm", "200"}
	z := StartZredis(t, args...)
	ctl := Dial(t, z.Addr)
	var l *pyListener
	if listening {
		l = startListener(t, []string{ep})
		waitInfo(t, ctl, "expiry_zmq_listeners", "1", 30*time.Second)
	}
	setExpiring(t, z.Addr, n, 600*time.Millisecond, 100*time.Millisecond)
	var expired int
	require.Eventually(t, func() bool {
		expired, _ = strconv.Atoi(infoExpiry(t, ctl)["expired_keys"])
		return expired >= n/2
	}, 30*time.Second, time.Millisecond)
	z.Kill()

	z2 := StartZredis(t, args...)
	ctl2 := Dial(t, z2.Addr)
	replayed := journalReplayed(z2.Output())
	if !listening {
		l = startListener(t, []string{ep})
	}
	// Everything expired, and every message handed to the listener.
	require.Eventually(t, func() bool {
		info := infoExpiry(t, ctl2)
		return ctl2.Do("DBSIZE") == ":0\r\n" && info["expiry_messages_queued"] == "0" &&
			info["expiry_messages_spooled"] == "0" && info["expiry_journal_pending"] == "0"
	}, 60*time.Second, 10*time.Millisecond)
	got := l.quiet(500 * time.Millisecond)
	l.kill()
	z2.Stop()

	ids := map[string][]string{}
	for _, d := range got {
		require.NotNil(t, d.ID, "every message carries its id")
		ids[string(d.Key)] = append(ids[string(d.Key)], string(d.ID))
	}
	var missing []string
	for i := range n {
		if ids["k:"+strconv.Itoa(i)] == nil {
			missing = append(missing, "k:"+strconv.Itoa(i))
		}
	}
	require.Empty(t, missing, "messages lost to kill -9 under appendfsync %s (%d keys expired before it)", policy, expired)
	dups := 0
	for key, list := range ids {
		for _, id := range list[1:] {
			require.Equal(t, list[0], id, "key %s sent twice with different ids", key)
			dups++
		}
	}
	return journalTotals{beforeKill: expired, replayed: replayed, duplicates: dups}
}

// journalReplayed reads the count of the start-up line about the journal.
func journalReplayed(log string) int {
	const marker = "Expiry journal holds "
	i := strings.Index(log, marker)
	if i < 0 {
		return 0
	}
	n, _ := strconv.Atoi(strings.Fields(log[i+len(marker):])[0])
	return n
}

// A journal whose last record a crash cut short, and one that is not a
// journal at all: the server starts, says in its log what was lost, and
// sends the rest.
func TestExpiryJournalBadFiles(t *testing.T) {
	requirePythonZMQ(t)
	dir := t.TempDir()
	ep := zmqEndpoint(t)
	args := []string{"--dir", dir, "--save", "", "--appendonly", "yes", "--appendfsync", "always",
		"--expiry-zmq-endpoints", ep}
	z := StartZredis(t, args...)
	ctl := Dial(t, z.Addr)
	const n = 50
	setExpiring(t, z.Addr, n, 50*time.Millisecond, 0)
	waitInfo(t, ctl, "expired_keys", strconv.Itoa(n), 30*time.Second)
	// An expired key's DEL, and its journal record, wait for the AOF's
	// next write (up to the flusher's tick). A write's reply under
	// appendfsync always comes after that write, which carries every
	// append before it: without this the kill can come first, the last
	// keys load again and expire twice.
	require.Equal(t, "+OK\r\n", ctl.Do("SET", "written", "1"))
	z.Kill()

	segments, err := filepath.Glob(filepath.Join(dir, "zredis-expiry.journal.*"))
	require.NoError(t, err)
	require.NotEmpty(t, segments)
	sort.Strings(segments)
	last := segments[len(segments)-1]
	data, err := os.ReadFile(last)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(last, data[:len(data)-5], 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "zredis-expiry.journal.99"), []byte("not a journal at all, 32 bytes or more"), 0o600))

	z2 := StartZredis(t, args...)
	require.Contains(t, z2.Output(), "torn last record")
	require.Contains(t, z2.Output(), "set aside as zredis-expiry.journal.99.bad")
	l := startListener(t, []string{ep})
	got := l.recv(t, n-1, 30*time.Second)
	seen := map[string]bool{}
	for _, d := range got {
		seen[string(d.Key)] = true
	}
	require.Len(t, seen, n-1, "every message but the torn one")
	require.Empty(t, l.quiet(300*time.Millisecond), "no message but those")
	require.Equal(t, zmqpub.TypeString, got[0].Type)
}
