package tests

import (
	"strings"
	"testing"
)

// LOLWUT: the version line byte for byte; the art of VERSION 5 and 6 is
// random, so its shape (lines, their widths, the caption) is compared.
func TestLolwutDifferential(t *testing.T) {
	d := NewDiff(t)
	d.Do("LOLWUT")
	d.Do("LOLWUT", "VERSION", "x")
	d.Do("LOLWUT", "VERSION", "7")
	d.Do("LOLWUT", "VERSION", "5", "x")
	d.Do("LOLWUT", "VERSION", "6", "10", "x")
	// A line's width: its characters (VERSION 5: Braille), or its cells
	// (VERSION 6: each a colour escape of its own length).
	shape := func(raw string) []int {
		var out []int
		for _, l := range strings.Split(raw, "\n") {
			if n := strings.Count(l, "\033[0m"); n > 0 {
				out = append(out, n)
			} else {
				out = append(out, len(l))
			}
		}
		return out
	}
	for _, args := range [][]string{
		{"LOLWUT", "VERSION", "5"}, {"LOLWUT", "VERSION", "5", "1", "1", "1"}, {"LOLWUT", "VERSION", "5", "40", "3", "4"},
		{"LOLWUT", "VERSION", "6"}, {"LOLWUT", "VERSION", "6", "3", "2"}, {"LOLWUT", "VERSION", "6", "0", "2000"},
	} {
		z, r := d.Z.Do(args...), d.R.Do(args...)
		zs, rs := shape(z), shape(r)
		if len(zs) != len(rs) || strings.Join(strings.Split(z, "\n")[len(zs)-3:], "\n") != strings.Join(strings.Split(r, "\n")[len(rs)-3:], "\n") {
			t.Errorf("%q: shapes differ:\nzredis %v\nredis  %v", args, zs, rs)
			continue
		}
		for i := range zs {
			if zs[i] != rs[i] && i > 0 && i < len(zs)-3 {
				t.Errorf("%q: line %d is %d bytes, redis-server's %d", args, i, zs[i], rs[i])
				break
			}
		}
	}
}
