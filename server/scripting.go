package server

// LogLevel writes msg to the log at a Redis level (engine.LevelLogger):
// what a script logs with redis.log.
func (s *Server) LogLevel(level int, msg string) { s.log.Logf(level, "%s", msg) }
