package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOrderedSet(t *testing.T) {
	var s orderedSet[string]
	for _, k := range []string{"a", "b", "c", "d"} {
		require.True(t, s.Add(k))
	}
	require.False(t, s.Add("b"))
	require.True(t, s.Remove("a"))
	require.True(t, s.Remove("c"))
	require.False(t, s.Remove("c"))
	require.True(t, s.Add("a"))
	assert.Equal(t, []string{"b", "d", "a"}, s.Keys())
	assert.Equal(t, "a", s.Last())
	for _, k := range s.Keys() {
		s.Remove(k)
	}
	assert.Equal(t, 0, s.Len())
	assert.Nil(t, s.head)
	assert.Nil(t, s.tail)
}
