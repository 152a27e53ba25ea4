package engine

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/zredis/zredis/config"
)

// LoadFile replaces the users with those of an ACL file, all or nothing
// (ACLLoadFromFile): every line is blank or "user <name> <rule> ...";
// comments are errors, since ACL SAVE would lose them. It returns "" once
// loaded, else every problem found, in one line, as Redis reports them,
// and the users are unchanged. name is the file as configured, which the
// messages show.
func (a *ACL) LoadFile(srv Server, current *Client, name string) string {
	data, err := os.ReadFile(name)
	if err != nil {
		return fmt.Sprintf("Error loading ACLs, opening file '%s': %s", name, config.Strerror(err))
	}
	var errs strings.Builder
	var users []*User
	seen := map[string]bool{}
	for i, line := range strings.Split(string(data), "\n") {
		linenum := i + 1
		line = strings.Trim(line, " \t\r\n")
		if line == "" {
			continue
		}
		argv := strings.Split(line, " ")
		if argv[0] != "user" || len(argv) < 2 {
			fmt.Fprintf(&errs, "%s:%d should start with user keyword followed by the username. ", name, linenum)
			continue
		}
		if hasSpaces(argv[1]) {
			fmt.Fprintf(&errs, "'%s:%d: username '%s' contains invalid characters. ", name, linenum, argv[1])
			continue
		}
		if seen[argv[1]] {
			fmt.Fprintf(&errs, "WARNING: Duplicate user '%s' found on line %d. ", argv[1], linenum)
			continue
		}
		seen[argv[1]] = true
		u := a.newUser(argv[1])
		merged, _, ok := MergeSelectorArgs(argv[2:])
		if !ok {
			fmt.Fprintf(&errs, "%s:%d: Unmatched parenthesis in selector definition.", name, linenum)
		}
		// Every unknown command or category of the line is named (such
		// a rule holds no secret); of the other errors, only the first.
		reported := false
		for _, r := range merged {
			r = strings.Trim(r, "\t\r\n")
			if err := a.setUser(u, r); err == errRuleUnknown {
				fmt.Fprintf(&errs, "%s:%d: Error in applying operation '%s': %s. ", name, linenum, r, err)
			} else if err != nil && !reported {
				fmt.Fprintf(&errs, "%s:%d: %s. ", name, linenum, err)
				reported = true
			}
		}
		users = append(users, u)
	}
	if errs.Len() > 0 {
		return errs.String() + "WARNING: ACL errors detected, no change to the previously active ACL rules was performed"
	}
	a.LoadUsers(srv, current, users)
	return ""
}

// SaveFile writes every user to the ACL file, replacing it atomically
// (ACLSaveToFile); failures are described for the log.
func (a *ACL) SaveFile(name string) error {
	var b strings.Builder
	for _, u := range a.Users() {
		b.WriteString("user " + u.Name + " " + a.Describe(u) + "\n")
	}
	tmp := fmt.Sprintf("%s.tmp-%d-%d", name, os.Getpid(), time.Now().UnixMilli())
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("Opening temp ACL file for ACL SAVE: %s", config.Strerror(err))
	}
	if _, err := f.WriteString(b.String()); err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("Writing ACL file for ACL SAVE: %s", config.Strerror(err))
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("Writing ACL file for ACL SAVE: %s", config.Strerror(err))
	}
	if err := os.Rename(tmp, name); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("Renaming ACL file for ACL SAVE: %s", config.Strerror(err))
	}
	return nil
}

// LoadConfigured creates the users of the configuration file's "user"
// lines at start-up (ACLLoadConfiguredUsers): a line for "default"
// resets that user first. It returns the message Redis logs for a rule
// refused.
func (a *ACL) LoadConfigured(users [][]string) error {
	for _, line := range users {
		name := line[0]
		if hasSpaces(name) {
			return fmt.Errorf("Spaces not allowed in ACL usernames")
		}
		u := a.users[name]
		if u == nil {
			u = a.newUser(name)
			a.users[name] = u
		} else {
			a.setUser(u, "reset")
		}
		merged, _, _ := MergeSelectorArgs(line[1:])
		for _, r := range merged {
			if err := a.setUser(u, r); err != nil {
				return fmt.Errorf("Error loading ACL rule '%s' for the user named '%s': %s", r, name, err)
			}
		}
	}
	return nil
}

// Off reports whether u is disabled: no one can authenticate as it.
func (u *User) Off() bool { return u.flags&userOff != 0 }
