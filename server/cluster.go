package server

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/zredis/zredis/cluster"
	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/engine"
)

// startCluster makes and starts the cluster node in cluster mode
// (clusterInit): nodes.conf is read, or a new node made and saved, and
// the bus listens on port + 10000 (or cluster-port). An unreadable
// nodes.conf, or a bus port that cannot be bound, stops the start, as
// Redis exits. Before the dataset loads.
func (s *Server) startCluster() error {
	cfg := s.cfg
	if !cfg.Bool("cluster-enabled") {
		return nil
	}
	port := int(cfg.Int("port"))
	// A TLS bus's node is known by its TLS port, the bus's default
	// port following it.
	clientPort := port
	if cfg.Bool("tls-cluster") {
		clientPort = int(cfg.Int("tls-port"))
	}
	busPort := int(cfg.Int("cluster-port"))
	if busPort == 0 {
		busPort = clientPort + 10000 // CLUSTER_PORT_INCR
	}
	if busPort > 65535 {
		return fmt.Errorf("Redis port number too high. Cluster communication port is 10,000 port numbers higher than your Redis port. Your Redis port number must be 55535 or less.")
	}
	file := cfg.String("cluster-config-file")
	if !filepath.IsAbs(file) {
		file = filepath.Join(cfg.String("dir"), file)
	}
	opt := cluster.Options{
		ConfigFile: file,
		BindIP:     busBindIP(cfg.Strings("bind")),
		Port:       port,
		BusPort:    busPort,
		TLSServer:  s.tlsConf.Load,
		TLSClient:  s.tlsClientConf.Load,
		// The offset of the stream a master writes, or a replica
		// applied and proxies: the same counter.
		Offset:      s.repl.Stream().SharedOffset,
		Exec:        s.ks.Exec,
		Replication: clusterRepl{s},
		OnSlotsLost: s.deleteLostSlots,
		OnPublish: func(channel, message []byte, shard bool) {
			s.ks.Exec(func() {
				if shard {
					s.pubsub.PublishShard(channel, message)
				} else {
					s.pubsub.Publish(channel, message)
				}
			})
		},
		Logf: func(level byte, format string, args ...any) {
			switch level {
			case '#':
				s.log.Warningf(format, args...)
			case '-':
				s.log.Noticef(format, args...)
			default:
				s.log.Verbosef(format, args...)
			}
		},
	}
	runtimeClusterOptions(cfg, &opt)
	st, err := cluster.New(opt)
	if err != nil {
		return err
	}
	if err := st.Start(); err != nil {
		return err
	}
	// The keys by slot (COUNTKEYSINSLOT, GETKEYSINSLOT, the keys of a
	// lost slot), kept from before the data set loads. A replica in
	// nodes.conf keeps its keys past their deadline, as any replica,
	// from the load on (Redis's iAmMaster reads the node's flags).
	s.ks.Exec(func() {
		s.ks.EnableSlotIndex()
		if st.IsReplica() {
			s.ks.SetReplica(true)
		}
	})
	s.cluster = st
	s.disp.Cluster = st
	s.clusterOpts()
	for _, name := range []string{"cluster-allow-reads-when-down", "cluster-allow-pubsubshard-when-down", "tls-cluster"} {
		cfg.OnChange(name, func(string) error { s.clusterOpts(); return nil })
	}
	for _, name := range []string{"cluster-node-timeout", "cluster-require-full-coverage", "cluster-announce-ip",
		"cluster-announce-port", "cluster-announce-bus-port", "cluster-announce-hostname", "cluster-preferred-endpoint-type",
		"cluster-replica-validity-factor", "cluster-replica-no-failover", "cluster-allow-replica-migration",
		"cluster-migration-barrier", "repl-ping-replica-period", "tls-cluster", "tls-port", "cluster-announce-tls-port"} {
		cfg.OnChange(name, func(string) error {
			st.SetOptions(func(o *cluster.Options) { runtimeClusterOptions(cfg, o) })
			return nil
		})
	}
	return nil
}

// runtimeClusterOptions sets the node's options that CONFIG SET may
// change.
func runtimeClusterOptions(cfg *config.Config, o *cluster.Options) {
	o.NodeTimeout = time.Duration(cfg.Int("cluster-node-timeout")) * time.Millisecond
	o.RequireFullCoverage = cfg.Bool("cluster-require-full-coverage")
	o.AnnounceIP = cfg.String("cluster-announce-ip")
	o.AnnouncePort = int(cfg.Int("cluster-announce-port"))
	o.AnnounceBusPort = int(cfg.Int("cluster-announce-bus-port"))
	o.AnnounceHostname = cfg.String("cluster-announce-hostname")
	o.Endpoint = endpointType(cfg.String("cluster-preferred-endpoint-type"))
	o.TLS = cfg.Bool("tls-cluster")
	o.TLSPort = int(cfg.Int("tls-port"))
	o.AnnounceTLSPort = int(cfg.Int("cluster-announce-tls-port"))
	o.ReplicaValidityFactor = int(cfg.Int("cluster-replica-validity-factor"))
	o.ReplicaNoFailover = cfg.Bool("cluster-replica-no-failover")
	o.AllowReplicaMigration = cfg.Bool("cluster-allow-replica-migration")
	o.MigrationBarrier = int(cfg.Int("cluster-migration-barrier"))
	o.ReplPingPeriod = time.Duration(cfg.Int("repl-ping-replica-period")) * time.Second
}

// clusterRepl is the server's replication as the cluster node drives it
// (cluster.Replication): the same paths as REPLICAOF host port and
// REPLICAOF NO ONE, so that a promoted replica turns its expiry stream
// on as after a Sentinel failover. Called with the keyspace lock held.
type clusterRepl struct{ s *Server }

// SetMaster implements cluster.Replication. Unlike REPLICAOF it logs
// no line of its own: clusterSetMaster's is the node's "Configuration
// change detected" or the command's, and the link's "Connecting to
// MASTER".
func (r clusterRepl) SetMaster(host string, port int) { r.s.link.SetMaster(host, port) }

// UnsetMaster implements cluster.Replication. A replica from nodes.conf
// whose link never started turns master all the same.
func (r clusterRepl) UnsetMaster() {
	if !r.s.link.IsReplica() {
		r.s.ks.SetReplica(false)
		return
	}
	r.s.link.UnsetMaster() // no line of its own, as replicationUnsetMaster
}

// MasterDataAge implements cluster.Replication.
func (r clusterRepl) MasterDataAge() int64 { return r.s.link.MasterDataAge(time.Now().UnixMilli()) }

// HoldWrites implements cluster.Replication.
func (r clusterRepl) HoldWrites(on bool) {
	r.s.pauseWritesFor(pauseClusterFailover, on)
	r.s.repl.SetClusterManualFailover(on)
}

// clusterOpts gives the dispatcher the directives its redirections read.
// Under the lock (or before serving).
func (s *Server) clusterOpts() {
	s.disp.ClusterOpts = engine.ClusterOptions{
		AllowReadsWhenDown:       s.cfg.Bool("cluster-allow-reads-when-down"),
		AllowPubsubShardWhenDown: s.cfg.Bool("cluster-allow-pubsubshard-when-down"),
		TLS:                      s.cfg.Bool("tls-cluster"),
	}
}

// endpointType reads cluster-preferred-endpoint-type.
func endpointType(v string) cluster.Endpoint {
	switch v {
	case "hostname":
		return cluster.EndpointHostname
	case "unknown-endpoint":
		return cluster.EndpointUnknown
	}
	return cluster.EndpointIP
}

// busBindIP is the address the bus listens on: the first of bind's, as
// the client port's ("" for every address).
func busBindIP(binds []string) string {
	if len(binds) == 0 {
		return ""
	}
	a := strings.TrimPrefix(binds[0], "-")
	if a == "*" || a == "::*" {
		return ""
	}
	return a
}

// stopCluster closes the bus and its links, and writes nodes.conf if it
// changed.
func (s *Server) stopCluster() {
	if s.cluster != nil {
		s.cluster.Stop()
	}
}

// deleteLostSlots deletes the keys of slots this node lost to another
// master (delKeysInSlot): each DEL is propagated to the AOF and the
// replicas. They are deleted, not expired: no expiry message is sent for
// them, their new owner sends it.
func (s *Server) deleteLostSlots(slots []int) {
	s.ks.Exec(func() {
		db := s.ks.DB(0)
		n := 0
		s.disp.PropagateUnit(func() {
			for _, slot := range slots {
				n += db.DeleteKeysInSlot(slot, func(key string) {
					s.disp.PropagateWrite(0, []byte("DEL"), []byte(key))
				})
			}
		})
		if n > 0 {
			s.log.Warningf("Deleted %d keys from %d slots this node no longer serves", n, len(slots))
		}
	})
}
