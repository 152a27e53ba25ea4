package server

import (
	"errors"

	"github.com/zredis/zredis/config"
)

// The ACL's wiring: the directives that configure it, and the users of
// the configuration file or the ACL file, loaded before the server
// listens (ACLLoadUsersAtStartup).

// watchACL gives the ACL the directives it follows: requirepass (the
// default user's password), acl-pubsub-default and acllog-max-len.
func (s *Server) watchACL(cfg *config.Config) {
	acl := s.disp.ACL
	acl.SetDefaultPassword(cfg.String("requirepass"))
	acl.PubsubAllChannels = cfg.String("acl-pubsub-default") == "allchannels"
	acl.MaxLog = int(cfg.Int("acllog-max-len"))
	acl.Warn = s.Warning
	cfg.SetUserLines(func() []string {
		var lines []string
		for _, u := range acl.Users() {
			lines = append(lines, "user "+u.Name+" "+acl.Describe(u))
		}
		return lines
	})
	// requirepass is the default user's password: setting it replaces
	// the user's passwords, clearing it makes the user nopass (clients
	// that never authenticated may then run commands: authRequired reads
	// the user's flags on every command).
	cfg.OnChange("requirepass", func(v string) error {
		acl.SetDefaultPassword(v)
		return nil
	})
	cfg.OnChange("acl-pubsub-default", func(v string) error {
		acl.PubsubAllChannels = v == "allchannels"
		return nil
	})
	cfg.OnChange("acllog-max-len", func(string) error {
		// As in Redis, the log is trimmed when the next entry comes.
		acl.MaxLog = int(cfg.Int("acllog-max-len"))
		return nil
	})
}

// errACLStartup is what start-up reports after logging why the users
// could not be loaded.
var errACLStartup = errors.New("Critical error while loading ACLs. Exiting.")

// loadUsers creates the users of the configuration's "user" lines, or of
// its aclfile; both at once are refused, as Redis refuses them.
func (s *Server) loadUsers() error {
	acl := s.disp.ACL
	users := s.cfg.Users()
	file := s.cfg.String("aclfile")
	if file != "" && len(users) > 0 {
		return errors.New("Configuring Redis with users defined in redis.conf and at the same setting an ACL file path is invalid. This setup is very likely to lead to configuration errors and security holes, please define either an ACL file or declare users directly in your redis.conf, but not both.")
	}
	if err := acl.LoadConfigured(users); err != nil {
		s.log.Warningf("%v", err)
		return errACLStartup
	}
	for _, line := range users {
		if u := acl.User(line[0]); u != nil && u.Off() {
			s.log.Noticef("The user '%s' is disabled (there is no 'on' modifier in the user description). Make sure this is not a configuration error.", line[0])
		}
	}
	if file != "" {
		if errs := acl.LoadFile(nil, nil, file); errs != "" {
			return errors.New("Aborting Redis startup because of ACL errors: " + errs)
		}
	}
	return nil
}
