package keyslot

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestOf(t *testing.T) {
	require.Equal(t, uint16(0x31c3), CRC16([]byte("123456789")), "the cluster specification's check value")
	for _, c := range []struct {
		key  string
		want int
	}{
		{"foo", 12182},
		{"", 0},
		{"{user1000}.following", Of([]byte("user1000"))},
		{"{user1000}.followers", Of([]byte("user1000"))},
		{"foo{}{bar}", int(CRC16([]byte("foo{}{bar}")) & 0x3fff)},
		{"foo{{bar}}zap", Of([]byte("{bar"))},
		{"foo{bar}{zap}", Of([]byte("bar"))},
		{"{", int(CRC16([]byte("{")) & 0x3fff)},
		{"a{b", int(CRC16([]byte("a{b")) & 0x3fff)},
	} {
		require.Equal(t, c.want, Of([]byte(c.key)), "%q", c.key)
		require.Equal(t, c.want, OfString(c.key), "%q as a string", c.key)
	}
}
