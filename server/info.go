package server

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"time"

	"github.com/zredis/zredis/engine"
)

// Info implements engine.Server: the INFO sections the server owns
// (server, clients, memory, persistence, replication, cpu), with every
// field of Redis 7.0 in its order, so that tools reading Redis's INFO
// (redis-cli --stat, redis_exporter) read ours. Fields of features
// zredis lacks keep Redis's value for "not in use"; fields of our own
// come last in their section. Called under the keyspace lock.
func (s *Server) Info(section string, b []byte) []byte {
	switch section {
	case "server":
		return s.infoServer(b)
	case "clients":
		return s.infoClients(b)
	case "memory":
		return s.infoMemory(b)
	case "persistence":
		return s.infoPersistence(b)
	case "replication":
		return s.infoReplication(b)
	case "cpu":
		return infoCPU(b)
	case "expiry":
		return s.expiry.Info(b)
	}
	return b
}

func (s *Server) infoServer(b []byte) []byte {
	exe, _ := os.Executable()
	up := time.Since(s.start)
	hz := s.cfg.Int("hz")
	b = engine.InfoStr(b, "redis_version", RedisVersion)
	b = engine.InfoStr(b, "redis_git_sha1", "00000000")
	b = engine.InfoStr(b, "redis_git_dirty", "0")
	b = engine.InfoStr(b, "redis_build_id", "0")
	b = engine.InfoStr(b, "redis_mode", "standalone")
	b = engine.InfoStr(b, "os", osName())
	b = engine.InfoStr(b, "arch_bits", strconv.Itoa(strconv.IntSize))
	b = engine.InfoStr(b, "monotonic_clock", "POSIX clock_gettime")
	b = engine.InfoStr(b, "multiplexing_api", "epoll")
	b = engine.InfoStr(b, "atomicvar_api", "c11-builtin")
	b = engine.InfoStr(b, "gcc_version", "0.0.0")
	b = engine.InfoInt(b, "process_id", int64(os.Getpid()))
	supervised := "no"
	if s.Supervisor != nil {
		supervised = s.Supervisor.Supervised()
	}
	b = engine.InfoStr(b, "process_supervised", supervised)
	b = engine.InfoStr(b, "run_id", s.runID)
	b = engine.InfoInt(b, "tcp_port", s.cfg.Int("port"))
	b = engine.InfoInt(b, "server_time_usec", time.Now().UnixMicro())
	b = engine.InfoInt(b, "uptime_in_seconds", int64(up/time.Second))
	b = engine.InfoInt(b, "uptime_in_days", int64(up/(24*time.Hour)))
	b = engine.InfoInt(b, "hz", hz)
	b = engine.InfoInt(b, "configured_hz", hz)
	b = engine.InfoInt(b, "lru_clock", (s.ks.Clock().NowMs()/1000)&(1<<24-1))
	b = engine.InfoStr(b, "executable", exe)
	b = engine.InfoStr(b, "config_file", s.cfg.File())
	b = engine.InfoStr(b, "io_threads_active", "0")
	b = engine.InfoStr(b, "zredis_version", Version)
	b = engine.InfoStr(b, "go_version", runtime.Version())
	return b
}

func (s *Server) infoClients(b []byte) []byte {
	// A client CLIENT PAUSE holds is blocked to Redis too
	// (BLOCKED_POSTPONE); only those waiting with a timeout are in its
	// timeout table.
	var blocked, timed int64
	for _, c := range s.clients {
		if c.cl.Blocked || c.cl.Paused {
			blocked++
		}
		if c.cl.Blocked && c.cl.BlockedTimeout {
			timed++
		}
	}
	maxIn, maxOut := s.peaks.max()
	// Replicas are not counted, as in Redis (connected_slaves counts them).
	b = engine.InfoInt(b, "connected_clients", int64(len(s.clients)-s.repl.Count()))
	b = engine.InfoInt(b, "cluster_connections", 0)
	b = engine.InfoInt(b, "maxclients", s.cfg.Int("maxclients"))
	b = engine.InfoInt(b, "client_recent_max_input_buffer", maxIn)
	b = engine.InfoInt(b, "client_recent_max_output_buffer", maxOut)
	b = engine.InfoInt(b, "blocked_clients", blocked)
	b = engine.InfoInt(b, "tracking_clients", int64(s.disp.Tracking.Clients()))
	b = engine.InfoInt(b, "clients_in_timeout_table", timed)
	return b
}

// percent is a*100/b formatted as Redis's "%.2f%%".
func percent(a, b int64) string {
	if b == 0 {
		return "0.00%"
	}
	return fmt.Sprintf("%.2f%%", float64(a)*100/float64(b))
}

// ratio2 is a/b formatted as "%.2f".
func ratio2(a, b int64) string {
	if b == 0 {
		return "0.00"
	}
	return fmt.Sprintf("%.2f", float64(a)/float64(b))
}

func (s *Server) infoMemory(b []byte) []byte {
	m := engine.ReadMemory()
	st := &s.stats
	used := s.ks.UsedMemory()
	st.PeakMemory = max(st.PeakMemory, used)
	// used_memory_startup is fixed, as in Redis; the clients' memory
	// (part of the keyspace's overhead figure) is overhead, not startup.
	startup := st.StartupMemory
	overhead := s.ks.Overhead()
	for i := 0; i < s.ks.NumDBs(); i++ {
		main, expires := s.ks.DB(i).IndexOverhead()
		overhead += main + expires
	}
	dataset := used - overhead
	total := totalSystemMemory()
	maxmem := s.cfg.Int("maxmemory")
	b = engine.InfoInt(b, "used_memory", used)
	b = engine.InfoStr(b, "used_memory_human", humanBytes(used))
	b = engine.InfoInt(b, "used_memory_rss", m.RSS)
	b = engine.InfoStr(b, "used_memory_rss_human", humanBytes(m.RSS))
	b = engine.InfoInt(b, "used_memory_peak", st.PeakMemory)
	b = engine.InfoStr(b, "used_memory_peak_human", humanBytes(st.PeakMemory))
	b = engine.InfoStr(b, "used_memory_peak_perc", percent(used, st.PeakMemory))
	b = engine.InfoInt(b, "used_memory_overhead", overhead)
	b = engine.InfoInt(b, "used_memory_startup", startup)
	b = engine.InfoInt(b, "used_memory_dataset", dataset)
	b = engine.InfoStr(b, "used_memory_dataset_perc", percent(dataset, used-startup))
	b = engine.InfoInt(b, "allocator_allocated", m.Heap)
	b = engine.InfoInt(b, "allocator_active", m.Active)
	b = engine.InfoInt(b, "allocator_resident", m.Resident)
	b = engine.InfoInt(b, "total_system_memory", total)
	b = engine.InfoStr(b, "total_system_memory_human", humanBytes(total))
	sm := s.disp.ScriptMemory()
	b = engine.InfoInt(b, "used_memory_lua", sm.VMEval)
	b = engine.InfoInt(b, "used_memory_vm_eval", sm.VMEval)
	b = engine.InfoStr(b, "used_memory_lua_human", humanBytes(sm.VMEval))
	b = engine.InfoInt(b, "used_memory_scripts_eval", sm.ScriptsEval)
	b = engine.InfoInt(b, "number_of_cached_scripts", sm.Scripts)
	libs, funcs := s.disp.Functions.Counts()
	vmFunctions, functionsMem := s.disp.Functions.Memory()
	b = engine.InfoInt(b, "number_of_functions", int64(funcs))
	b = engine.InfoInt(b, "number_of_libraries", int64(libs))
	b = engine.InfoInt(b, "used_memory_vm_functions", vmFunctions)
	b = engine.InfoInt(b, "used_memory_vm_total", sm.VMEval+vmFunctions)
	b = engine.InfoStr(b, "used_memory_vm_total_human", humanBytes(sm.VMEval+vmFunctions))
	b = engine.InfoInt(b, "used_memory_functions", functionsMem)
	b = engine.InfoInt(b, "used_memory_scripts", sm.ScriptsEval+functionsMem)
	b = engine.InfoStr(b, "used_memory_scripts_human", humanBytes(sm.ScriptsEval+functionsMem))
	b = engine.InfoInt(b, "maxmemory", maxmem)
	b = engine.InfoStr(b, "maxmemory_human", humanBytes(maxmem))
	b = engine.InfoStr(b, "maxmemory_policy", s.cfg.String("maxmemory-policy"))
	b = engine.InfoStr(b, "allocator_frag_ratio", ratio2(m.Active, m.Heap))
	b = engine.InfoInt(b, "allocator_frag_bytes", m.Active-m.Heap)
	b = engine.InfoStr(b, "allocator_rss_ratio", ratio2(m.Resident, m.Active))
	b = engine.InfoInt(b, "allocator_rss_bytes", m.Resident-m.Active)
	b = engine.InfoStr(b, "rss_overhead_ratio", ratio2(m.RSS, m.Resident))
	b = engine.InfoInt(b, "rss_overhead_bytes", m.RSS-m.Resident)
	b = engine.InfoStr(b, "mem_fragmentation_ratio", ratio2(m.RSS, used))
	b = engine.InfoInt(b, "mem_fragmentation_bytes", m.RSS-used)
	b = engine.InfoInt(b, "mem_not_counted_for_evict", 0)
	b = engine.InfoInt(b, "mem_replication_backlog", 0)
	b = engine.InfoInt(b, "mem_total_replication_buffers", 0)
	b = engine.InfoInt(b, "mem_clients_slaves", 0)
	b = engine.InfoInt(b, "mem_clients_normal", s.clientsMemory())
	b = engine.InfoInt(b, "mem_cluster_links", 0)
	b = engine.InfoInt(b, "mem_aof_buffer", 0)
	b = engine.InfoStr(b, "mem_allocator", "go-"+runtime.Version())
	b = engine.InfoInt(b, "active_defrag_running", 0)
	// Nothing waits for a background thread: the collector frees; what
	// Redis's would have freed is counted (keyspace/lazyfree.go).
	b = engine.InfoInt(b, "lazyfree_pending_objects", 0)
	b = engine.InfoInt(b, "lazyfreed_objects", s.ks.Stats().LazyfreedObjects)
	b = engine.InfoInt(b, "gc_cycles", int64(m.NumGC))
	b = engine.InfoInt(b, "gc_pause_total_usec", int64(m.GCPauseNs/1000))
	return b
}

func (s *Server) infoPersistence(b []byte) []byte { return s.persist.Info(b) }

func (s *Server) infoReplication(b []byte) []byte {
	role := "master"
	if s.ks.IsReplica() {
		role = "slave"
	}
	b = engine.InfoStr(b, "role", role)
	if s.link.IsReplica() {
		b = s.link.AppendInfo(b)
	}
	return s.repl.Info(b)
}

// infoCPU reports the process's CPU time. Go runs commands on many
// threads: the main-thread fields report the whole process.
func infoCPU(b []byte) []byte {
	user, sys := cpuTimes()
	b = engine.InfoFloat(b, "used_cpu_sys", sys, 6)
	b = engine.InfoFloat(b, "used_cpu_user", user, 6)
	b = engine.InfoStr(b, "used_cpu_sys_children", "0.000000")
	b = engine.InfoStr(b, "used_cpu_user_children", "0.000000")
	b = engine.InfoFloat(b, "used_cpu_sys_main_thread", sys, 6)
	b = engine.InfoFloat(b, "used_cpu_user_main_thread", user, 6)
	return b
}

// humanBytes formats n as Redis's bytesToHuman does.
func humanBytes(n int64) string {
	d := float64(n)
	switch {
	case n < 1024:
		return strconv.FormatInt(n, 10) + "B"
	case n < 1024*1024:
		return fmt.Sprintf("%.2fK", d/1024)
	case n < 1024*1024*1024:
		return fmt.Sprintf("%.2fM", d/(1024*1024))
	case n < 1024*1024*1024*1024:
		return fmt.Sprintf("%.2fG", d/(1024*1024*1024))
	case n < 1024*1024*1024*1024*1024:
		return fmt.Sprintf("%.2fT", d/(1024*1024*1024*1024))
	}
	return fmt.Sprintf("%.2fP", d/(1024*1024*1024*1024*1024))
}
