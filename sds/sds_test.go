package sds

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSplitArgs(t *testing.T) {
	for _, tc := range []struct {
		line string
		want []string
		ok   bool
	}{
		{"", []string{}, true},
		{"  set a  b ", []string{"set", "a", "b"}, true},
		{`"a b" 'c d'`, []string{"a b", "c d"}, true},
		{`"\x41\n\r\t\b\a\\\"z"`, []string{"A\n\r\t\b\a\\\"z"}, true},
		{`"\xZZ"`, []string{"xZZ"}, true},
		{`'it\'s'`, []string{"it's"}, true},
		{`"unbalanced`, nil, false},
		{`"a"b`, nil, false},
		{`'a'b`, nil, false},
	} {
		got, ok := SplitArgs(tc.line)
		assert.Equal(t, tc.ok, ok, "%q", tc.line)
		if tc.ok {
			assert.Equal(t, tc.want, got, "%q", tc.line)
		}
	}
}

// Repr's output reads back through SplitArgs as the same bytes.
func TestReprRoundTrip(t *testing.T) {
	for _, s := range []string{"", "plain", "a b", "q\"uote", "back\\slash", "\x00\xff\n\r\t\a\b", "é"} {
		got, ok := SplitArgs(Repr(s))
		assert.True(t, ok, "%q", s)
		assert.Equal(t, []string{s}, got, "%q", s)
	}
	assert.Equal(t, `"a\x00\n\"\\"`, string(AppendRepr(nil, []byte("a\x00\n\"\\"))))
}
