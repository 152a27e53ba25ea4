package tests

import (
	"strings"
	"testing"
)

// MODULE and RESTORE-ASKING compared with redis-server: with its default
// enable-module-command no, MODULE LIST is empty and LOAD, LOADEX and
// UNLOAD are refused; without cluster mode RESTORE-ASKING is RESTORE.
func TestModuleAndRestoreAskingDifferential(t *testing.T) {
	d := NewDiff(t)
	for _, c := range [][]string{
		{"MODULE", "LIST"},
		{"MODULE", "HELP"},
		{"MODULE", "LOAD", "/nonexistent/module.so"},
		{"MODULE", "LOADEX", "/nonexistent/module.so", "ARGS", "a"},
		{"MODULE", "UNLOAD", "nosuch"},
		{"MODULE", "BOGUS"},
		{"MODULE"},
		{"MODULE", "LIST", "x"},
		{"SET", "k", "v"},
		{"RESTORE-ASKING", "k2", "0", "\x00\x01v\x0a\x00\x18\xd5\x97\x0f\x9b\x8b\x2d\x4a"},
		{"RESTORE-ASKING", "k2", "0", "bad"},
		{"RESTORE-ASKING", "k", "0", "\x00\x01v\x0a\x00\x18\xd5\x97\x0f\x9b\x8b\x2d\x4a"},
		{"COMMAND", "INFO", "restore-asking"},
	} {
		d.Do(c...)
	}
}

// With enable-module-command yes, MODULE LOAD of a file that is no
// module fails as in Redis (zredis loads none), and UNLOAD finds none.
func TestModuleEnabled(t *testing.T) {
	RequireRedis(t)
	var got [2][]string
	for i, name := range []string{"redis", "zredis"} {
		c := Dial(t, StartServer(t, name, "--enable-module-command", "yes").Addr)
		for _, cmd := range [][]string{
			{"MODULE", "LOAD", "/nonexistent/module.so"},
			{"MODULE", "UNLOAD", "nosuch"},
			{"MODULE", "LIST"},
		} {
			got[i] = append(got[i], c.Do(cmd...))
		}
	}
	if strings.Join(got[0], "|") != strings.Join(got[1], "|") {
		t.Errorf("redis %q\nzredis %q", got[0], got[1])
	}
}
