package redisconv

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParseInt(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"1", 1, true}, {"-1", -1, true}, {"123456", 123456, true},
		{"9223372036854775807", 9223372036854775807, true},
		{"-9223372036854775808", -9223372036854775808, true},
		{"9223372036854775808", 0, false}, {"-9223372036854775809", 0, false},
		{"18446744073709551616", 0, false}, {"99999999999999999999", 0, false},
		{"", 0, false}, {"-", 0, false}, {"-0", 0, false}, {"+1", 0, false}, {"01", 0, false},
		{" 1", 0, false}, {"1 ", 0, false}, {"1a", 0, false}, {"1.0", 0, false},
		{"000000000000000000001", 0, false},
	} {
		got, ok := ParseInt(tc.in)
		assert.Equal(t, tc.ok, ok, "%q", tc.in)
		if tc.ok {
			assert.Equal(t, tc.want, got, "%q", tc.in)
		}
		gotB, okB := ParseInt([]byte(tc.in))
		assert.Equal(t, ok, okB, "%q as bytes", tc.in)
		assert.Equal(t, got, gotB, "%q as bytes", tc.in)
	}
}

// Every int64 reads back from its decimal form, and only that form.
func FuzzParseInt(f *testing.F) {
	f.Add("12")
	f.Fuzz(func(t *testing.T, s string) {
		v, ok := ParseInt(s)
		n, err := strconv.ParseInt(s, 10, 64)
		canonical := err == nil && strconv.FormatInt(n, 10) == s
		if ok != canonical || ok && v != n {
			t.Fatalf("%q: got %d %v, strconv %d %v", s, v, ok, n, err)
		}
	})
}
