package sds

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMatch(t *testing.T) {
	cases := []struct {
		pat, s string
		want   bool
	}{
		{"*", "", false}, // stringmatchlen: only KEYS/SCAN special-case "*"
		{"*", "abc", true},
		{"", "", true},
		{"", "a", false},
		{"a", "", false},
		{"a*", "a", true},
		{"a**", "a", true},
		{"*a", "ba", true},
		{"*a", "ab", false},
		{"?", "a", true},
		{"?", "", false},
		{"??", "a", false},
		{"h?llo", "hello", true},
		{"h*llo", "heeeello", true},
		{"h[ae]llo", "hallo", true},
		{"h[ae]llo", "hillo", false},
		{"h[^e]llo", "hallo", true},
		{"h[^e]llo", "hello", false},
		{"h[a-b]llo", "hbllo", true},
		{"h[b-a]llo", "hbllo", true}, // reversed range
		{"h[a-b]llo", "hcllo", false},
		{"[\\]]", "]", true},
		{"[\\-]", "-", true},
		{"[a-]", "-", false},
		{"\\*", "*", true},
		{"\\*", "a", false},
		{"\\", "\\", true},
		{"a\\", "a\\", true},
		{"[abc", "a", true},  // unterminated class
		{"[abc", "d", false}, // unterminated class
		{"[", "a", false},
		{"[^", "a", true},
		{"[]", "a", false},
		{"[]a]", "a", false}, // ']' closes at once, then "a]" must follow
		{"*[a", "xa", true},
		{"a*b*c", "aXbYc", true},
		{"a*b*c", "aXbY", false},
		{"*x*", "abc", false},
		{"A", "a", false},
		{"[\x80-\xff]", "a", false}, // signed chars: 0x80..0xff sort below ASCII
		{"[\x80-\xff]", "\x90", true},
		{"[a-\x80]", "a", true}, // range -128..97 after the swap
		{"[a-\x80]", "\x90", true},
		{"[a-\x80]", "b", false},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, Match([]byte(c.pat), []byte(c.s), false), "%q ~ %q", c.pat, c.s)
		assert.Equal(t, c.want, MatchString([]byte(c.pat), c.s, false), "%q ~ %q", c.pat, c.s)
	}
	assert.True(t, Match([]byte("HeLLo"), []byte("hello"), true))
	assert.True(t, Match([]byte("h[A-Z]llo"), []byte("hello"), true))
	assert.True(t, Match([]byte("h[E]llo"), []byte("hello"), true))

	// Nesting: 1000 '*' levels are fine, more are refused.
	s := strings.Repeat("a", 1001)
	assert.True(t, MatchString([]byte(strings.Repeat("*a", 1000)), s, false))
	assert.False(t, MatchString([]byte(strings.Repeat("*a", 1001)), s, false))

	// Pathological patterns stay fast.
	assert.False(t, MatchString([]byte(strings.Repeat("a*", 30)+"b"), strings.Repeat("a", 100), false))
}

// The cases CONFIG GET relies on (nocase: directive names).
func TestMatchConfigNames(t *testing.T) {
	cases := []struct {
		pat, s string
		want   bool
	}{
		{"*", "maxmemory", true},
		{"max*", "maxmemory", true},
		{"MAX*ory", "maxmemory", true},
		{"maxmemor?", "maxmemory", true},
		{"maxmemor[x-z]", "maxmemory", true},
		{"maxmemor[z-x]", "maxmemory", true},
		{"maxmemor[^y]", "maxmemory", false},
		{"maxmemor[abc]", "maxmemory", false},
		{"maxmemor[Y]", "maxmemory", true},
		{`max\*`, "max*", true},
		{`max\*`, "maxmemory", false},
		{"*-read-only", "slave-read-only", true},
		{"a*b*c", "axxbyyc", true},
		{"a*b*c", "axxbyy", false},
		{"[", "x", false},
		{"?", "", false},
		{"**", "", false},
	}
	for _, tc := range cases {
		require.Equal(t, tc.want, MatchString([]byte(tc.pat), tc.s, true), "%s ~ %s", tc.pat, tc.s)
	}
	require.False(t, MatchString([]byte("MAX*"), "maxmemory", false))
}
