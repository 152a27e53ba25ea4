package server

import (
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/replication"
)

// debugHost is the server as DEBUG reaches it (engine.Debug): the
// subcommands that act on persistence, replication, the expiry timer and
// the cron. Called under the keyspace lock.
type debugHost struct{ s *Server }

// Debug implements engine.Server.
func (s *Server) Debug() engine.Debug { return debugHost{s} }

// Reload implements engine.Debug (DEBUG RELOAD). Not while a dataset
// loads (at start-up, or a replica's full synchronisation): that load
// goes on without the lock between its batches, and the two would mix.
func (h debugHost) Reload(opts engine.ReloadOptions) string {
	if h.loading() {
		return engine.ErrLoading
	}
	return h.s.persist.DebugReload(opts)
}

// LoadAOF implements engine.Debug (DEBUG LOADAOF), not while a dataset
// loads either.
func (h debugHost) LoadAOF() string {
	if h.loading() {
		return engine.ErrLoading
	}
	return h.s.persist.DebugLoadAOF()
}

func (h debugHost) loading() bool { return h.s.disp.Loading.Load() || h.s.link.Syncing() }

// SetActiveExpire implements engine.Debug: the expiry timer stops (or
// resumes) expiring keys.
func (h debugHost) SetActiveExpire(on bool) { h.s.ks.SetActiveExpiry(on) }

// ChangeReplID implements engine.Debug: changeReplicationId and
// clearReplicationId2, a new history that continues nothing.
func (h debugHost) ChangeReplID() {
	h.s.log.Warningf("Changing replication IDs after receiving DEBUG change-repl-id")
	st := h.s.repl.Stream()
	st.ID, st.ID2, st.SecondOff = replication.NewID(), replication.NoID, -1
}

// PauseCron implements engine.Debug: the cron's ticks do nothing while
// it is on (serverCron's pause_cron).
func (h debugHost) PauseCron(on bool) { h.s.cronPaused.Store(on) }
